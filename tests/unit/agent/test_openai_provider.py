"""The OpenAI-compatible provider against a local server speaking each dialect's wire format."""

from __future__ import annotations

import json
import time

import pytest
from http_fake import DROP, Reply, collect, every_byte, sse

from workbench.agent.messages import ChatMessage, TextChunk, ToolCall, ToolCallChunk, ToolSpec
from workbench.agent.openai import OpenAIProvider
from workbench.errors import ModelError

KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e"

WEATHER = ToolSpec("get_weather", "Weather for a city.",
                   {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
COUNT = ToolSpec("word_count", "Count words.", {"type": "object", "properties": {"text": {"type": "string"}}})


def provider(server, **options) -> OpenAIProvider:
    options.setdefault("api_key", KEY)
    return OpenAIProvider("test-model", base_url=f"{server.url}/v1", **options)


def text_of(chunks) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


def calls_of(chunks) -> list[tuple[str, str, dict]]:
    return [(c.call.id, c.call.name, c.call.arguments) for c in chunks if isinstance(c, ToolCallChunk)]


def delta(content=None, *, tool_calls=None, finish=None, **extra) -> dict:
    d = {}
    if content is not None:
        d["content"] = content
    if tool_calls is not None:
        d["tool_calls"] = tool_calls
    return {"choices": [{"index": 0, "delta": d, "finish_reason": finish}], **extra}


USAGE = {"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


async def test_streams_text_and_sends_the_conversation_in_its_shape(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(delta("Hel"), delta("lo"), delta(finish="stop"), USAGE)]))
    model = provider(fake_server)
    history = [
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "weather in Oslo?"),
        ChatMessage("assistant", "", tool_calls=[ToolCall("call_1", "get_weather", {"city": "Oslo"})]),
        ChatMessage("tool", '{"sky": "clear"}', tool_call_id="call_1", name="get_weather"),
        ChatMessage("assistant", "Clear."),
        ChatMessage("user", "thanks"),
    ]
    chunks = await collect(model.stream(history, [WEATHER]))
    assert [c.text for c in chunks] == ["Hel", "lo"]
    request = fake_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.json
    assert body["model"] == "test-model" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "clear"}'},
        {"role": "assistant", "content": "Clear."},
        {"role": "user", "content": "thanks"},
    ]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather for a city.", "parameters": WEATHER.parameters}}]
    usage = model.last_usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (11, 3, 14)


async def test_openai_style_tool_calls_are_assembled_by_index(fake_server) -> None:
    # Two calls interleaved; ids and names only in each call's first delta.
    fake_server.queue(Reply(pieces=[sse(
        delta(tool_calls=[{"index": 0, "id": "call_a", "type": "function",
                           "function": {"name": "get_weather", "arguments": ""}}]),
        delta(tool_calls=[{"index": 1, "id": "call_b", "type": "function",
                           "function": {"name": "word_count", "arguments": '{"te'}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"city": "Pa'}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": 'xt": "a b"}'}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": 'ris"}'}}]),
        delta(finish="tool_calls"))]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER, COUNT]))
    assert calls_of(chunks) == [("call_a", "get_weather", {"city": "Paris"}),
                                ("call_b", "word_count", {"text": "a b"})]
    assert text_of(chunks) == ""


async def test_ollama_style_whole_calls_without_index_and_finish_stop(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(
        delta("", tool_calls=[
            {"id": "call_x", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
            {"id": "call_y", "function": {"name": "word_count", "arguments": '{"text": "x"}'}}]),
        delta(finish="stop"))]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER, COUNT]))
    assert calls_of(chunks) == [("call_x", "get_weather", {"city": "Rome"}),
                                ("call_y", "word_count", {"text": "x"})]


async def test_llamacpp_style_id_on_every_delta_arguments_in_one_piece(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(
        delta(tool_calls=[{"index": 0, "id": "abc", "type": "function",
                           "function": {"name": "get_weather"}}]),
        delta(tool_calls=[{"index": 0, "id": "abc", "type": "function",
                           "function": {"arguments": '{"city":"Lima"}'}}]),
        delta(finish="tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9},
         "timings": {"predicted_per_second": 91.5}})]))
    model = provider(fake_server)
    chunks = await collect(model.stream([ChatMessage("user", "go")], [WEATHER]))
    assert calls_of(chunks) == [("abc", "get_weather", {"city": "Lima"})]
    assert model.last_usage.raw["timings"]["predicted_per_second"] == 91.5


