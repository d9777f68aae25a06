"""Every command prints through ``workbench.cli.output`` (which makes outside text inert),
never straight to a stream: a new command gets it by default, and this test says so
when one does not."""

from __future__ import annotations

import ast
from pathlib import Path

import workbench

ROOT = Path(workbench.__file__).parent
CHECKED = sorted([*ROOT.joinpath("cli").glob("*.py"), *ROOT.joinpath("headless").glob("*.py")])
ALLOWED = {ROOT / "cli" / "output.py"}


def _direct_writes(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = ast.unparse(func)
        if name in ("typer.confirm", "typer.prompt", "click.confirm", "click.prompt") and not (
                node.args and ast.unparse(node.args[0]).startswith("visible(")):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}(…) without visible(…)")
        elif name in ("print", "typer.echo", "click.echo", "typer.secho", "click.secho",
                    "sys.stdout.write", "sys.stderr.write", "sys.__stdout__.write",
                    "sys.__stderr__.write", "os.write"):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}(…)")
        elif name.startswith(("rich.", "Console(")) or name == "Console":
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}(…)")
    return found


def test_the_cli_and_the_headless_writers_print_only_through_the_safe_helpers():
    assert CHECKED, "no module found to check"
    offenders = [hit for path in CHECKED if path not in ALLOWED for hit in _direct_writes(path)]
    assert offenders == [], "print with workbench.cli.output.say (or write to its terminal()):\n" + \
        "\n".join(offenders)


def test_the_check_finds_a_direct_write(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import sys, typer\ntyper.echo('x')\nsys.stderr.write('y')\nprint(1)\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert len(_direct_writes(sample)) == 3
    finally:
        ROOT = saved
