"""``workbench run``: one turn with no person at the keyboard.

Plain mode streams the reply's text to stdout and notes tool calls on stderr;
``--jsonl`` prints one JSON object per line for every event, the requests and how
they were answered included, ending with the ``turn_ended`` line that carries the
reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import Any, TextIO

from workbench import jsontext
from workbench.agent.loop import TurnResult
from workbench.errors import ExitCode
from workbench.events import (Event, MessageStarted, Notice, Request, TextDelta, ToolCallEnded,
                              ToolCallStarted)
from workbench.text import safe_stream

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What cancels a headless turn: ctrl+c, or a script's ``kill``."""

STATUS_EXIT = {"done": ExitCode.OK, "error": ExitCode.ERROR, "cancelled": ExitCode.CANCELLED}


class JsonlWriter:
    """Writes events and request records as JSON lines (each unsafe code point in them
    escaped as JSON escapes it: ``workbench.text``)."""

    def __init__(self, out: TextIO) -> None:
        self.out = safe_stream(out)

    def write(self, data: dict[str, Any]) -> None:
        self.out.write(jsontext.dumps(data, ensure_ascii=False) + "\n")
        self.out.flush()

    def event(self, event: Event) -> None:
        self.write(event.to_json())

    def request(self, request: Request, outcome: dict[str, Any]) -> None:
        self.write({"type": "request", "request": request.to_json(), **outcome})


class PlainWriter:
    """Streams the reply to ``out``; tool calls, notices and errors go to ``err``; both
    through ``workbench.text.SafeStream``, so no escape sequence reaches the terminal."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = safe_stream(out)
        self.err = safe_stream(err)
        self.wrote_text = False

    def event(self, event: Event) -> None:
        if isinstance(event, MessageStarted) and self.wrote_text:
            self.out.write("\n\n")
            self.wrote_text = False
        elif isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self.wrote_text = True
        elif isinstance(event, ToolCallStarted):
            self.err.write(f"· {event.tool} {jsontext.dumps(event.arguments, ensure_ascii=False)}\n")
        elif isinstance(event, ToolCallEnded) and not event.ok:
            self.err.write(f"· {event.tool} failed: {event.error.get('message') if event.error else ''}\n")
        elif isinstance(event, Notice):
            self.err.write(f"{event.level}: {event.message}\n")

    def request(self, request: Request, outcome: dict[str, Any]) -> None:
        if "denied" in outcome:
            self.err.write(f"· {request.kind} request denied: {outcome['denied']}\n")

    def finish(self, result: TurnResult) -> None:
        if self.wrote_text:
            self.out.write("\n")
        if result.error:
            self.err.write(f"error: {result.error}\n")


async def run_turn(host, text: str, *, session_id: str | None, writer,
                   wait: bool = True) -> TurnResult:
    """Run one turn on ``host``, feeding every event to ``writer``; SIGINT or SIGTERM
    cancels it (kept in the store as cancelled), even when SIGINT was ignored at start,
    or the wait for a session another process is running a turn in, with ``wait``.

    Raises:
        SessionBusyError: Without ``wait``, another process holds the session.
    """
    unsubscribe = host.bus.subscribe(writer.event)
    loop = asyncio.get_running_loop()
    # Where the loop cannot take signals (not the main thread), the turn runs without them.
    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, host.cancel)
    try:
        host.announce()
        return await host.send_prompt(text, session_id=session_id, wait=wait)
    finally:
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        unsubscribe()


def exit_code(result: TurnResult) -> int:
    return int(STATUS_EXIT.get(result.status, ExitCode.ERROR))


def writer_for(jsonl: bool, out: TextIO = sys.stdout, err: TextIO = sys.stderr):
    return JsonlWriter(out) if jsonl else PlainWriter(out, err)