async def test_arguments_sent_as_an_object_or_empty_or_twice_encoded(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(
        delta(tool_calls=[{"index": 0, "id": "c0", "function": {"name": "get_weather",
                                                                "arguments": {"city": "Bern"}}}]),
        delta(tool_calls=[{"index": 1, "id": "c1", "function": {"name": "word_count", "arguments": ""}}]),
        delta(tool_calls=[{"index": 2, "id": "c2", "function": {
            "name": "word_count", "arguments": json.dumps(json.dumps({"text": "q"}))}}]),
        delta(finish="tool_calls"))]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER, COUNT]))
    assert calls_of(chunks) == [("c0", "get_weather", {"city": "Bern"}), ("c1", "word_count", {}),
                                ("c2", "word_count", {"text": "q"})]


async def test_vllm_style_no_space_comments_crlf_and_split_at_every_byte(fake_server) -> None:
    body = (": keep-alive\r\n\r\n"
            + 'data:{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\r\n\r\n'
            + sse(delta("Grüße, "), delta("世界 🎉"), ": ping\n\n", delta(finish="stop"), USAGE))
    fake_server.queue(Reply(pieces=every_byte(body)))
    model = provider(fake_server)
    chunks = await collect(model.stream([ChatMessage("user", "hi")], []))
    assert text_of(chunks) == "Grüße, 世界 🎉"
    assert model.last_usage.output_tokens == 3


async def test_an_error_body_becomes_the_servers_message_and_never_the_key(fake_server) -> None:
    fake_server.queue(Reply(status=401, headers={"Content-Type": "application/json"}, pieces=[json.dumps(
        {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}})]))
    model = provider(fake_server)
    with pytest.raises(ModelError) as info:
        await collect(model.stream([ChatMessage("user", "hi")], []))
    message = str(info.value)
    assert "401" in message and "Incorrect API key provided" in message and "check the API key" in message
    assert KEY not in message and KEY not in repr(model) and KEY not in repr(info.value)
    assert "api_key=set" in repr(model)


async def test_429_is_retried_honouring_retry_after(fake_server) -> None:
    limited = Reply(status=429, headers={"Retry-After": "0.2", "Content-Type": "application/json"},
                    pieces=['{"error": {"message": "Rate limit reached"}}'])
    fake_server.queue(limited, Reply(pieces=[sse(delta("ok"), delta(finish="stop"))]))
    started = time.monotonic()
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "hi")], []))
    assert text_of(chunks) == "ok"
    assert len(fake_server.requests) == 2
    assert time.monotonic() - started >= 0.2


async def test_429_past_the_retries_is_a_clear_error(fake_server) -> None:
    fake_server.queue(Reply(status=429, headers={"Retry-After": "0"},
                            pieces=['{"error": {"message": "Rate limit reached"}}']))
    with pytest.raises(ModelError, match=r"still rate limited .*\(429\) after asking 3 times.*"
                                         r"Rate limit reached"):
        await collect(provider(fake_server, max_retries=2).stream([ChatMessage("user", "hi")], []))
    assert len(fake_server.requests) == 3


async def test_a_retry_after_past_the_wait_bound_is_not_waited_for(fake_server, caplog) -> None:
    fake_server.queue(Reply(status=429, headers={"Retry-After": "3600"}, pieces=["slow down"]))
    caplog.set_level("INFO", logger="workbench.agent.wire")
    with pytest.raises(ModelError, match="asked to wait 3600 s more, past the 5 s bound"):
        await collect(provider(fake_server, max_retry_wait_s=5).stream([ChatMessage("user", "hi")], []))
    # Refused at once: no wait was begun (a retry's wait is logged before it starts).
    assert not [r for r in caplog.records if "retrying in" in r.getMessage()]
    assert len(fake_server.requests) == 1


