"""The shapes a model provider reads and writes; a leaf of the agent package."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Literal


class _Ids:
    """The random bytes call ids are cut from, drawn from the system 4 KiB at a time
    (again in a forked child): making an id is seldom a system call, which on a call's
    path lets the store's writer thread take the interpreter from it (``os.urandom``
    per id cost a call some 50 us on a busy machine). The bytes are the system's own,
    so an id is as hard to guess as one from ``secrets``."""

    SIZE = 4096

    def __init__(self) -> None:
        self.pool = b""
        self.at = 0
        self.lock = threading.Lock()  # no two threads are given the same bytes
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        self.pool, self.at, self.lock = b"", 0, threading.Lock()

    def draw(self, count: int) -> bytes:
        with self.lock:
            if self.at + count > len(self.pool):
                self.pool, self.at = os.urandom(self.SIZE), 0
            start, self.at = self.at, self.at + count
            return self.pool[start:self.at]


_IDS = _Ids()


def new_call_id() -> str:
    """Our own id for a tool call: the key of its record, whatever id the model gave it
    (96 random bits)."""
    return f"call_{_IDS.draw(12).hex()}"


@dataclass
class ToolCall:
    """A call the model asked for.

    Attributes:
        id: The model's id of the call, which its result is matched by on the wire.
        call_id: Ours, the key of its record (given by the turn loop; None until then).
        message_id: The stored assistant message that asked for it.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    call_id: str | None = None
    message_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.call_id is not None:
            data["call_id"] = self.call_id
        return data


@dataclass
class ChatMessage:
    """One message of a conversation, as providers see it."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    """For a tool result: the model's id of the call it answers."""
    name: str | None = None
    call_id: str | None = None
    """For a tool result: our id of the call it answers, when it was kept."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as offered to the model: its name, what it does, its argument schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class TextChunk:
    """A piece of the reply's text, streamed as it arrives."""

    text: str


@dataclass(frozen=True)
class ToolCallChunk:
    """A complete tool call the model made."""

    call: ToolCall


ModelChunk = TextChunk | ToolCallChunk
