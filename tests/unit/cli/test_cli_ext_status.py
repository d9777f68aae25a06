"""``workbench ext status`` and ``ext enable|disable`` as a script and a person meet them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commands import workbench


def _extension(folder: Path, name: str, tools: list[str], *, version: str = "1.0.0") -> Path:
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps({
        "name": name, "displayName": name.title(), "description": "A test extension.",
        "entry": "main.py",
        "tools": [{"name": tool, "description": f"Do {tool}. Use when asked.",
                   "parameters": {"type": "object", "properties": {}}, "function": tool,
                   "permissions": {"net": [{"host": "example.com", "ports": [443],
                                            "reason": f"Fetch what {tool} needs."}]}}
                  for tool in tools]}))
    (folder / "main.py").write_text("".join(f"def {tool}(args, ctx):\n    return {{}}\n\n"
                                            for tool in tools))
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version}))
    return folder


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """``alpha`` and ``beta`` both define ``shared_tool``; ``gamma`` is installed, then its
    manifest is corrupted. Returns the extensions folder of the home."""
    for name, tools, version in (("alpha", ["shared_tool", "alpha_only"], "1.2.0"),
                                 ("beta", ["shared_tool"], "0.3.0"),
                                 ("gamma", ["gamma_tool"], "1.0.0")):
        done = workbench("ext", "install", str(_extension(tmp_path / "src" / name, name, tools,
                                                          version=version)), "--yes")
        assert done.returncode == 0, done.stderr
    extensions = Path(os.environ["WORKBENCH_HOME"]) / "extensions"
    (extensions / "gamma" / "loca.json").write_text('{"name": "gamma", "tools": 3}')
    return extensions


def test_status_json_reports_the_conflict_and_the_broken_extension(installed: Path) -> None:
    done = workbench("ext", "status", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    loaded = {e["name"]: e for e in report["extensions"]}
    assert list(loaded) == ["alpha", "beta", "builtin"]  # in the order they loaded: by name
    assert [(loaded[n]["version"], loaded[n]["source"]) for n in ("alpha", "beta")] == [
        ("1.2.0", "extension"), ("0.3.0", "extension")]
    assert loaded["builtin"]["source"] == "builtin"
    assert report["tool_conflicts"]["conflicts"] == [{
        "tool_name": "shared_tool", "winner": {"source": "extension", "extension": "alpha"},
        "shadowed": [{"source": "extension", "extension": "beta"}]}]
    assert report["tool_conflicts"]["shadowed_count"] == 1
    assert report["tool_conflicts"]["extension_count"] == 2  # alpha's two; beta's is shadowed
    assert report["load_errors"] == [{
        "extension": "gamma", "source_path": str(installed / "gamma"), "state": "broken",
        "error_message": "invalid manifest: /displayName: missing required field 'displayName' "
                         "(line 1, column 1) (and 2 more)"}]
    assert (report["total_loaded"], report["total_errors"]) == (3, 1)
    alpha = loaded["alpha"]
    assert alpha["source_path"] == str(installed / "alpha")
    assert alpha["capabilities"]["permissions"][0] == {
        "tool": "alpha_only", "kind": "net", "value": "example.com:443",
        "reason": "Fetch what alpha_only needs.", "optional": False}
    assert alpha["config_schema"] is None and alpha["capabilities"]["hooks"] == []


def test_status_for_a_person(installed: Path) -> None:
    done = workbench("ext", "status")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Extensions loaded: 3"
    assert any(line.split() == ["alpha", "1.2.0", "2", "tools"] for line in lines)
    assert any(line.split() == ["beta", "0.3.0", "1", "tool"] for line in lines)
    assert "Load errors: 1" in lines
    assert f"  gamma  broken  {installed / 'gamma'}" in lines
    assert "Conflicts: 1" in lines
    assert "  shared_tool: alpha (extension) wins; shadowed: beta (extension)" in lines
    # Loaded, then errors, then conflicts, then counts.
    order = [lines.index("Load errors: 1"), lines.index("Conflicts: 1"),
             next(i for i, line in enumerate(lines) if line.startswith("Tools offered: "))]
    assert order == sorted(order)
    assert "net example.com:443" not in done.stdout

    detailed = workbench("ext", "status", "--details")
    assert detailed.returncode == 0, detailed.stderr
    assert "      tool alpha_only — Do alpha_only. Use when asked." in detailed.stdout
    assert "        net example.com:443: Fetch what alpha_only needs." in detailed.stdout
    assert ("      tool shared_tool — Do shared_tool. Use when asked.  [not offered: shadowed "
            "or not for this system]") in detailed.stdout


def test_disable_and_enable_an_extension_everywhere(installed: Path) -> None:
    done = workbench("ext", "disable", "alpha")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Disabled alpha: its tools are not offered")
    report = json.loads(workbench("ext", "status", "--json").stdout)
    assert "alpha" not in [e["name"] for e in report["extensions"]]
    assert report["disabled"] == ["alpha"] and report["tool_conflicts"]["conflicts"] == []
    listed = {e["name"]: e for e in json.loads(workbench("ext", "list", "--json").stdout)}
    assert listed["alpha"]["enabled"] is False
    assert workbench("ext", "disable", "alpha").stdout == "alpha is already disabled\n"

    done = workbench("ext", "enable", "alpha")
    assert done.returncode == 0 and done.stdout.startswith("Enabled alpha")
    report = json.loads(workbench("ext", "status", "--json").stdout)
    assert "alpha" in [e["name"] for e in report["extensions"]] and report["disabled"] == []


def test_enable_of_an_unknown_extension_is_an_error() -> None:
    done = workbench("ext", "enable", "nope")
    assert done.returncode == 1
    assert done.stderr.strip().endswith("error: nope is not installed")
