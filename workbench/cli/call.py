"""``workbench call``: one tool call from a script, with grants given on the command line.

This is the command as typer reads it (its help, and any command line ``calling.parse``
leaves to typer); the call itself is ``calling.run_call``, which a plainly well-formed
command line reaches without typer.
"""

from __future__ import annotations

from pathlib import Path

import typer

from workbench.cli.calling import KIND_EXIT, STOP_SIGNALS, CallLine, _until_stopped, run_call

__all__ = ["KIND_EXIT", "STOP_SIGNALS", "_until_stopped", "call_command"]


def call_command(
    tool: str = typer.Argument(..., help="A tool's name, or EXTENSION.TOOL for a shadowed one."),
    args: str = typer.Option("{}", "--args", "-a", help="The arguments as a JSON object."),
    grant: list[str] = typer.Option([], "--grant", "-g", metavar="KIND[:VALUE]",
                                    help="Grant a declared permission, optional ones too, for this "
                                    "call (repeatable)."),
    grant_all: bool = typer.Option(False, "--grant-all", help="Grant every permission the tool declares, "
                                   "optional ones too."),
    as_json: bool = typer.Option(False, "--json", help="Print {ok, result} or {ok, error} as JSON."),
    jsonl: bool = typer.Option(False, "--jsonl", help="Print every event (progress, logs, bubbles) "
                               "as a JSON line, then the outcome as the last line."),
    answers: Path | None = typer.Option(None, "--answers",
                                        help="A JSON file answering the tool's ask-user forms, in order."),
) -> None:
    """Call TOOL once; never prompts: a missing permission is an error (exit 3), and
    optional ones not granted are left out."""
    code = run_call(CallLine(tool=tool, args=args, grant=tuple(grant), grant_all=grant_all,
                             as_json=as_json, jsonl=jsonl, answers=answers))
    if code:
        raise typer.Exit(code)
