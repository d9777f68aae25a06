"""Events the core publishes and requests it raises; a leaf that imports nothing of ours.

Events say what already happened (``ToolCallEnded``). Requests are questions the core
needs a person (or a headless policy) to answer; front-ends answer them through a
``Responder``. Everything here is a plain dataclass so that the TUI, the headless
JSONL writer and the tests read the same objects.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Event:
    """Base class of every event; ``kind`` is the stable name used on the wire."""

    kind: str = field(init=False, default="event")

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON-ready dict, ``type`` first."""
        data = dataclasses.asdict(self)
        data.pop("kind", None)
        return {"type": self.kind, **data}


def _event(name: str):
    """Give an event class its wire name."""

    def wrap(cls):
        cls.kind = name
        return cls

    return wrap


@_event("session_started")
@dataclass(frozen=True)
class SessionStarted(Event):
    session_id: str
    resumed: bool = False


@_event("message_started")
@dataclass(frozen=True)
class MessageStarted(Event):
    session_id: str
    message_id: str
    role: str


@_event("text_delta")
@dataclass(frozen=True)
class TextDelta(Event):
    session_id: str
    message_id: str
    text: str


@_event("message_ended")
@dataclass(frozen=True)
class MessageEnded(Event):
    session_id: str
    message_id: str
    role: str
    text: str


@_event("tool_call_started")
@dataclass(frozen=True)
class ToolCallStarted(Event):
    call_id: str
    tool: str
    arguments: dict[str, Any]
    caller: str
    session_id: str | None = None


@_event("tool_call_progress")
@dataclass(frozen=True)
class ToolCallProgress(Event):
    call_id: str
    progress: float
    label: str | None = None
    description: str | None = None


@_event("tool_call_log")
@dataclass(frozen=True)
class ToolCallLog(Event):
    call_id: str
    level: str
    message: str


@_event("display")
@dataclass(frozen=True)
class DisplayBubble(Event):
    """A one-way result a tool pushed: markdown, image, table or diff."""

    call_id: str
    display: Literal["markdown", "image", "table", "diff"]
    payload: dict[str, Any]


@_event("tool_call_ended")
@dataclass(frozen=True)
class ToolCallEnded(Event):
    call_id: str
    tool: str
    ok: bool
    result: Any = None
    error: dict[str, Any] | None = None
    session_id: str | None = None


@_event("turn_ended")
@dataclass(frozen=True)
class TurnEnded(Event):
    session_id: str
    status: Literal["done", "cancelled", "error"]
    text: str = ""
    error: str | None = None


@_event("notice")
@dataclass(frozen=True)
class Notice(Event):
    level: Literal["info", "warning", "error"]
    message: str


@_event("extension_status_changed")
@dataclass(frozen=True)
class ExtensionStatusChanged(Event):
    """The extensions were (re)loaded; ``report`` is the new status report's JSON
    (``workbench ext status --json`` prints the same shape)."""

    report: dict[str, Any]
    reloaded: bool = False
    """False for the first load of the host, True for a reload."""


@_event("notification_posted")
@dataclass(frozen=True)
class NotificationPosted(Event):
    """A notification was kept for the person (``host.schedules.notifications`` lists it): a run
    that did not end well, a schedule that had to be paused, a card."""

    id: int
    level: Literal["info", "warning", "error"]
    title: str
    body: str
    source: str | None = None
    run_id: int | None = None


# --- requests -----------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """Base class of every request; ``kind`` is the stable name used on the wire."""

    kind: str = field(init=False, default="request")

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("kind", None)
        return {"type": self.kind, **data}


@_event("permission")
@dataclass(frozen=True)
class PermissionRequest(Request):
    """A tool needs permissions it was not granted.

    ``permissions`` holds one dict per entry asked for: ``{"kind", "value", "reason",
    "optional", "key"}``, the missing required entries first, then the optional ones
    never decided; an entry naming the chat's folder also has ``"project": true`` and
    ``"shown"``, ``this project (/path)``. The answer is a ``PermissionAnswer``.
    """

    tool: str
    permissions: list[dict[str, Any]]
    session_id: str | None = None
    covers: list[str] = field(default_factory=list)
    """The other tools (grant keys) that an answer for this chat or always also grants
    the project entries they declare alike (``$project``)."""


@dataclass(frozen=True)
class PermissionAnswer:
    """The person's answer to a ``PermissionRequest``."""

    decision: Literal["once", "session", "always", "deny"]
    """The scope of what was accepted, or ``deny`` for every entry asked."""
    declined: tuple[str, ...] = ()
    """The ``key`` of each optional entry left out; kept for the decision's lifetime."""


@_event("ask_user")
@dataclass(frozen=True)
class AskUserRequest(Request):
    """A tool asks the person a form of questions; the answer is a list, one per question."""

    tool: str
    call_id: str
    questions: list[dict[str, Any]]


@_event("schedule_proposal")
@dataclass(frozen=True)
class ScheduleProposalRequest(Request):
    """A tool proposes a scheduled prompt; the person reviews (and may edit) the draft.

    The answer is ``{"accepted": bool, "draft": {...}}``; the draft saved is the
    answered one.
    """

    tool: str
    draft: dict[str, Any]


@_event("network")
@dataclass(frozen=True)
class NetworkRequest(Request):
    """A shell command asks to reach a host its chat's network does not allow but the
    person's ceiling (``shell.network_ceiling``) does.

    The answer is ``"once"`` (for this command), ``"chat"`` (for the rest of this
    chat) or ``"deny"``; a responder that will not answer raises ``RequestDenied``.
    """

    tool: str
    host: str
    port: int
    session_id: str | None = None
    command: str = ""


NETWORK_ANSWERS = ("once", "chat", "deny")
"""The answers to a ``NetworkRequest``: Allow once, Allow for this chat, Deny."""


class RequestDenied(Exception):
    """Raised by a responder that will not (or cannot) answer a request."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- the supervisor's: process state changes and schedule runs ---------------

@dataclass(frozen=True)
class ProcessStateChanged(Event):
    """A supervised process (``scheduler``, ``run:12``…) changed state; one per transition."""

    name: str
    old: str
    new: str
    pid: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class ScheduleFired(Event):
    """A run of a schedule started (its process is being started)."""

    run_id: int
    schedule_id: int | None
    title: str
    fired_by: str
    due_at: int | None = None


@dataclass(frozen=True)
class ScheduleRunEnded(Event):
    """A run ended, was refused or skipped; ``status`` is its recorded status."""

    run_id: int
    schedule_id: int | None
    title: str
    status: str
    error: str | None = None
    session_id: str | None = None


ProcessStateChanged.kind = "process_state_changed"
ScheduleFired.kind = "schedule_fired"
ScheduleRunEnded.kind = "schedule_run_ended"
