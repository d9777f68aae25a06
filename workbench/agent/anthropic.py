"""The Anthropic Messages provider: streaming text and tool use.

One streaming POST to ``{base_url}/v1/messages`` per model step. The events:
``message_start`` (input usage), ``content_block_start`` (a text block, or a
``tool_use`` block with its id and name), ``content_block_delta`` (``text_delta``
streams out; ``input_json_delta`` pieces are joined), ``content_block_stop`` (a
tool call is complete: its JSON is parsed), ``message_delta`` (stop reason and
output usage), ``message_stop``, ``ping``, and ``error`` (a ``ModelError`` with the
server's message). HTTP errors, 429/529 retries and dropped connections are
handled as for every HTTP provider (``wire``).

The conversation maps onto the API's shape: system messages become the ``system``
field; tool results become ``tool_result`` blocks of the next user message
(consecutive messages of one role are merged, as the API wants them alternating);
an assistant's calls become ``tool_use`` blocks.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.agent.history_repair import repair
from workbench.agent.messages import ChatMessage, ModelChunk, TextChunk, ToolCall, ToolCallChunk, ToolSpec
from workbench.agent.wire import SSEDecoder, StreamRequest, Usage, mask, post_stream, safe_url
from workbench.config.settings import DEFAULTS
from workbench.errors import ModelError

API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header sent."""


def _tool_id(value: str | None, fallback: int) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", value or "")
    return cleaned or f"toolu_{fallback}"