async def test_a_connection_dropped_mid_stream_is_an_error_after_the_text_so_far(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(delta("partial "), delta("answer"), done=False), 0.05, DROP]))
    got = []
    with pytest.raises(ModelError, match="dropped before the reply was complete"):
        async for chunk in provider(fake_server).stream([ChatMessage("user", "hi")], []):
            got.append(chunk)
    assert text_of(got) == "partial answer"


async def test_a_stream_that_just_stops_is_an_error(fake_server) -> None:
    # No length, no chunking: the body ends when the connection closes, without [DONE].
    fake_server.queue(Reply(chunked=False, pieces=[sse(delta("half"), done=False)]))
    with pytest.raises(ModelError, match="ended before the reply was complete"):
        await collect(provider(fake_server).stream([ChatMessage("user", "hi")], []))


async def test_an_error_event_in_the_stream(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(delta("a"), {"error": {"message": "context length exceeded",
                                                                "code": 400}})]))
    with pytest.raises(ModelError, match="context length exceeded"):
        await collect(provider(fake_server).stream([ChatMessage("user", "hi")], []))


async def test_malformed_arguments_name_the_tool_and_a_cut_off(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(
        delta(tool_calls=[{"index": 0, "id": "c", "function": {"name": "get_weather",
                                                               "arguments": '{"city": "Par'}}]),
        delta(finish="length"))]))
    with pytest.raises(ModelError, match=r"called 'get_weather' with arguments that are not valid JSON "
                                         r"\(the reply was cut off at the token limit\)"):
        await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER]))


async def test_arguments_that_are_not_an_object_are_refused(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(
        delta(tool_calls=[{"index": 0, "id": "c", "function": {"name": "get_weather", "arguments": "[1]"}}]),
        delta(finish="tool_calls"))]))
    with pytest.raises(ModelError, match="not a JSON object"):
        await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER]))


async def test_a_tool_call_written_as_text_becomes_the_call(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(delta("```json\n{\"name\": \"get_"),
                                        delta("weather\", \"arguments\": {\"city\": \"Kyiv\"}}\n```"),
                                        delta(finish="stop"))]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER]))
    assert text_of(chunks) == ""
    assert [(name, args) for _, name, args in calls_of(chunks)] == [("get_weather", {"city": "Kyiv"})]


async def test_json_text_for_a_tool_not_on_offer_stays_text(fake_server) -> None:
    written = '{"name": "rm_rf", "arguments": {}}'
    fake_server.queue(Reply(pieces=[sse(delta(written), delta(finish="stop"))]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER]))
    assert text_of(chunks) == written and calls_of(chunks) == []


async def test_prose_streams_at_once_even_when_tools_are_offered(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(delta("Sunny"), delta(" today"), delta(finish="stop"))]))
    chunks = await collect(provider(fake_server).stream([ChatMessage("user", "go")], [WEATHER]))
    assert [c.text for c in chunks] == ["Sunny", " today"]


async def test_a_server_that_ignores_stream_and_answers_json(fake_server) -> None:
    fake_server.queue(Reply(headers={"Content-Type": "application/json"}, pieces=[json.dumps({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "whole reply"}}],
        "usage": {"prompt_tokens": 2, "completion_tokens": 2}})]))
    model = provider(fake_server)
    assert text_of(await collect(model.stream([ChatMessage("user", "hi")], []))) == "whole reply"
    assert model.last_usage.input_tokens == 2


async def test_a_server_without_stream_options_is_asked_again_without(fake_server) -> None:
    fake_server.queue(Reply(status=400, pieces=['{"error": {"message": "Unrecognized request argument '
                                                'supplied: stream_options"}}']),
                      Reply(pieces=[sse(delta("fine"), delta(finish="stop"))]))
    model = provider(fake_server)
    assert text_of(await collect(model.stream([ChatMessage("user", "hi")], []))) == "fine"
    assert "stream_options" in fake_server.requests[0].json
    assert "stream_options" not in fake_server.requests[1].json


