"""``workbench call`` without typer: its command line read by hand, and the call run.

A call is a command scripts run many times over, and typer (which builds every
parameter with pydantic) costs more than the rest of its start-up. So a command line
of ``call`` that is plainly well formed — ``call TOOL`` with ``--args``/``-a``,
``--grant``/``-g`` (repeatable), ``--grant-all``, ``--json``, ``--jsonl`` and
``--answers``, as separate words or ``--option=value`` — is read here and run by
``run_call``. Any other (help, an unknown or repeated option, a missing value, ``--``,
a root option before ``call``) goes to typer, whose command ``cli/call.py`` runs the
same ``run_call``: its help, errors and exit codes stay typer's own.

This module imports neither typer nor the core at import time.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import jsontext
from workbench.cli.output import say, terminal
from workbench.errors import ExitCode, WorkbenchError

if TYPE_CHECKING:
    from workbench.core.calls import ToolOutcome

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What cancels the call (ctrl+c, or a script's ``kill``), even when the command was
started with SIGINT ignored; a second one ends the command at once."""

KIND_EXIT = {"permission": ExitCode.PERMISSION_DENIED, "cancelled": ExitCode.CANCELLED,
             "invalid_arguments": ExitCode.USAGE, "not_found": ExitCode.USAGE}


@dataclass(frozen=True)
class CallLine:
    """What a ``call`` command line asks for (typer's parameters of ``call_command``)."""

    tool: str
    args: str = "{}"
    grant: tuple[str, ...] = ()
    grant_all: bool = False
    as_json: bool = False
    jsonl: bool = False
    answers: Path | None = None


_VALUED = {"--args": "args", "-a": "args", "--grant": "grant", "-g": "grant", "--answers": "answers"}
_FLAGS = {"--grant-all": "grant_all", "--json": "as_json", "--jsonl": "jsonl"}


def parse(argv: list[str]) -> CallLine | None:
    """The call ``argv`` (the whole command line, ``call`` first) asks for, when it is
    plainly well formed; None for any other, which typer then reads."""
    if not argv or argv[0] != "call":
        return None
    words = iter(argv[1:])
    tool: str | None = None
    values: dict[str, Any] = {}
    grants: list[str] = []
    for word in words:
        if not word.startswith("-"):
            if tool is not None or word == "":
                return None  # a second argument, or an empty one: typer says what it makes of it
            tool = word
            continue
        name, equals, value = word.partition("=") if word.startswith("--") else (word, "", "")
        if name in _FLAGS and not equals:
            values[_FLAGS[name]] = True
            continue
        if name not in _VALUED:
            return None  # help, ``--``, an option unknown here: typer's answer
        if not equals:
            found = next(words, None)
            if found is None or found.startswith("-"):
                return None  # a missing value (or one that looks like an option)
            value = found
        key = _VALUED[name]
        if key == "grant":
            grants.append(value)
        elif key in values or value == "":
            return None  # given twice, or empty: typer's own reading decides
        else:
            values[key] = value
    if tool is None:
        return None
    answers = values.pop("answers", None)
    return CallLine(tool=tool, grant=tuple(grants), answers=Path(answers) if answers else None,
                    **values)


def quick_main(argv: list[str]) -> None:
    """Run the command line ``argv`` here and exit with its code, when it is a plainly
    well-formed ``call`` (``parse``); return, having done nothing, for any other. As
    ``app.main`` does, every error is said in one line, never a traceback."""
    line = parse(argv)
    if line is None:
        return
    import logging

    # The modules of the call load here: a ctrl+c that comes meanwhile waits until each
    # import ends (``workbench.__main__`` holds it), then cancels.
    _import_call_modules()
    from workbench.cli.errors import check_arguments, guarded

    # Warnings logged with no handler set up reach stderr made safe too (their text
    # may quote a tool's words).
    logging.lastResort = logging.StreamHandler(terminal(err=True))
    logging.lastResort.setLevel(logging.WARNING)
    with guarded():
        check_arguments(argv)
        code = run_call(line)
    sys.exit(code)


def _import_call_modules() -> None:
    """Import what ``run_call`` uses (the host, the headless responder and writers)."""
    import workbench.cli.errors
    import workbench.core.calls
    import workbench.core.host
    import workbench.headless.responder
    import workbench.headless.run  # noqa: F401


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


def run_call(line: CallLine) -> int:
    """Call the tool once as ``line`` asks, print its outcome; the exit code (0 when it
    succeeded). Never prompts: a missing permission is an error (exit 3)."""
    from workbench.cli.errors import report
    from workbench.core.calls import CallOptions
    from workbench.core.host import Host
    from workbench.headless.responder import HeadlessResponder, load_answers
    from workbench.headless.run import JsonlWriter

    try:
        arguments = jsontext.loads(line.args, "--args")
        writer = JsonlWriter(terminal()) if line.jsonl else None
        responder = HeadlessResponder("deny", answers=load_answers(line.answers) if line.answers else None,
                                      record=writer.request if writer else None)
        # Extensions load at the call, and MCP servers start only if the tool is theirs.
        with Host.open(responder=responder, defer_extensions=True, one_call=True) as host:
            host.mcp.only_for(line.tool)
            grants = (host.grants.from_flags(line.tool, list(line.grant), line.grant_all)
                      if (line.grant or line.grant_all) else ())
            options = CallOptions(caller="person", grants=grants, prompt=False)
            if writer is not None:
                host.bus.subscribe(writer.event)
            outcome = asyncio.run(_until_stopped(host.tools.call(line.tool, arguments, options), writer))
    except WorkbenchError as exc:
        return report(exc)
    error = outcome.error or {}  # a failed outcome always carries its error
    if writer is not None:
        writer.write({"type": "outcome", **outcome.to_json()})
        if writer.closed:
            return int(ExitCode.OUTPUT_CLOSED)
    elif line.as_json:
        say(jsontext.dumps(outcome.to_json(), ensure_ascii=False))
    elif outcome.ok:
        result = outcome.result
        say(result if isinstance(result, str) else jsontext.dumps(result, indent=2, ensure_ascii=False))
    else:
        say(f"error ({error.get('kind')}): {error.get('message')}", err=True)
    if not outcome.ok:
        return int(KIND_EXIT.get(str(error.get("kind")), ExitCode.ERROR))
    return 0
