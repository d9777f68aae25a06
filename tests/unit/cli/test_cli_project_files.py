"""The built-in file tools from the command line, in a project folder under /tmp outside
the home, as a script meets them: ``workbench call`` and ``workbench run``, real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HOSTILE = "hello \x1b[31mred\x1b]0;owned\x07 \u202egnp.exe\n"


def workbench(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=120)


@pytest.fixture
def project(tmp_path_factory, tmp_path):
    folder = tmp_path_factory.mktemp("srv-app")
    assert not str(folder).startswith(os.environ["HOME"])  # outside the home
    (folder / "README.md").write_text("# app\nhello\n")
    return folder


def test_read_file_reads_the_project_with_the_grant_it_names(project):
    done = workbench("call", "read_file", "-a", '{"path": "README.md"}', "--grant", f"read:{project}",
                     "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["content"] == "# app\nhello\n"
    dot = workbench("call", "read_file", "-a", '{"path": "README.md"}', "--grant", "read:.", cwd=project)
    assert dot.returncode == 0, dot.stderr


def test_without_the_grant_it_says_the_exact_words(project):
    done = workbench("call", "read_file", "-a", '{"path": "README.md"}', cwd=project)
    assert done.returncode == 3
    assert f"read this project ({project})" in done.stderr
    assert f"--grant read:{project}" in done.stderr


def test_a_path_outside_says_how_to_grant_it(project):
    done = workbench("call", "read_file", "-a", '{"path": "/etc/hostname"}', "--grant", "read",
                     cwd=project)
    assert done.returncode == 3
    assert f"outside this project ({project})" in done.stderr
    assert "--grant read:/etc" in done.stderr and "cd /etc && workbench" in done.stderr


def test_an_edit_is_a_diff_event_with_outside_text_made_safe(project, tmp_path):
    (project / "notes.txt").write_text(HOSTILE)
    answers = tmp_path / "answers.json"
    answers.write_text('[["accept"]]')
    done = workbench("call", "edit_file", "-a", json.dumps({"path": "notes.txt", "old_text": "hello",
                                                            "new_text": "bye"}),
                     "--grant-all", "--jsonl", "--answers", str(answers), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    [asked] = [e for e in lines if e["type"] == "request"]
    assert asked["request"]["questions"][0]["kind"] == "diff" and asked["answer"] == ["accept"]
    [bubble] = [e for e in lines if e["type"] == "display"]
    assert bubble["display"] == "diff" and bubble["payload"]["after"] == HOSTILE.replace("hello", "bye")
    assert (project / "notes.txt").read_text() == HOSTILE.replace("hello", "bye")


def test_a_headless_edit_is_refused_unless_accepted(project):
    done = workbench("call", "edit_file", "-a", '{"path": "README.md", "content": "gone"}',
                     "--grant-all", cwd=project)
    assert done.returncode != 0 and "tools.review_writes" in done.stderr
    assert (project / "README.md").read_text() == "# app\nhello\n"


def test_run_reads_and_edits_the_project_showing_the_diff_plainly(project, tmp_path):
    (project / "notes.txt").write_text(HOSTILE)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "hello",
                                                             "new_text": "bye"}}]},
        {"text": "Done."}]))
    config = tmp_path / "home" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text('[headless]\nallowlist = ["read_file", "edit_file"]\n')
    answers = tmp_path / "answers.json"
    answers.write_text('[["accept"]]')
    done = workbench("run", "--model", f"scripted:{script}", "--approvals", "allowlisted",
                     "--answers", str(answers), "tidy the notes", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    assert "  +bye" in done.stderr and "  -hello" in done.stderr and "a/notes.txt" in done.stderr
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr and "\\u001b" in done.stderr
    assert (project / "notes.txt").read_text() == HOSTILE.replace("hello", "bye")
