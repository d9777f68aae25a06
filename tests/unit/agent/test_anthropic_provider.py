"""The Anthropic Messages provider against a local server speaking its wire format."""

from __future__ import annotations

import json

import pytest
from http_fake import DROP, Reply, collect, every_byte

from workbench.agent.anthropic import AnthropicProvider
from workbench.agent.messages import ChatMessage, TextChunk, ToolCall, ToolCallChunk, ToolSpec
from workbench.errors import ModelError

KEY = "sk-ant-api03-test-5e1f0c2b9a7d"

WEATHER = ToolSpec("get_weather", "Weather for a city.",
                   {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def events(*items: tuple[str, dict]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in items)


def start(input_tokens: int = 25) -> tuple[str, dict]:
    return ("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test",
        "usage": {"input_tokens": input_tokens, "output_tokens": 1}}})


def text_block(index: int, *pieces: str) -> list[tuple[str, dict]]:
    return [("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": {"type": "text", "text": ""}}),
            *(("content_block_delta", {"type": "content_block_delta", "index": index,
                                       "delta": {"type": "text_delta", "text": p}}) for p in pieces),
            ("content_block_stop", {"type": "content_block_stop", "index": index})]


def tool_block(index: int, call_id: str, name: str, *pieces: str) -> list[tuple[str, dict]]:
    return [("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": call_id, "name": name, "input": {}}}),
            *(("content_block_delta", {"type": "content_block_delta", "index": index,
                                       "delta": {"type": "input_json_delta", "partial_json": p}})
              for p in pieces),
            ("content_block_stop", {"type": "content_block_stop", "index": index})]


def finish(reason: str = "end_turn", output_tokens: int = 12) -> list[tuple[str, dict]]:
    return [("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason},
                               "usage": {"output_tokens": output_tokens}}),
            ("message_stop", {"type": "message_stop"})]


def provider(server, **options) -> AnthropicProvider:
    return AnthropicProvider("claude-test", base_url=server.url, api_key=KEY, **options)


def text_of(chunks) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


def calls_of(chunks) -> list[tuple[str, str, dict]]:
    return [(c.call.id, c.call.name, c.call.arguments) for c in chunks if isinstance(c, ToolCallChunk)]


async def test_text_then_tool_use_with_usage_and_the_request_in_its_shape(fake_server) -> None:
    fake_server.queue(Reply(pieces=[events(
        start(), ("ping", {"type": "ping"}),
        *text_block(0, "Let me ", "check."),
        *tool_block(1, "toolu_01", "get_weather", "", '{"ci', 'ty": "Os', 'lo"}'),
        *finish("tool_use"))]))
    model = provider(fake_server)
    history = [
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "weather in Oslo and Rome?"),
        ChatMessage("assistant", "Checking.", tool_calls=[ToolCall("call_1", "get_weather", {"city": "Oslo"}),
                                                          ToolCall("call.2", "get_weather", {"city": "Rome"})]),
        ChatMessage("tool", '{"sky": "clear"}', tool_call_id="call_1", name="get_weather"),
        ChatMessage("tool", '{"sky": "rain"}', tool_call_id="call.2", name="get_weather"),
        ChatMessage("user", "and now?"),
    ]
    chunks = await collect(model.stream(history, [WEATHER]))
    assert text_of(chunks) == "Let me check."
    assert calls_of(chunks) == [("toolu_01", "get_weather", {"city": "Oslo"})]
    assert isinstance(chunks[-1], ToolCallChunk)
    request = fake_server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY and request.headers["anthropic-version"] == "2023-06-01"
    body = request.json
    assert body["model"] == "claude-test" and body["stream"] is True and body["max_tokens"] == 4096
    assert body["system"] == "Be brief."
    assert body["tools"] == [{"name": "get_weather", "description": "Weather for a city.",
                              "input_schema": WEATHER.parameters}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "weather in Oslo and Rome?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Rome"}}]},
        # Both results, then the next question, in one user turn.
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": '{"sky": "clear"}'},
            {"type": "tool_result", "tool_use_id": "call_2", "content": '{"sky": "rain"}'},
            {"type": "text", "text": "and now?"}]},
    ]
    usage = model.last_usage
    assert (usage.input_tokens, usage.output_tokens) == (25, 12)
    assert usage.raw["stop_reason"] == "tool_use"


