"""``plugin.json``: JSON with comments and trailing commas, every field checked, every
problem named with its line and field, hostile text refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.errors import WorkbenchError
from workbench.plugins.manifest import PluginManifestError, parse, read

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "echo"

BASE = {"id": "echo", "name": "Echo", "version": "0.1.0", "api": "1", "capabilities": [],
        "tools": [{"name": "echo", "description": "Echoes", "input_schema": {"type": "object"}}],
        "run": {"command": ["python3", "server.py"]}}


def problems(**changes: object) -> list[str]:
    data = {**BASE, **changes}
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(PluginManifestError) as caught:
        parse(json.dumps(data, indent=2), "p/plugin.json")
    return caught.value.problems


def test_the_example_reads_with_its_comments_and_trailing_commas() -> None:
    manifest = read(EXAMPLE)
    assert manifest.id == "echo" and [t.name for t in manifest.tools] == ["echo", "score"]
    assert manifest.tool("score").output_schema["required"] == ["score"]
    assert manifest.run_command == ("python3", "server.py") and manifest.runnable is None
    assert manifest.settings["count"]["default"] == 1


def test_a_problem_names_its_line_and_field() -> None:
    text = '{\n  "id": "echo",\n  "name": "Echo",\n  "version": "1",\n  "api": "1", // the contract\n}\n'
    with pytest.raises(PluginManifestError) as caught:
        parse(text, "p/plugin.json")
    assert caught.value.problems == ["line 4: /version: must be a version such as 0.1.0"]
    assert caught.value.where == "p/plugin.json"


def test_every_problem_is_reported_at_once() -> None:
    found = problems(id="Echo!", api="2", unknown=1)
    assert any("/id: 'Echo!' does not match" in p for p in found)
    assert any("/api: must be \"1\"" in p for p in found)
    assert any("/unknown: is not a field of plugin.json" in p for p in found)


def test_text_that_is_not_json_names_line_and_column() -> None:
    with pytest.raises(WorkbenchError) as caught:
        parse('{\n  "id": "echo",\n  "name": oops\n}', "p/plugin.json")
    assert caught.value.where == "p/plugin.json:3:11"
    with pytest.raises(WorkbenchError, match="given twice"):
        parse('{"id": "a", "id": "b"}', "p/plugin.json")
    with pytest.raises(WorkbenchError, match="never closed"):
        parse('{"id": "a" /* no end', "p/plugin.json")


@pytest.mark.parametrize("name", ["Ech\u202eo", "ec\u200bho", "echo\x1b[2J", "x" * 65])
def test_hostile_names_are_refused(name: str) -> None:
    found = problems(name=name)
    assert len(found) == 1 and found[0].startswith("line 3: /name:")


@pytest.mark.parametrize("plugin_id", ["../up", "e", "a" * 33, "ech\u0430", "Echo"])
def test_hostile_ids_are_refused(plugin_id: str) -> None:
    assert any(p.startswith("line 2: /id:") for p in problems(id=plugin_id))


@pytest.mark.parametrize("entry", ["../../etc/passwd", "/etc/passwd", "ui/../../x.html", "main.html"])
def test_ui_paths_stay_under_ui(entry: str) -> None:
    found = problems(capabilities=["ui.panel"], ui={"panels": [{"id": "main", "label": "M", "entry": entry}]})
    assert any("/ui/panels/0/entry: must be a path under ui/" in p for p in found)


def test_optional_parts_need_their_capability() -> None:
    found = problems(actions=[{"id": "daily", "default_schedule": {"type": "cron", "schedule": "0 9 * * *"}}],
                     events=["message.created"], live={"control": ["x"]},
                     ui={"cards": [{"id": "c", "entry": "ui/c.html"}]})
    needed = sorted(p.split("needs ")[1] for p in found if "needs" in p)
    assert needed == ["'events.subscribe' in capabilities", "'live.control' in capabilities",
                      "'schedule' in capabilities", "'ui.notification.card' in capabilities"]


def test_settings_defaults_are_checked_against_their_schema() -> None:
    found = problems(settings={"count": {"type": "integer", "minimum": 1, "default": 0},
                               "mode": {"type": "string", "enum": ["a"], "format": "x"},
                               "weird": {"type": "date"}})
    assert any("/settings/count/default: does not match its own schema" in p for p in found)
    assert any("/settings/mode/format: is not a setting keyword" in p for p in found)
    assert any("/settings/weird/type: must be one of" in p for p in found)


def test_tool_schemas_are_json_schemas_of_objects() -> None:
    found = problems(tools=[{"name": "a", "description": "d", "input_schema": {"type": "string"}},
                            {"name": "a", "description": "d", "input_schema": {"type": "object"},
                             "output_schema": {"type": "object", "properties": 3}}])
    assert any("/tools/0/input_schema/type: must be \"object\"" in p for p in found)
    assert any("/tools/1/name: 'a' is given twice" in p for p in found)
    assert any("/tools/1/output_schema: not a valid JSON Schema" in p for p in found)


def test_a_gate_may_only_allow_or_deny() -> None:
    found = problems(gate={"files": [{"paths": ["/data/**"], "operations": ["delete"], "decision": "approve"}]})
    assert any("approve is refused at install" in p for p in found)


def test_composer_switches_are_bounded() -> None:
    switches = [{"id": f"s{i}", "label": "L" * 25, "icon": "ui/s.svg"} for i in range(5)]
    found = problems(capabilities=["ui.composer_switch"], ui={"composer_switches": switches})
    assert any("holds 5 switches; at most 4" in p for p in found)
    assert any("/label: is 25 characters long; at most 24" in p for p in found)


def test_a_container_plugin_reads_but_cannot_run_here() -> None:
    manifest = parse(json.dumps({k: v for k, v in BASE.items() if k != "run"}), "p/plugin.json")
    assert manifest.run_command is None and "container" in manifest.runnable


def test_a_huge_manifest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plugin.json").write_text(json.dumps({**BASE, "description": "x" * 300_000}))
    with pytest.raises(WorkbenchError, match="larger than"):
        read(tmp_path)


def test_the_runtime_says_why_no_container_engine_runs(tmp_path: Path, monkeypatch) -> None:
    from workbench.plugins import engines

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    podman = bin_dir / "podman"
    podman.write_text("#!/bin/sh\necho 'Error: crun: cgroups in hybrid mode not supported' >&2\nexit 126\n")
    podman.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    engines.engine_status.cache_clear()
    try:
        note = engines.runtime_note()
    finally:
        engines.engine_status.cache_clear()
    assert note.startswith("plugins run as sandboxed processes: podman cannot start a container here")
    assert "hybrid mode" in note
