"""A model an extension provides: each step of the conversation goes to its function,
which runs in the extension's sandboxed worker, and its reply comes back as chunks.

The core injects ``answer``, the callable that runs the function in the worker with
the grants the person gave it; this module only builds the request from the
conversation and turns the function's return value into chunks, refusing a reply of
the wrong shape with the JSON pointer of the bad part.

The request a provider's function receives (``fn(request, ctx)``)::

    {"op": "complete", "provider": "EXTENSION/NAME", "config": {...},
     "messages": [{"role", "content", "tool_calls"?, "tool_call_id"?, "name"?}, ...],
     "tools": [{"name", "description", "parameters"}, ...]}

Its reply is the text alone (a string), or ``{"text": "…", "tool_calls": [{"name",
"arguments", "id"?}]}``, the shape of a scripted model's reply. The whole reply is
returned at once; it is streamed on in pieces.

Must not import the core or a front-end.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from workbench.agent.messages import ChatMessage, ModelChunk, TextChunk, ToolCallChunk, ToolSpec, ToolCall
from workbench.agent.providers import _pieces
from workbench.agent.replies import Reply, ValidationError, pointer
from workbench.errors import ModelError, WorkbenchError

Answer = Callable[[dict[str, Any]], Awaitable[Any]]
"""``(request) -> reply``: runs the provider's function in its worker."""


def message_json(message: ChatMessage) -> dict[str, Any]:
    """One message of the conversation as the provider's function receives it."""
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [call.to_json() for call in message.tool_calls]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        data["name"] = message.name
    return data


def read_reply(reply: Any, provider: str) -> Reply:
    """The provider's return value as a reply.

    Raises:
        ModelError: It is neither a string nor ``{"text", "tool_calls"}``; the message
            names the provider and the JSON pointer of the bad part.
    """
    if isinstance(reply, str):
        return Reply(text=reply)
    try:
        return Reply.model_validate(reply)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = pointer(tuple(first["loc"])) or "/"
        raise ModelError(f"the model provider {provider} answered with a malformed reply at "
                         f"{where}: {first['msg']} (expected a string or "
                         '{"text": …, "tool_calls": [{"name": …, "arguments": {…}}]})') from exc


class ExtensionModelProvider:
    """A chat model answered by an extension's function; see the module docstring.

    Args:
        provider: ``EXTENSION/NAME``, the provider's name.
        answer: Runs the function in the extension's worker (injected by the core).
        config: The provider's configuration from its manifest.
    """

    def __init__(self, provider: str, answer: Answer, config: dict[str, Any] | None = None) -> None:
        self.provider = provider
        self.name = f"ext:{provider}"
        self.answer = answer
        self.config = dict(config or {})

    def request(self, messages: list[ChatMessage], tools: list[ToolSpec]) -> dict[str, Any]:
        """What the function is called with for one model step."""
        return {"op": "complete", "provider": self.provider, "config": self.config,
                "messages": [message_json(m) for m in messages],
                "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters}
                          for t in tools]}

    async def stream(self, messages: list[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        try:
            raw = await self.answer(self.request(messages, tools))
        except ModelError:
            raise
        except WorkbenchError as exc:
            raise ModelError(f"the model provider {self.provider} failed: {exc}") from exc
        reply = read_reply(raw, self.provider)
        for piece in _pieces(reply.text):
            yield TextChunk(piece)
        for call in reply.tool_calls:
            yield ToolCallChunk(ToolCall(id=call.id or f"call_{uuid.uuid4().hex[:12]}",
                                         name=call.name, arguments=call.arguments))
