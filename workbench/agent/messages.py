"""The shapes a model provider reads and writes; a leaf of the agent package."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from typing import Any, Literal

_IDS = random.Random(os.urandom(32))
"""Draws the ids of calls: seeded from the system once per process (again in a forked
child), so that making an id is no system call. A system call on a call's path lets
the store's writer thread take the interpreter from it (``os.urandom`` cost a call some
50 us so on a busy machine). No tool sees these ids; they need to be unique, not secret."""

os.register_at_fork(after_in_child=lambda: _IDS.seed(os.urandom(32)))


def new_call_id() -> str:
    """Our own id for a tool call: the key of its record, whatever id the model gave it
    (96 random bits)."""
    return f"call_{_IDS.getrandbits(96):024x}"


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
