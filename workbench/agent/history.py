"""Sessions' histories as providers see them, kept between model steps and turns.

A turn hands the model the whole conversation before every step. Read again each
time, a chat of 10,000 messages costs tens of milliseconds a step for what did not
change: a session's messages are only ever appended (each one's ``seq`` is one more
than the last, and a message is never changed, only deleted with its session). So
``Histories`` reads a session once, then only the messages after the last it holds.

Before it trusts what it holds it checks that the last message it read is still the
session's message of that ``seq`` with the same id: a deleted session, or one whose
messages another process replaced, is read again from the start.

What ``of`` returns is a new list of shared ``ChatMessage`` objects: callers must not
change the messages themselves (``history_repair.repair`` builds new ones).

Imports nothing of ours but the message shapes; the store is passed in.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from workbench.agent.messages import ChatMessage, ToolCall

KEPT_SESSIONS = 8
"""Sessions whose histories are kept at once (the ones used last); the others are
read again when next used."""


def message_of(role: str, content: str | None, calls_json: str | None, model_call_id: str | None,
               name: str | None, call_id: str | None) -> ChatMessage:
    """One stored message row as the providers' ``ChatMessage``."""
    calls = ([ToolCall(c["id"], c["name"], c.get("arguments") or {}, c.get("call_id"))
              for c in json.loads(calls_json)] if calls_json else [])
    return ChatMessage(role, content or "", calls, model_call_id, name, call_id)  # type: ignore[arg-type]


@dataclass
class _Kept:
    seq: int = 0
    id: int | None = None
    messages: list[ChatMessage] = field(default_factory=list)


class Histories:
    """The histories of the sessions used last, read incrementally from ``store``.

    Safe to use from worker threads (a turn reads its history off the event loop).
    """

    def __init__(self, store: Any, keep: int = KEPT_SESSIONS) -> None:
        self.store = store
        self.keep = keep
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, session_id: str) -> list[ChatMessage]:
        """The session's conversation, in order, as it is stored now."""
        with self._lock:
            kept = self._kept.pop(session_id, None)
            if kept is None or (kept.id is not None
                                and self.store.message_id_at(session_id, kept.seq) != kept.id):
                kept = _Kept()
            for seq, message_id, *row in self.store.history_rows_after(session_id, kept.seq):
                kept.messages.append(message_of(*row))
                kept.seq, kept.id = seq, message_id
            self._kept[session_id] = kept
            while len(self._kept) > self.keep:
                self._kept.popitem(last=False)
            return list(kept.messages)

    def forget(self, session_id: str | None = None) -> None:
        """Drop what is kept of ``session_id`` (of every session when None)."""
        with self._lock:
            if session_id is None:
                self._kept.clear()
            else:
                self._kept.pop(session_id, None)