def to_wire(messages: Sequence[ChatMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The conversation as ``(system, messages)`` in the Messages API's shape, repaired
    first (``history_repair``: each ``tool_use`` answered in the next user message, ids
    unique once cleaned to the characters the API allows)."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    out: list[dict[str, Any]] = []
    for number, message in enumerate(repair(messages, clean=lambda value: _tool_id(value, 0))):
        if message.role == "system":
            continue
        blocks: list[dict[str, Any]] = []
        if message.role == "tool":
            role = "user"
            result: dict[str, Any] = {"type": "tool_result",
                                      "tool_use_id": _tool_id(message.tool_call_id, number)}
            if message.content:
                result["content"] = message.content
            blocks.append(result)
        else:
            role = message.role
            if message.content.strip():
                blocks.append({"type": "text", "text": message.content})
            for call in message.tool_calls:
                blocks.append({"type": "tool_use", "id": _tool_id(call.id, number),
                               "name": call.name, "input": call.arguments})
            if not blocks:
                blocks.append({"type": "text", "text": "(empty message)"})
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return system, out


def tools_to_wire(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The tools in the API's shape (``input_schema``)."""
    return [{"name": tool.name, "description": tool.description,
             "input_schema": tool.parameters or {"type": "object", "properties": {}}}
            for tool in tools]


@dataclass
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    start_input: dict[str, Any] = field(default_factory=dict)
    complete: bool = False


class AnthropicProvider:
    """A Claude model through the Messages API.

    Args:
        model: The model name (``claude-sonnet-4-5``).
        base_url: The API root, without ``/v1`` (``https://api.anthropic.com``).
        api_key: Sent as ``x-api-key``; never shown.
        max_tokens: The most tokens one reply may use (the API requires a bound).
        max_retries: Retries after a 429/529 before giving up.
        max_retry_wait_s: The longest total wait across those retries.
        timeout_s: How long to wait for the server to say anything.
        transport: An httpx transport, for tests.

    Attributes:
        last_usage: The usage the last reply reported.
    """

    def __init__(self, model: str, *, base_url: str, api_key: str | None,
                 max_tokens: int = DEFAULTS.anthropic.max_tokens,
                 max_retries: int = DEFAULTS.providers.max_retries,
                 max_retry_wait_s: float = DEFAULTS.providers.max_retry_wait_s,
                 timeout_s: float = DEFAULTS.providers.timeout_s,
                 notice: str | None = None, transport: Any = None) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key or None
        self.name = f"anthropic:{model}"
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.max_retry_wait_s = max_retry_wait_s
        self.timeout_s = timeout_s
        self.notice = notice
        self.transport = transport
        self.last_usage: Usage | None = None

    def __repr__(self) -> str:
        return (f"AnthropicProvider(model={self.model!r}, base_url={safe_url(self.base_url)!r}, "
                f"api_key={'set' if self._api_key else 'none'})")

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        """Stream the reply to ``messages``; see the module docstring."""
        system, wire_messages = to_wire(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens,
                                "messages": wire_messages, "stream": True}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = tools_to_wire(tools)
        headers = {"anthropic-version": API_VERSION, "Accept": "text/event-stream"}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        request = StreamRequest(label=self.name, url=f"{self.base_url}/v1/messages", body=body,
                                headers=headers, secrets=(self._api_key,) if self._api_key else (),
                                max_retries=self.max_retries, max_wait_s=self.max_retry_wait_s,
                                timeout_s=self.timeout_s)
        self.last_usage = usage = Usage()
        blocks: dict[int, _Block] = {}
        stopped = False
        decoder = SSEDecoder()
        stream = post_stream(request, transport=self.transport)
        try:
            async for raw in stream:
                for event in decoder.feed(raw):
                    for chunk in self._event(event.data, blocks, usage):
                        if chunk is None:
                            stopped = True
                        else:
                            yield chunk
                if stopped:
                    break
            if not stopped:
                for event in decoder.close():
                    for chunk in self._event(event.data, blocks, usage):
                        if chunk is None:
                            stopped = True
                        else:
                            yield chunk
        finally:
            await stream.aclose()
        if not stopped:
            raise ModelError(f"the stream from {safe_url(self.base_url)} ended before the reply "
                             f"was complete; what arrived is kept", where=self.name)

    def _event(self, text: str, blocks: dict[int, _Block],
               usage: Usage) -> list[ModelChunk | None]:
        """What one event yields; None marks ``message_stop``."""
        try:
            data = json.loads(text)
        except ValueError:
            raise ModelError("the server sent an event that is not JSON", where=self.name) from None
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "error":
            error = data.get("error") or {}
            message = error.get("message") if isinstance(error, dict) else str(error)
            label = error.get("type", "error") if isinstance(error, dict) else "error"
            raise ModelError(mask(f"the server reported {label}: {message}", [self._api_key]),
                             where=self.name)
        if kind == "message_start":
            self._usage(usage, (data.get("message") or {}).get("usage") or {})
        elif kind == "message_delta":
            self._usage(usage, data.get("usage") or {})
            stop = (data.get("delta") or {}).get("stop_reason")
            if stop:
                usage.raw["stop_reason"] = stop
        elif kind == "content_block_start":
            block = data.get("content_block") or {}
            blocks[data.get("index", 0)] = _Block(kind=block.get("type", ""), id=block.get("id", ""),
                                                  name=block.get("name", ""),
                                                  start_input=block.get("input") or {})
            if block.get("type") == "text" and block.get("text"):
                return [TextChunk(block["text"])]
        elif kind == "content_block_delta":
            delta = data.get("delta") or {}
            if delta.get("type") == "text_delta" and delta.get("text"):
                return [TextChunk(delta["text"])]
            if delta.get("type") == "input_json_delta":
                block = blocks.setdefault(data.get("index", 0), _Block(kind="tool_use"))
                block.pieces.append(delta.get("partial_json") or "")
        elif kind == "content_block_stop":
            block = blocks.get(data.get("index", 0))
            if block is not None:
                block.complete = True
        elif kind == "message_stop":
            # Calls are parsed only now: the stop reason (cut off at max_tokens?)
            # comes after the blocks end.
            return [*(ToolCallChunk(self._call(block, usage)) for block in blocks.values()
                      if block.kind == "tool_use"), None]
        return []

    def _call(self, block: _Block, usage: Usage) -> ToolCall:
        if not block.complete:
            raise ModelError(f"the server ended the message inside the tool_use block of "
                             f"{block.name!r}", where=self.name)
        raw = "".join(block.pieces).strip()
        if not raw:
            arguments: Any = block.start_input
        else:
            try:
                arguments = json.loads(raw)
            except ValueError:
                cut = (" (the reply was cut off at the token limit)"
                       if usage.raw.get("stop_reason") == "max_tokens" else "")
                raise ModelError(f"the model called {block.name!r} with input that is not valid "
                                 f"JSON{cut}", where=self.name) from None
        if not isinstance(arguments, dict):
            raise ModelError(f"the model called {block.name!r} with input that is not a JSON object",
                             where=self.name)
        if not block.name:
            raise ModelError("the server sent a tool_use block without a tool name", where=self.name)
        return ToolCall(id=block.id or f"toolu_{id(block):x}", name=block.name, arguments=arguments)

    @staticmethod
    def _usage(usage: Usage, reported: dict[str, Any]) -> None:
        if "input_tokens" in reported:
            usage.input_tokens = int(reported["input_tokens"] or 0)
        if "output_tokens" in reported:
            usage.output_tokens = int(reported["output_tokens"] or 0)
        usage.raw.update(reported)
