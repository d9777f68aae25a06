"""The ``ctx`` a Python tool receives when it runs in the host's own process.

It carries the members of the Loca toolkit that need no sandbox bridge: progress,
logs, cancellation, the chat context, display bubbles and ask-user forms. Each call
reports through ``sink``, a callable the gateway provides, so this module knows
nothing of events or front-ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workbench.errors import ToolError

Sink = Callable[[str, dict[str, Any]], None]
Asker = Callable[[list[dict[str, Any]]], Awaitable[list[Any]]]
Authorizer = Callable[[str, str], Awaitable[None]]
"""``(kind, value)``: returns when the capability is granted, raises ``ToolError`` when not."""


async def _refuse(kind: str, value: str) -> None:
    from workbench.errors import ToolError

    raise ToolError("permission", f"{kind} is not available to this call")

LOG_LEVELS = ("debug", "info", "warn", "error")


class ReplyStream(Protocol):
    """Where a model provider's answer goes while its function, a generator, yields it."""

    def open(self) -> None:
        """The function is a generator: its answer comes in pieces."""

    def piece(self, item: Any) -> None:
        """One item it yielded; raise ``ToolError`` to refuse it, which ends the call."""


class NoStream:
    """The ``stream`` of a call that may not stream its answer (a tool's, or a provider's
    other than a model's): the first piece refuses the call.

    Args:
        who: What the function serves (``the tool notes.find``).
        function: The function's name.
        returned: What it should return instead (``the result``).
    """

    def __init__(self, who: str, function: str | None, returned: str = "the result") -> None:
        self.who = who
        self.function = function
        self.returned = returned

    def refusal(self) -> ToolError:
        from workbench.errors import ToolError

        return ToolError("tool", f"{self.who} is a generator (its function {self.function} "
                         "yields), but only a model provider may stream its answer: return "
                         f"{self.returned} instead")

    def open(self) -> None:
        raise self.refusal()

    def piece(self, item: Any) -> None:
        raise self.refusal()


_EVENTS_LOCK = threading.Lock()
"""Guards the making of a ``Signal``'s event against an ``abort`` from another thread."""


class Signal:
    """A cancellation signal a tool can poll (``aborted``) or wait on."""

    def __init__(self) -> None:
        self._event: threading.Event | None = None
        """Made when a thread first waits on it (most calls never do)."""
        self._aborted = False
        self.reason: str | None = None
        self._lock = _EVENTS_LOCK

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def event(self) -> threading.Event:
        """Set when the call is cancelled (for a thread to wait on)."""
        with self._lock:
            if self._event is None:
                self._event = threading.Event()
                if self._aborted:
                    self._event.set()
            return self._event

    def abort(self, reason: str = "cancelled") -> None:
        self.reason = reason
        with self._lock:
            self._aborted = True
            if self._event is not None:
                self._event.set()

    def throw_if_aborted(self) -> None:
        """Raise ``asyncio.CancelledError`` when the call was cancelled."""
        if self.aborted:
            raise asyncio.CancelledError(self.reason)


class Display:
    """One-way bubbles: markdown, image, table and diff."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink

    def markdown(self, text: str) -> None:
        self._sink("display", {"display": "markdown", "payload": {"text": str(text)}})

    def image(self, data_b64: str, mime: str, alt: str | None = None) -> None:
        self._sink("display", {"display": "image",
                               "payload": {"dataB64": data_b64, "mime": mime, "alt": alt}})

    def table(self, columns: list[str], rows: list[list[str]]) -> None:
        self._sink("display", {"display": "table",
                               "payload": {"columns": list(columns), "rows": [list(r) for r in rows]}})

    def diff(self, before: str, after: str, title: str | None = None) -> None:
        self._sink("display", {"display": "diff",
                               "payload": {"before": before, "after": after, "title": title}})


@dataclass
class ChatContext:
    """What ``get_chat_context`` returns: the message that triggered the tool."""

    user_message: str = ""
    session_id: str | None = None
    locale: str | None = None
    project: str | None = None
    """The chat's folder (``$project``), when it may be given to tools (a Workbench
    addition: ``projectFolder``); see ``project_of``."""
    review_writes: bool = False
    """Whether a change to a file is to be shown as a diff question and written only
    when accepted (the ``tools.review_writes`` setting; ``reviewWrites``)."""
    consumer: str | None = None
    """Who the call serves (``person``, ``chat``, ``headless``, ``schedule``, ``mcp``): a
    Workbench addition (``consumer``), set by the host (``ToolGateway.consumer``)."""
    data_folder: str | None = None
    """The calling extension's own data folder (``$data``) when the call was granted a
    path in it: a Workbench addition (``dataFolder``)."""
    project_of: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)
    """Finds ``project`` the first time it is asked for (``project_folder``): resolving
    the folder costs system calls that a call whose tool never reads it (an MCP
    server's, a host tool's) should not pay."""

    def project_folder(self) -> str | None:
        """``project``, found now by ``project_of`` when it was not found yet."""
        if self.project_of is not None:
            self.project, self.project_of = self.project_of(), None
        return self.project

    def to_json(self) -> dict[str, Any]:
        return {"userMessage": self.user_message, "sessionId": self.session_id, "locale": self.locale,
                "projectFolder": self.project_folder(), "reviewWrites": self.review_writes,
                "consumer": self.consumer, "dataFolder": self.data_folder}


@dataclass
class ToolContext:
    """The toolkit handed to a tool function as its second argument."""

    sink: Sink
    asker: Asker
    chat: ChatContext = field(default_factory=ChatContext)
    signal: Signal = field(default_factory=Signal)
    granted: list[Any] = field(default_factory=list)
    """The requirements granted for this call (``Requirement``s), which shape its sandbox."""
    authorize: Authorizer = _refuse
    """Asks for a capability (memories, llm, tts, stt) at its first use."""
    requester: Callable[[Any], Awaitable[Any]] | None = None
    """Raises any other request (e.g. a schedule proposal) with the call's timeout paused."""
    stream: ReplyStream | None = None
    """Takes the answer of a function that streams it; None where a call may not stream
    (a tool's)."""

    def __post_init__(self) -> None:
        self.display = Display(self.sink)

    def set_progress(self, progress: float, label: str | None = None,
                     description: str | None = None) -> None:
        """Report how far along the tool is, from 0 to 1."""
        value = min(1.0, max(0.0, float(progress)))
        self.sink("progress", {"progress": value, "label": label, "description": description})

    def log(self, level: str, message: str) -> None:
        """Write a line to the host's log at debug, info, warn or error."""
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        self.sink("log", {"level": level, "message": str(message)})

    def get_chat_context(self) -> dict[str, Any]:
        return self.chat.to_json()

    async def ask(self, request: Any) -> Any:
        """Raise ``request`` to the front-end, the call's time limit paused meanwhile."""
        if self.requester is None:
            from workbench.events import RequestDenied

            raise RequestDenied("no one can answer requests for this call")
        return await self.requester(request)

    async def ask_user(self, questions: list[dict[str, Any]]) -> list[Any]:
        """Show the person a form and return one answer per question, in order."""
        return await self.asker(list(questions))
