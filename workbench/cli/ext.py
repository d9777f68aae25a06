"""`workbench ext …`: install, inspect and validate extensions.

The manifest package is imported inside each command, so that loading this module
(which every `workbench` invocation does) costs no more than typer.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from workbench.errors import ExitCode

ext_app = typer.Typer(help="Install, inspect and validate extensions.", no_args_is_help=True)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


@ext_app.command("validate")
def validate(
    path: Path = typer.Argument(..., metavar="PATH",
                               help="The extension folder, or its loca.json."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Check an extension's manifest and files without running any of its code.

    Exits 0 when the extension is valid, 1 when it has errors, 2 when PATH does not exist.
    """
    if not path.exists():
        typer.echo(f"workbench ext validate: {path} does not exist", err=True)
        raise typer.Exit(ExitCode.USAGE)
    from workbench.manifest.validate import find_manifest, validate_extension

    report = validate_extension(path)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        for problem in report.errors:
            typer.echo(f"error: {problem.describe()}")
        for problem in report.warnings:
            typer.echo(f"warning: {problem.describe()}")
        shown = find_manifest(path) or path
        counts = f"{_plural(len(report.errors), 'error')}, {_plural(len(report.warnings), 'warning')}"
        verdict = "valid" if report.valid else "invalid"
        typer.echo(f"{shown}: {verdict} ({counts})")
    raise typer.Exit(ExitCode.OK if report.valid else ExitCode.ERROR)
