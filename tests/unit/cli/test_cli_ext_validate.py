"""`workbench ext validate`: human and JSON output, and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from commands import workbench

from workbench.cli.ext import ext_app

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "extensions"
WORDCOUNT = FIXTURES / "wordcount-ts"
BROKEN = FIXTURES / "broken"


@pytest.fixture
def app() -> typer.Typer:
    root = typer.Typer()

    @root.callback()
    def main() -> None:
        """The root, as `workbench` has it."""

    root.add_typer(ext_app, name="ext")
    return root


def run(app: typer.Typer, *args: str):
    return CliRunner().invoke(app, ["ext", "validate", *args])


def test_valid_extension(app: typer.Typer) -> None:
    result = run(app, str(WORDCOUNT))
    assert result.exit_code == 0, result.output
    assert result.output == f"{WORDCOUNT / 'loca.json'}: valid (0 errors, 0 warnings)\n"


def test_invalid_extension_lists_errors_and_warnings(app: typer.Typer) -> None:
    result = run(app, str(BROKEN))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == "error: /color: unknown field 'color' (line 5, column 3)"
    assert lines[1].startswith("error: /tools/0/name: ")
    assert sum(line.startswith("error: ") for line in lines) == 18
    assert lines[-2].startswith("warning: /tools/1/trigers: unknown field 'trigers' is ignored")
    assert lines[-1] == f"{BROKEN / 'loca.json'}: invalid (18 errors, 1 warning)"


def test_error_without_a_position_has_no_line(app: typer.Typer, tmp_path: Path) -> None:
    (tmp_path / "loca.json").write_text(json.dumps({
        "name": "x", "displayName": "X", "description": "d",
        "tools": [{"name": "t", "description": "d", "parameters": {"type": "object"},
                   "function": "t"}]}))
    result = run(app, str(tmp_path))
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "error: the extension has tools but no entry module: looked for "
        "index.ts, index.js, mod.ts, main.py")


def test_warnings_alone_keep_it_valid(app: typer.Typer, tmp_path: Path) -> None:
    (tmp_path / "loca.json").write_text(json.dumps({
        "name": "x", "displayName": "X", "description": "d",
        "tools": [{"name": "wordCount", "description": "d", "parameters": {"type": "object"},
                   "function": "wordCount"}]}, indent=2))
    (tmp_path / "index.ts").write_text("export function wordCount() {}\n")
    result = run(app, str(tmp_path / "loca.json"))
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "warning: /tools/0/name: the tool name 'wordCount' is not snake_case (lowercase "
        "letters, digits and '_', starting with a letter) (line 7, column 7)",
        f"{tmp_path / 'loca.json'}: valid (0 errors, 1 warning)",
    ]


def test_json_output_is_exactly_the_report(app: typer.Typer) -> None:
    from workbench.manifest.validate import validate_extension

    result = run(app, str(BROKEN), "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data == validate_extension(BROKEN).to_json()
    assert set(data) == {"valid", "errors", "warnings"}
    assert data["errors"][0] == {"pointer": "/color", "message": "unknown field 'color'",
                                 "line": 5, "column": 3}

    valid = run(app, str(WORDCOUNT), "--json")
    assert valid.exit_code == 0
    assert json.loads(valid.output) == {"valid": True, "errors": [], "warnings": []}


def test_missing_path_is_a_usage_error(app: typer.Typer, tmp_path: Path) -> None:
    result = run(app, str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_module_stays_light_at_import() -> None:
    code = ("import sys, workbench.cli.ext; "
            "print(any(m.startswith(('workbench.manifest', 'pydantic', 'jsonschema')) "
            "for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_through_the_workbench_command(tmp_path: Path) -> None:
    ok = workbench("ext", "validate", str(WORDCOUNT))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.endswith("valid (0 errors, 0 warnings)\n")
    bad = workbench("ext", "validate", str(BROKEN), "--json")
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["valid"] is False
    missing = workbench("ext", "validate", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert "does not exist" in missing.stderr
