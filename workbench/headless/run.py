"""``workbench run``: one turn with no person at the keyboard.

Plain mode streams the reply's text to stdout and notes tool calls on stderr;
``--jsonl`` prints one JSON object per line for every event, the requests and how
they were answered included, ending with the ``turn_ended`` line that carries the
reply.

When the reader of the output goes away (``| head -1``), a writer stops writing and
calls its ``on_closed``: ``run_turn`` then cancels the turn, so it is kept as
``cancelled`` with each of its calls answered, and the command exits with 141
(``workbench.headless.pipes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import Any, TextIO

from workbench import jsontext
from workbench.core.sessions import TurnResult
from workbench.errors import ExitCode
from workbench.events import (DisplayBubble, Event, MessageStarted, Notice, Request, TextDelta,
                              ToolCallEnded, ToolCallStarted)
from workbench.headless.pipes import drop_closed, is_closed_pipe
from workbench.text import safe_stream

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What cancels a headless turn: ctrl+c, or a script's ``kill``."""

STATUS_EXIT = {"done": ExitCode.OK, "error": ExitCode.ERROR, "cancelled": ExitCode.CANCELLED}


class _Output:
    """What both writers share: writes that stop, once, when the reader is gone."""

    closed = False
    """Whether the reader of the output went away; nothing is written after."""

    on_closed: Any = None
    """Called (once, on the thread that wrote) when the reader goes away."""

    def _put(self, stream: TextIO, text: str, flush: bool = False) -> None:
        if self.closed:
            return
        try:
            stream.write(text)
            if flush:
                stream.flush()
        except OSError as exc:
            if not is_closed_pipe(exc):
                raise
            self.closed = True
            drop_closed()
            if self.on_closed is not None:
                self.on_closed()


class JsonlWriter(_Output):
    """Writes events and request records as JSON lines (each unsafe code point in them
    escaped as JSON escapes it: ``workbench.text``)."""

    def __init__(self, out: TextIO) -> None:
        self.out = safe_stream(out)

    def write(self, data: dict[str, Any]) -> None:
        self._put(self.out, jsontext.dumps(data, ensure_ascii=False) + "\n", flush=True)

    def event(self, event: Event) -> None:
        self.write(event.to_json())

    def request(self, request: Request, outcome: dict[str, Any]) -> None:
        self.write({"type": "request", "request": request.to_json(), **outcome})


def _plain_diff(payload: dict[str, Any]) -> str:
    """A diff bubble as a plain unified diff, each line indented under the call's note."""
    import difflib

    before, after = str(payload.get("before") or ""), str(payload.get("after") or "")
    title = str(payload.get("title") or "")
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(),
                                 f"a/{title}" if title else "before",
                                 f"b/{title}" if title else "after", lineterm="")
    return "".join(f"  {line}\n" for line in lines)


class PlainWriter(_Output):
    """Streams the reply to ``out``; tool calls, notices and errors go to ``err``; both
    through ``workbench.text.SafeStream``, so no escape sequence reaches the terminal."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = safe_stream(out)
        self.err = safe_stream(err)
        self.wrote_text = False

    def event(self, event: Event) -> None:
        if isinstance(event, MessageStarted) and self.wrote_text:
            self._put(self.out, "\n\n")
            self.wrote_text = False
        elif isinstance(event, TextDelta):
            self._put(self.out, event.text, flush=True)
            self.wrote_text = True
        elif isinstance(event, ToolCallStarted):
            self._put(self.err, f"· {event.tool} {jsontext.dumps(event.arguments, ensure_ascii=False)}\n")
        elif isinstance(event, ToolCallEnded) and not event.ok:
            self._put(self.err, f"· {event.tool} failed: {event.error.get('message') if event.error else ''}\n")
        elif isinstance(event, Notice):
            self._put(self.err, f"{event.level}: {event.message}\n")
        elif isinstance(event, DisplayBubble) and event.display == "diff":
            self._put(self.err, _plain_diff(event.payload))


    def request(self, request: Request, outcome: dict[str, Any]) -> None:
        if "denied" in outcome:
            self._put(self.err, f"· {request.kind} request denied: {outcome['denied']}\n")

    def finish(self, result: TurnResult) -> None:
        if self.wrote_text:
            self._put(self.out, "\n", flush=True)
        if result.error:
            self._put(self.err, f"error: {result.error}\n", flush=True)


class Refusals:
    """Counts the tool calls of a turn refused a permission (``ToolCallEnded`` with an
    error of kind ``permission``), for ``run``'s exit code 6."""

    def __init__(self) -> None:
        self.tools: list[str] = []

    @property
    def count(self) -> int:
        return len(self.tools)

    def event(self, event: Event) -> None:
        if isinstance(event, ToolCallEnded) and not event.ok and event.error \
                and event.error.get("kind") == "permission":
            self.tools.append(event.tool)

    def describe(self) -> str:
        names = ", ".join(dict.fromkeys(self.tools))
        calls = f"{self.count} tool call{'s' if self.count != 1 else ''}"
        return f"{calls} refused a permission ({names})"


async def run_turn(host, text: str, *, session_id: str | None, writer,
                   wait: bool = True, announce_model: bool = True) -> TurnResult:
    """Run one turn on ``host``, feeding every event to ``writer``; SIGINT or SIGTERM
    cancels it (kept in the store as cancelled), even when SIGINT was ignored at start,
    or the wait for a session another process is running a turn in, with ``wait``.

    Raises:
        SessionBusyError: Without ``wait``, another process holds the session.
    """
    loop = asyncio.get_running_loop()
    stopped = False

    def stop_unread(event: Event | None = None) -> None:
        # Nobody reads the reply any more: stop the turn as ctrl+c would (kept as
        # cancelled, its calls answered), once. Closed before the turn began, it is
        # stopped at its next event.
        nonlocal stopped
        if writer.closed and not stopped:
            stopped = host.chats.cancel()

    writer.on_closed = lambda: loop.call_soon_threadsafe(stop_unread)
    unsubscribe = host.bus.subscribe(writer.event)
    unsubscribe_stop = host.bus.subscribe(stop_unread)
    # Where the loop cannot take signals (not the main thread), the turn runs without them.
    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, host.chats.cancel)
    try:
        host.loading.announce(host.default_model.notice if announce_model else None)
        if writer.closed:
            return TurnResult(session_id or "", "cancelled", "", "the output was closed")
        return await host.chats.send_prompt(text, session_id=session_id, wait=wait)
    finally:
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        unsubscribe()
        unsubscribe_stop()


def exit_code(result: TurnResult, writer: Any = None) -> int:
    """The command's exit code: the turn's status, or 141 when the output was closed."""
    if writer is not None and writer.closed:
        return int(ExitCode.OUTPUT_CLOSED)
    return int(STATUS_EXIT.get(result.status, ExitCode.ERROR))


def writer_for(jsonl: bool, out: TextIO | None = None, err: TextIO | None = None):
    """The writer for a headless turn, on ``out`` and ``err`` (stdout and stderr as they
    are at the call when not given)."""
    out, err = out or sys.stdout, err or sys.stderr
    return JsonlWriter(out) if jsonl else PlainWriter(out, err)
