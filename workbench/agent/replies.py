"""The shape of a model message written as data: a scripted model's replies, and what an
extension's model provider answers.

``{"text": "…", "tool_calls": [{"id"?, "name", "arguments"}]}``, checked with pydantic.
A module of its own so that pydantic is imported only when such a reply is read, not
when the workbench starts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["Reply", "ReplyCall", "ValidationError", "pointer"]


class ReplyCall(BaseModel):
    """One tool call the reply asks for."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class Reply(BaseModel):
    """One message of the model: text, tool calls, or both."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    tool_calls: list[ReplyCall] = Field(default_factory=list)


def pointer(loc: tuple) -> str:
    """A pydantic error location as a JSON pointer."""
    return "".join(f"/{part}" for part in loc)
