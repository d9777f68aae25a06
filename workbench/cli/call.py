"""``workbench call``: one tool call from a script, with grants given on the command line."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from workbench import jsontext
from workbench.cli.errors import reported
from workbench.cli.output import say, terminal
from workbench.errors import ExitCode

if TYPE_CHECKING:
    from workbench.core.calls import ToolOutcome

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What cancels the call (ctrl+c, or a script's ``kill``), even when the command was
started with SIGINT ignored; a second one ends the command at once."""


async def _until_stopped(call: Coroutine[Any, Any, ToolOutcome], writer: Any = None) -> ToolOutcome:
    """Await ``call``; a stop signal cancels it (the tool is stopped and its record says
    so) and the outcome is then a ``cancelled`` error, printed like any other. So does
    the reader of ``writer``'s output going away (``| head``)."""
    from workbench.core.calls import ToolOutcome

    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(call)
    stopped: list[signal.Signals] = []
    if writer is not None:
        writer.on_closed = lambda: loop.call_soon_threadsafe(task.cancel)

    def restore() -> None:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)

    def stop(signum: signal.Signals) -> None:
        stopped.append(signum)
        restore()
        task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await task
    except asyncio.CancelledError:
        if writer is not None and writer.closed:
            return ToolOutcome("", "", False, error={
                "kind": "cancelled", "message": "the call was cancelled (its output was closed)"})
        if not stopped:
            raise
        return ToolOutcome("", "", False, error={
            "kind": "cancelled", "message": f"the call was cancelled ({stopped[0].name})"})
    finally:
        if not stopped:
            restore()


KIND_EXIT = {"permission": ExitCode.PERMISSION_DENIED, "cancelled": ExitCode.CANCELLED,
             "invalid_arguments": ExitCode.USAGE, "not_found": ExitCode.USAGE}


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
    from workbench.core.calls import CallOptions
    from workbench.core.host import Host
    from workbench.headless.responder import HeadlessResponder, load_answers
    from workbench.headless.run import JsonlWriter

    with reported():
        arguments = jsontext.loads(args, "--args")
        writer = JsonlWriter(terminal()) if jsonl else None
        responder = HeadlessResponder("deny", answers=load_answers(answers) if answers else None,
                                      record=writer.request if writer else None)
        # Extensions load at the call, and MCP servers start only if the tool is theirs.
        with Host.open(responder=responder, defer_extensions=True) as host:
            host.mcp.only_for(tool)
            grants = host.grants.from_flags(tool, grant, grant_all) if (grant or grant_all) else ()
            options = CallOptions(caller="person", grants=grants, prompt=False)
            if writer is not None:
                host.bus.subscribe(writer.event)
            outcome = asyncio.run(_until_stopped(host.tools.call(tool, arguments, options), writer))
    if writer is not None:
        writer.write({"type": "outcome", **outcome.to_json()})
        if writer.closed:
            raise typer.Exit(int(ExitCode.OUTPUT_CLOSED))
    elif as_json:
        say(jsontext.dumps(outcome.to_json(), ensure_ascii=False))
    elif outcome.ok:
        result = outcome.result
        say(result if isinstance(result, str) else jsontext.dumps(result, indent=2, ensure_ascii=False))
    else:
        say(f"error ({outcome.error['kind']}): {outcome.error['message']}", err=True)
    if not outcome.ok:
        raise typer.Exit(int(KIND_EXIT.get(outcome.error["kind"], ExitCode.ERROR)))