async def test_no_key_sends_no_authorization(fake_server) -> None:
    fake_server.queue(Reply(pieces=[sse(delta("x"), delta(finish="stop"))]))
    await collect(provider(fake_server, api_key=None).stream([ChatMessage("user", "hi")], []))
    assert "authorization" not in fake_server.requests[0].headers


async def test_an_unreachable_server_says_where(unused_port) -> None:
    model = OpenAIProvider("m", base_url=f"http://127.0.0.1:{unused_port}/v1", api_key=KEY)
    with pytest.raises(ModelError, match=f"cannot reach http://127.0.0.1:{unused_port}/v1") as info:
        await collect(model.stream([ChatMessage("user", "hi")], []))
    assert KEY not in str(info.value)


# --- grammar mode (models without tool support, e.g. the built-in local one) ---------

def grammar_reply(text: str) -> Reply:
    return Reply(pieces=[sse(*(delta(text[i:i + 4]) for i in range(0, len(text), 4)),
                             delta(finish="stop"))])


async def test_grammar_mode_sends_a_schema_and_reads_the_call(fake_server) -> None:
    fake_server.queue(grammar_reply('{"tool": "get_weather", "arguments": {"city": "Oslo"}}'))
    model = provider(fake_server, tool_mode="grammar", grammar_body={"temperature": 0})
    chunks = await collect(model.stream([ChatMessage("user", "weather in Oslo?")], [WEATHER]))
    assert [(name, args) for _, name, args in calls_of(chunks)] == [("get_weather", {"city": "Oslo"})]
    body = fake_server.requests[0].json
    assert "tools" not in body and body["temperature"] == 0
    branches = body["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [b["required"] for b in branches] == [["tool", "arguments"], ["answer"]]
    assert "get_weather" in body["messages"][0]["content"]


async def test_grammar_mode_streams_the_answer_text_decoded(fake_server) -> None:
    fake_server.queue(grammar_reply('{"answer": "It is \\"sunny\\"\\nin Oslo."}'))
    model = provider(fake_server, tool_mode="grammar")
    chunks = await collect(model.stream([ChatMessage("user", "weather?")], [WEATHER]))
    assert text_of(chunks) == 'It is "sunny"\nin Oslo.' and len(chunks) > 1


async def test_grammar_mode_loosens_a_schema_the_server_cannot_use(fake_server) -> None:
    fake_server.queue(Reply(status=400, pieces=['{"error": {"message": "JSON schema error: '
                                                'unsupported $ref"}}']),
                      grammar_reply('{"tool": "get_weather", "arguments": {"city": "Oslo"}}'))
    model = provider(fake_server, tool_mode="grammar")
    chunks = await collect(model.stream([ChatMessage("user", "weather?")], [WEATHER]))
    assert calls_of(chunks)[0][1] == "get_weather"
    loose = fake_server.requests[1].json["response_format"]["json_schema"]["schema"]["anyOf"][0]
    assert loose["properties"]["arguments"] == {"type": "object"}


async def test_grammar_mode_asks_for_an_answer_instead_of_the_same_call_again(fake_server) -> None:
    fake_server.queue(grammar_reply('{"tool": "get_weather", "arguments": {"city": "Oslo"}}'),
                      grammar_reply('{"answer": "Clear skies."}'))
    history = [ChatMessage("user", "weather in Oslo?"),
               ChatMessage("assistant", "", tool_calls=[ToolCall("c1", "get_weather", {"city": "Oslo"})]),
               ChatMessage("tool", '{"sky": "clear"}', tool_call_id="c1", name="get_weather")]
    model = provider(fake_server, tool_mode="grammar")
    chunks = await collect(model.stream(history, [WEATHER]))
    assert text_of(chunks) == "Clear skies." and calls_of(chunks) == []
    second = fake_server.requests[1].json["response_format"]["json_schema"]["schema"]["anyOf"]
    assert [b["required"] for b in second] == [["answer"]]


async def test_grammar_mode_without_tools_is_plain_chat(fake_server) -> None:
    fake_server.queue(grammar_reply("Just text."))
    model = provider(fake_server, tool_mode="grammar")
    assert text_of(await collect(model.stream([ChatMessage("user", "hi")], []))) == "Just text."
    assert "response_format" not in fake_server.requests[0].json
