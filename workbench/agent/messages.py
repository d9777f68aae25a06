"""The shapes a model provider reads and writes; a leaf of the agent package."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass
class ToolCall:
    """A call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class ChatMessage:
    """One message of a conversation, as providers see it."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


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
