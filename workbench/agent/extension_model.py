"""A model an extension provides: each step of the conversation goes to its function,
which runs in the extension's sandboxed worker, and its reply comes back as chunks.

The core injects ``answer``, the callable that runs the function in the worker with
the grants the person gave it; this module only builds the request from the
conversation and turns the function's answer into chunks, refusing a reply of the
wrong shape with the JSON pointer of the bad part.

The request a provider's function receives (``fn(request, ctx)``)::

    {"op": "complete", "provider": "EXTENSION/NAME", "config": {...},
     "messages": [{"role", "content", "tool_calls"?, "tool_call_id"?, "name"?}, ...],
     "tools": [{"name", "description", "parameters"}, ...]}

Its reply is the text alone (a string), or ``{"text": "…", "tool_calls": [{"name",
"arguments", "id"?}]}``, the shape of a scripted model's reply. A function that
returns it whole has it streamed on in pieces. A function that is a generator yields
it in pieces of that same shape instead — a string or ``{"text"}`` is text,
``{"tool_calls": [...]}`` adds calls — and each text piece reaches the conversation as
soon as it is yielded; the tool calls follow when the function ends.

Must not import the core or a front-end.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from workbench.agent.history_repair import repair
from workbench.agent.messages import ChatMessage, ModelChunk, TextChunk, ToolCallChunk, ToolSpec, ToolCall
from workbench.agent.providers import _pieces
from workbench.agent.replies import Reply, ReplyCall, ValidationError, pointer
from workbench.errors import ModelError, WorkbenchError

Answer = Callable[[dict[str, Any], "Pieces"], Awaitable[Any]]
"""``(request, pieces) -> reply``: runs the provider's function in its worker; what a
generator yields goes to ``pieces`` (``open`` once, then ``piece`` per item) as it comes,
and the reply returned is then None."""

_END = object()
"""Put after the last piece, when the function has ended."""


def message_json(message: ChatMessage) -> dict[str, Any]:
    """One message of the conversation as the provider's function receives it."""
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [{"id": call.id, "name": call.name, "arguments": call.arguments}
                              for call in message.tool_calls]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        data["name"] = message.name
    return data


def read_reply(reply: Any, provider: str, piece: int | None = None) -> Reply:
    """The provider's return value (or, with ``piece``, that streamed piece) as a reply.

    Raises:
        ModelError: It is neither a string nor ``{"text", "tool_calls"}``; the message
            names the provider, the JSON pointer of the bad part, and the piece.
    """
    if isinstance(reply, str):
        return Reply(text=reply)
    try:
        return Reply.model_validate(reply)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = pointer(tuple(first["loc"])) or "/"
        which = "" if piece is None else f" (streamed piece {piece})"
        raise ModelError(f"the model provider {provider} answered with a malformed reply at "
                         f"{where}{which}: {first['msg']} (expected a string or "
                         '{"text": …, "tool_calls": [{"name": …, "arguments": {…}}]})') from exc


class Pieces:
    """What a streaming function yields, queued for ``stream`` as it arrives."""

    def __init__(self) -> None:
        self.opened = False
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    def open(self) -> None:
        self.opened = True

    def piece(self, item: Any) -> None:
        self.opened = True
        self.queue.put_nowait(item)


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

    def request(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> dict[str, Any]:
        """What the function is called with for one model step."""
        return {"op": "complete", "provider": self.provider, "config": self.config,
                "messages": [message_json(m) for m in repair(messages)],
                "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters}
                          for t in tools]}

    async def _ask(self, request: dict[str, Any], pieces: Pieces) -> Any:
        try:
            return await self.answer(request, pieces)
        except ModelError:
            raise
        except WorkbenchError as exc:
            raise ModelError(f"the model provider {self.provider} failed: {exc}") from exc
        finally:
            pieces.queue.put_nowait(_END)

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        """The reply's text as it comes, then its tool calls. Leaving early (a cancelled
        turn, a malformed piece) cancels the function's worker."""
        pieces = Pieces()
        call = asyncio.ensure_future(self._ask(self.request(messages, tools), pieces))
        calls: list[ReplyCall] = []
        try:
            index = 0
            while (item := await pieces.queue.get()) is not _END:
                reply = read_reply(item, self.provider, piece=index)
                index += 1
                calls += reply.tool_calls
                if reply.text:
                    yield TextChunk(reply.text)
            raw = call.result()
            if not pieces.opened:
                reply = read_reply(raw, self.provider)
                calls = reply.tool_calls
                for piece in _pieces(reply.text):
                    yield TextChunk(piece)
        finally:
            if not call.done():
                call.cancel()
                await asyncio.wait([call])
            if not call.cancelled():
                call.exception()  # seen: a failure after the turn left is not logged as lost
        for reply_call in calls:
            yield ToolCallChunk(ToolCall(id=reply_call.id or f"call_{uuid.uuid4().hex[:12]}",
                                         name=reply_call.name, arguments=reply_call.arguments))
