"""The root typer app; sub-apps register themselves here."""

from __future__ import annotations

import sys

import typer

from workbench import __version__
from workbench.cli.output import say

app = typer.Typer(
    name="workbench",
    help="A terminal workbench for an AI agent and its extensions.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        say(f"workbench {__version__}")
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


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the command ``argv`` (``sys.argv[1:]`` when not
    given) and exit with its code, every error said in one line, never a traceback."""
    import logging

    from workbench.cli.errors import check_arguments, guarded

    from workbench.cli import register
    from workbench.cli.output import terminal

    # Warnings logged with no handler set up reach stderr made safe too (their text
    # may quote a tool's or a server's words).
    logging.lastResort = logging.StreamHandler(terminal(err=True))
    logging.lastResort.setLevel(logging.WARNING)
    args = sys.argv[1:] if argv is None else list(argv)
    register.for_arguments(app, args)
    with guarded():
        check_arguments(args)
        try:
            code = app(args=args, prog_name="workbench", standalone_mode=True)
        except SystemExit as exc:
            # typer ends a command that ctrl+c interrupted with exit 130 and nothing
            # said; it is a cancellation, which the entry point answers (exit 4).
            if isinstance(getattr(exc.__context__, "__cause__", None), KeyboardInterrupt):
                raise KeyboardInterrupt from None
            raise
    sys.exit(code or 0)
