"""The OpenAI-compatible chat-completions provider: OpenAI, LocalAI, Ollama, vLLM, llama.cpp.

One streaming POST to ``{base_url}/chat/completions`` per model step. Text deltas
stream out as ``TextChunk``s; tool-call deltas are put together by their ``index``
(or, from servers that send none, by id and order) and come out as
``ToolCallChunk``s when the reply ends. The servers differ, and each difference is
handled: ids only in the first delta or in every one, ``finish_reason`` ``tool_calls``
or ``stop``, arguments streamed in pieces or sent whole (even as an object), usage in
a last chunk with no choices or beside the finish, errors as an HTTP status or as a
``data: {"error": ...}`` event, and a server that ignores ``stream`` and answers with
one JSON body.

Arguments that are not a JSON object end the step with a ``ModelError`` naming the
tool (and saying when the reply was cut off at the token limit). Passing something
else on to the tool instead could run it with arguments the model never meant;
an empty string means no arguments (``{}``).

When no structured call came but the whole reply is a tool call written as text for
a tool on offer (``toolcall_text``), it becomes that call; such text is held back
while it may still be one, so a call is never shown as prose first.

``tool_mode="grammar"`` is for models that cannot call tools at all: see ``grammar``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from workbench.agent.grammar import AnswerStream, plain_messages, response_format
from workbench.agent.messages import ChatMessage, ModelChunk, TextChunk, ToolCall, ToolCallChunk, ToolSpec
from workbench.agent.openai_wire import Reply, to_wire, tools_to_wire
from workbench.agent.toolcall_text import could_be_tool_call, parse_tool_calls
from workbench.agent.wire import ModelHTTPError, SSEDecoder, StreamRequest, Usage, mask, post_stream, safe_url
from workbench.config.settings import DEFAULTS
from workbench.errors import ModelError

_MAX_PLAIN_BODY = 16 * 1024 * 1024


class OpenAIProvider:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        model: The model name the server knows.
        base_url: The API root, with its ``/v1`` (``https://api.openai.com/v1``).
        api_key: Sent as a bearer token when given; never shown.
        label: The provider's name (``openai:MODEL`` when omitted).
        tool_mode: ``native`` sends ``tools``; ``grammar`` constrains the reply with
            a JSON-schema grammar instead (llama.cpp, for models without tool support).
        max_retries: Retries after a 429/503 before giving up.
        max_retry_wait_s: The longest total wait across those retries.
        timeout_s: How long to wait for the server to say anything.
        extra_body: Added to every request (``max_tokens``, ``temperature``…).
        grammar_body: Added to requests that carry the grammar.
        notice: What a front-end should tell the person about this model.
        transport: An httpx transport, for tests.

    Attributes:
        last_usage: The usage the last reply reported (None when it reported none).
    """

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None,
                 label: str | None = None, tool_mode: Literal["native", "grammar"] = "native",
                 max_retries: int = DEFAULTS.providers.max_retries,
                 max_retry_wait_s: float = DEFAULTS.providers.max_retry_wait_s,
                 timeout_s: float = DEFAULTS.providers.timeout_s,
                 extra_body: dict[str, Any] | None = None, grammar_body: dict[str, Any] | None = None,
                 notice: str | None = None, transport: Any = None) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key or None
        self.name = label or f"openai:{model}"
        self.tool_mode = tool_mode
        self.max_retries = max_retries
        self.max_retry_wait_s = max_retry_wait_s
        self.timeout_s = timeout_s
        self.extra_body = dict(extra_body or {})
        self.grammar_body = dict(grammar_body or {})
        self.notice = notice
        self.transport = transport
        self.last_usage: Usage | None = None
        self._stream_options = True

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return (f"OpenAIProvider(model={self.model!r}, base_url={safe_url(self.base_url)!r}, "
                f"api_key={key}, tool_mode={self.tool_mode!r})")

    def mask(self, text: str) -> str:
        """``text`` with the API key blanked out."""
        return mask(text, [self._api_key])

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        """Stream the reply to ``messages``; see the module docstring."""
        self.last_usage = None
        if self.tool_mode == "grammar":
            async for chunk in self._grammar_stream(messages, tools):
                yield chunk
            return
        body: dict[str, Any] = {"messages": to_wire(messages)}
        if tools:
            body["tools"] = tools_to_wire(tools)
        reply = Reply()
        held: list[str] | None = [] if tools else None
        try:
            async for data in self._chunks(body, reply):
                for text in self._absorb(data, reply):
                    if held is None:
                        yield TextChunk(text)
                        continue
                    held.append(text)
                    if not could_be_tool_call("".join(held)):
                        yield TextChunk("".join(held))
                        held = None
        finally:
            self.last_usage = reply.usage
        calls = reply.calls()
        if held:
            text = "".join(held)
            found = None if calls else parse_tool_calls(text, {tool.name for tool in tools})
            if found:
                calls = found
            else:
                yield TextChunk(text)
        for call in calls:
            yield ToolCallChunk(call)

    async def _grammar_stream(self, messages: list[ChatMessage],
                              tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        if not tools:
            async for chunk in self._plain_answer(messages):
                yield chunk
            return
        async for chunk in self._grammar_reply(messages, tools, answer_only=False):
            if isinstance(chunk, ToolCallChunk) and _repeated(chunk.call, messages):
                # The same call again after its result: small models loop here. Ask
                # for the answer alone, with the result in view.
                async for again in self._grammar_reply(messages, tools, answer_only=True):
                    yield again
                return
            yield chunk

    async def _grammar_reply(self, messages: list[ChatMessage], tools: list[ToolSpec], *,
                             answer_only: bool) -> AsyncIterator[ModelChunk]:
        loose = False
        while True:
            answer = AnswerStream()
            reply = Reply()
            schema_tools = [] if answer_only else tools
            body = {"messages": plain_messages(messages, tools),
                    "response_format": response_format(schema_tools, loose=loose), **self.grammar_body}
            try:
                async for data in self._chunks(body, reply):
                    for text in self._absorb(data, reply):
                        shown = answer.feed(text)
                        if shown:
                            yield TextChunk(shown)
            except ModelHTTPError as exc:
                if exc.status == 400 and not loose and not answer.raw:
                    loose = True  # the server cannot make a grammar of a tool's schema
                    continue
                raise
            finally:
                self.last_usage = reply.usage
            break
        if answer.answering:
            return  # shown as it streamed (also when cut off at the token limit)
        try:
            data = json.loads(answer.raw)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("answer"), str):
            yield TextChunk(data["answer"])
            return
        calls = parse_tool_calls(answer.raw, {tool.name for tool in schema_tools})
        if not calls:
            if data is None and answer.raw.lstrip().startswith("{") and reply.finish_reason == "length":
                raise ModelError("the model's reply was cut off at the token limit before its "
                                 "tool call was complete", where=self.name)
            yield TextChunk(answer.raw)  # the server did not apply the grammar: plain text
            return
        yield ToolCallChunk(calls[0])

    async def _plain_answer(self, messages: list[ChatMessage]) -> AsyncIterator[ModelChunk]:
        reply = Reply()
        try:
            async for data in self._chunks({"messages": plain_messages(messages, [])}, reply):
                for text in self._absorb(data, reply):
                    yield TextChunk(text)
        finally:
            self.last_usage = reply.usage

    async def _chunks(self, body: dict[str, Any], reply: Reply) -> AsyncIterator[dict[str, Any]]:
        """Each JSON chunk of one streamed request, until ``[DONE]`` or the end."""
        body = {"model": self.model, **body, **self.extra_body, "stream": True}
        if self._stream_options:
            body["stream_options"] = {"include_usage": True}
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = StreamRequest(label=self.name, url=f"{self.base_url}/chat/completions", body=body,
                                headers=headers, secrets=(self._api_key,) if self._api_key else (),
                                max_retries=self.max_retries, max_wait_s=self.max_retry_wait_s,
                                timeout_s=self.timeout_s)
        decoder = SSEDecoder()
        plain = bytearray()
        seen = False
        try:
            async for raw in post_stream(request, transport=self.transport):
                events = decoder.feed(raw)
                if not seen and not events and len(plain) < _MAX_PLAIN_BODY:
                    plain += raw
                for event in events:
                    seen = True
                    if event.data.strip() == "[DONE]":
                        reply.done = True
                        return
                    yield self._json(event.data)
        except ModelHTTPError as exc:
            if exc.status == 400 and self._stream_options and "stream_options" in exc.server_message:
                self._stream_options = False  # an older server: ask again without it
                async for data in self._chunks({k: v for k, v in body.items()
                                                if k != "stream_options"}, reply):
                    yield data
                return
            raise
        events = decoder.close()
        if not seen and not events and plain.strip():
            data = self._json(plain.decode("utf-8", errors="replace"))  # a server that ignored "stream"
            reply.done = True
            yield data
            return
        for event in events:
            if event.data.strip() == "[DONE]":
                reply.done = True
                return
            yield self._json(event.data)
        if not reply.done and reply.finish_reason is None:
            raise ModelError(f"the stream from {safe_url(self.base_url)} ended before the reply "
                             f"was complete; what arrived is kept", where=self.name)

    def _json(self, text: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except ValueError:
            shown = text if len(text) <= 200 else text[:197] + "..."
            raise ModelError(self.mask(f"the server sent something that is not JSON: {shown}"),
                             where=self.name) from None
        if not isinstance(data, dict):
            raise ModelError("the server sent JSON that is not an object", where=self.name)
        return data

    def _absorb(self, data: dict[str, Any], reply: Reply) -> list[str]:
        """Take one chunk into ``reply``; returns its text pieces."""
        if data.get("error"):
            error = data["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise ModelError(self.mask(f"the server reported an error: {message}"), where=self.name)
        if isinstance(data.get("usage"), dict):
            usage = data["usage"]
            raw = dict(usage)
            if isinstance(data.get("timings"), dict):
                raw["timings"] = data["timings"]
            reply.usage = Usage(input_tokens=int(usage.get("prompt_tokens") or 0),
                                output_tokens=int(usage.get("completion_tokens") or 0), raw=raw)
        texts: list[str] = []
        for choice in data.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                texts.append(content)
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    reply.add_delta(call)
            if isinstance(delta.get("function_call"), dict):  # the API's older form
                reply.add_delta({"index": 0, "function": delta["function_call"]})
            if choice.get("finish_reason"):
                reply.finish_reason = choice["finish_reason"]
        return texts


def _repeated(call: ToolCall, messages: Sequence[ChatMessage]) -> bool:
    """Whether the same call (name and arguments) was already made since the last user message."""
    for message in reversed(messages):
        if message.role == "user":
            return False
        if any(c.name == call.name and c.arguments == call.arguments for c in message.tool_calls):
            return True
    return False
