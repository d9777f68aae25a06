"""Sessions' histories as providers see them, kept between model steps and turns.

A turn hands the model the whole conversation before every step. Read again each
time, a chat of 10,000 messages costs tens of milliseconds a step for what did not
change: a session's messages are only ever appended (each one's ``seq`` is one more
than the last, and a message is never changed, only deleted with its session). So
``Histories`` reads a session once, then only the messages after the last it holds.

Before it trusts what it holds it checks that the last message it read is still the
session's message of that ``seq`` with the same id: a deleted session, or one whose
messages another process replaced, is read again from the start.

What ``of`` returns is a ``Conversation``: a view of the messages as they were when
read, over the list kept (which only grows, and is replaced, never changed, when read
again), so handing a 10,000-message history to a step copies nothing. Callers must not
change the messages themselves (``history_repair.repair`` builds new ones).

Imports nothing of ours but the message shapes; the store is passed in.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

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


class Conversation(Sequence[ChatMessage]):
    """The first ``length`` messages of ``kept`` after the messages of ``head``: what a
    model step is handed. ``kept`` is only ever appended to, so the view stays what it
    was when made; making one, or one with a new head, costs nothing per message."""

    __slots__ = ("_head", "_kept", "_length")

    def __init__(self, kept: list[ChatMessage], length: int | None = None,
                 head: tuple[ChatMessage, ...] = ()) -> None:
        self._kept = kept
        self._length = len(kept) if length is None else length
        self._head = head

    def with_head(self, head: Iterable[ChatMessage]) -> Conversation:
        """The same messages after ``head`` (the memories put before a step's history)."""
        return Conversation(self._kept, self._length, tuple(head) + self._head)

    def __len__(self) -> int:
        return len(self._head) + self._length

    @overload
    def __getitem__(self, index: int) -> ChatMessage: ...

    @overload
    def __getitem__(self, index: slice) -> list[ChatMessage]: ...

    def __getitem__(self, index: int | slice) -> ChatMessage | list[ChatMessage]:
        if isinstance(index, slice):
            return list(self)[index]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("conversation index out of range")
        heads = len(self._head)
        return self._head[index] if index < heads else self._kept[index - heads]

    def __iter__(self) -> Iterator[ChatMessage]:
        yield from self._head
        yield from itertools.islice(self._kept, self._length)

    def __reversed__(self) -> Iterator[ChatMessage]:
        for index in range(self._length - 1, -1, -1):
            yield self._kept[index]
        yield from reversed(self._head)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Conversation, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Conversation({list(self)!r})"


def with_head(head: Iterable[ChatMessage], messages: Sequence[ChatMessage]) -> Sequence[ChatMessage]:
    """``messages`` after ``head``, without copying a ``Conversation``."""
    if isinstance(messages, Conversation):
        return messages.with_head(head)
    return [*head, *messages]


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

    def of(self, session_id: str) -> Conversation:
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
            return Conversation(kept.messages)

    def forget(self, session_id: str | None = None) -> None:
        """Drop what is kept of ``session_id`` (of every session when None)."""
        with self._lock:
            if session_id is None:
                self._kept.clear()
            else:
                self._kept.pop(session_id, None)
