"""``workbench bundle list|validate|create|inspect|call``: the same service as the tools,
for a person or a script (``--json``), with a clear error and no traceback on bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from commands import workbench
from bundle_samples import COUNT, MCP, SKILL


@pytest.fixture
def project(tmp_path: Path, home) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    for name, bundle in (("count.json", COUNT), ("mcp.json", MCP), ("skill.json", SKILL)):
        (folder / name).write_text(json.dumps(bundle))
    return folder


def ok(*args: str, cwd: Path) -> dict | list:
    done = workbench("bundle", *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("runtime", ["node", "deno"])
def test_a_person_validates_creates_lists_inspects_and_calls(project: Path, runtime: str):
    valid = ok("validate", "count.json", cwd=project)
    assert valid["written"] is False and not (project / ".workbench").exists()
    made = ok("create", "count.json", cwd=project)
    assert made["digest"] == valid["digest"] and made["created"]
    assert [row["id"] for row in ok("list", cwd=project)] == ["count-entries"]
    answer = ok("call", "count-entries", made["digest"], "--input", '{"x": 1, "y": 2}', "--runtime", runtime, cwd=project)
    assert (answer["result"], answer["runtime"]) == ({"count": 2}, runtime)
    mcp = ok("create", "mcp.json", cwd=project)
    tools = ok("inspect", "shout", mcp["digest"], "--runtime", runtime, cwd=project)["tools"]
    assert [t["name"] for t in tools] == ["shout"]
    shouted = ok("call", "shout", mcp["digest"], "--tool", "shout", "--input", '{"text": "hi"}',
                 "--runtime", runtime, cwd=project)
    assert shouted["result"]["content"][0]["text"] == "HI"


def test_a_skill_prints_its_text_and_a_plain_list_its_rows(project: Path):
    skill = ok("create", "skill.json", cwd=project)
    done = workbench("bundle", "call", "release-notes", skill["digest"], cwd=project)
    assert done.returncode == 0 and done.stdout.startswith("# Release notes") and "--- style.md" in done.stdout
    listed = workbench("bundle", "list", cwd=project)
    assert "release-notes" in listed.stdout and skill["digest"] in listed.stdout and "ok" in listed.stdout


def test_bad_input_is_one_clear_line_and_no_traceback(project: Path):
    (project / "bad.json").write_text(json.dumps({**COUNT, "files": {"../x.mjs": "1"}}))
    done = workbench("bundle", "validate", "bad.json", cwd=project)
    assert done.returncode != 0 and "files['../x.mjs']" in done.stderr
    (project / "notjson.json").write_text("{")
    done = workbench("bundle", "create", "notjson.json", cwd=project)
    assert done.returncode != 0 and "notjson.json" in done.stderr
    made = ok("create", "count.json", cwd=project)
    entry = project / ".workbench" / "bundles" / "count-entries" / made["digest"] / "files" / "index.mjs"
    os.chmod(entry, 0o644)
    entry.write_text("export const run = () => 0")
    done = workbench("bundle", "call", "count-entries", made["digest"], "--input", "{}", cwd=project)
    assert done.returncode != 0 and "no longer match its digest" in done.stderr
    done = workbench("bundle", "call", "count-entries", made["digest"], "--input", "{", cwd=project)
    assert done.returncode != 0 and "--input" in done.stderr
