"""The root typer app; sub-apps register themselves here."""

from __future__ import annotations

import sys

import typer

from workbench import __version__

app = typer.Typer(
    name="workbench",
    help="A terminal workbench for an AI agent and its extensions.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"workbench {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    model: str | None = typer.Option(None, "--model", help="Model to chat with, e.g. scripted:FILE."),
) -> None:
    """Open the workbench TUI (with no subcommand)."""
    if ctx.invoked_subcommand is None:
        from workbench.cli.tui import open_tui

        open_tui(model=model)


def main() -> None:
    """Console-script entry point."""
    from workbench.cli import register
    from workbench.cli.errors import check_arguments, guarded

    register.all_subcommands(app)
    with guarded():
        check_arguments(sys.argv[1:])
        code = app(standalone_mode=True)
    sys.exit(code or 0)