async def test_split_at_every_byte_with_multibyte_text_and_json(fake_server) -> None:
    body = events(start(), *text_block(0, "Grüße ", "🎉"),
                  *tool_block(1, "toolu_9", "get_weather", '{"city": "Zü', 'rich"}'), *finish())
    fake_server.queue(Reply(pieces=every_byte(body)))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "hi")], [WEATHER]))
    assert text_of(chunks) == "Grüße 🎉"
    assert calls_of(chunks) == [("toolu_9", "get_weather", {"city": "Zürich"})]


async def test_a_tool_without_input_gets_an_empty_object(fake_server) -> None:
    fake_server.queue(Reply(pieces=[events(start(), *tool_block(0, "toolu_2", "get_weather"), *finish())]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "hi")], [WEATHER]))
    assert calls_of(chunks) == [("toolu_2", "get_weather", {})]


async def test_an_error_event_is_the_servers_message(fake_server) -> None:
    fake_server.queue(Reply(pieces=[events(start(), *text_block(0, "Hm"), (
        "error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))]))
    got = []
    with pytest.raises(ModelError, match="overloaded_error: Overloaded"):
        async for chunk in provider(fake_server).stream([ChatMessage("user", "hi")], []):
            got.append(chunk)
    assert text_of(got) == "Hm"


async def test_an_error_body_never_shows_the_key(fake_server) -> None:
    fake_server.queue(Reply(status=401, headers={"Content-Type": "application/json"}, pieces=[json.dumps(
        {"type": "error", "error": {"type": "authentication_error",
                                    "message": f"invalid x-api-key {KEY}"}})]))
    model = provider(fake_server)
    with pytest.raises(ModelError) as info:
        await collect(model.stream([ChatMessage("user", "hi")], []))
    assert "401" in str(info.value) and "invalid x-api-key ***" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(model)


async def test_529_overloaded_is_retried(fake_server) -> None:
    fake_server.queue(Reply(status=529, headers={"retry-after": "0"},
                            pieces=['{"type": "error", "error": {"type": "overloaded_error", '
                                    '"message": "Overloaded"}}']),
                      Reply(pieces=[events(start(), *text_block(0, "fine"), *finish())]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "hi")], []))
    assert text_of(chunks) == "fine" and len(fake_server.requests) == 2


async def test_a_bad_request_says_what_the_server_said(fake_server) -> None:
    fake_server.queue(Reply(status=400, pieces=['{"type": "error", "error": {"type": '
                                                '"invalid_request_error", "message": "max_tokens: too big"}}']))
    with pytest.raises(ModelError, match="400: max_tokens: too big"):
        await collect(provider(fake_server).stream([ChatMessage("user", "hi")], []))
    assert len(fake_server.requests) == 1


async def test_a_connection_dropped_mid_stream(fake_server) -> None:
    fake_server.queue(Reply(pieces=[events(start(), *text_block(0, "partial")[:2]), 0.05, DROP]))
    got = []
    with pytest.raises(ModelError, match="dropped before the reply was complete"):
        async for chunk in provider(fake_server).stream([ChatMessage("user", "hi")], []):
            got.append(chunk)
    assert text_of(got) == "partial"


async def test_a_stream_without_message_stop_is_an_error(fake_server) -> None:
    fake_server.queue(Reply(chunked=False, pieces=[events(start(), *text_block(0, "half"))]))
    with pytest.raises(ModelError, match="ended before the reply was complete"):
        await collect(provider(fake_server).stream([ChatMessage("user", "hi")], []))


async def test_tool_input_cut_at_max_tokens_says_so(fake_server) -> None:
    fake_server.queue(Reply(pieces=[events(start(), *tool_block(0, "toolu_3", "get_weather", '{"city": "Os'),
                                           *finish("max_tokens"))]))
    with pytest.raises(ModelError, match=r"'get_weather' with input that is not valid JSON \(the reply "
                                         r"was cut off at the token limit\)"):
        await collect(provider(fake_server).stream([ChatMessage("user", "hi")], [WEATHER]))


async def test_an_empty_message_is_never_sent_empty(fake_server) -> None:
    fake_server.queue(Reply(pieces=[events(start(), *text_block(0, "ok"), *finish())]))
    await collect(provider(fake_server).stream([ChatMessage("user", "  ")], []))
    assert fake_server.requests[0].json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "(empty message)"}]}]
