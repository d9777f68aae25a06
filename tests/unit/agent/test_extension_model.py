"""An extension's model as the turn loop sees it: the request its function receives,
its reply turned into chunks (a streamed one as it comes), a malformed reply refused
with the pointer of the bad part; and reading and checking model specs."""

from __future__ import annotations

import asyncio
import json

import pytest

from workbench.agent.extension_model import ExtensionModelProvider, read_reply
from workbench.agent.messages import ChatMessage, TextChunk, ToolCall, ToolCallChunk, ToolSpec
from workbench.agent.providers import check_spec, extension_spec
from workbench.errors import ModelError, ToolError


async def chunks(provider, messages, tools=()):
    return [chunk async for chunk in provider.stream(list(messages), list(tools))]


async def test_the_function_gets_the_conversation_tools_and_config_and_its_reply_streams():
    seen = []

    async def answer(request, pieces):
        seen.append(request)
        return {"text": "Let me count those for you.",
                "tool_calls": [{"id": "c1", "name": "word_count", "arguments": {"text": "a b"}}]}

    provider = ExtensionModelProvider("acme/house", answer, {"label": "House"})
    conversation = [ChatMessage("system", "be brief"), ChatMessage("user", "count a b"),
                    ChatMessage("assistant", "", [ToolCall("c0", "x", {"n": 1})]),
                    ChatMessage("tool", '{"ok": true}', tool_call_id="c0", name="x")]
    got = await chunks(provider, conversation, [ToolSpec("word_count", "Count.", {"type": "object"})])
    assert provider.name == "ext:acme/house"
    assert seen == [{"op": "complete", "provider": "acme/house", "config": {"label": "House"},
                     "messages": [{"role": "system", "content": "be brief"},
                                  {"role": "user", "content": "count a b"},
                                  {"role": "assistant", "content": "",
                                   "tool_calls": [{"id": "c0", "name": "x", "arguments": {"n": 1}}]},
                                  {"role": "tool", "content": '{"ok": true}', "tool_call_id": "c0",
                                   "name": "x"}],
                     "tools": [{"name": "word_count", "description": "Count.",
                                "parameters": {"type": "object"}}]}]
    json.dumps(seen)  # what crosses into the worker is plain JSON
    text = "".join(c.text for c in got if isinstance(c, TextChunk))
    assert text == "Let me count those for you." and len([c for c in got if isinstance(c, TextChunk)]) > 1
    assert got[-1] == ToolCallChunk(ToolCall("c1", "word_count", {"text": "a b"}))


async def test_a_string_reply_is_the_text():
    async def answer(request, pieces):
        return "hello"

    assert await chunks(ExtensionModelProvider("a/b", answer), [ChatMessage("user", "hi")]) == [
        TextChunk("hello")]


@pytest.mark.parametrize(("reply", "where"), [
    (42, "/"),
    ({"text": 3}, "/text"),
    ({"tool_calls": [{"arguments": {}}]}, "/tool_calls/0/name"),
    ({"tool_calls": [{"name": "t", "arguments": []}]}, "/tool_calls/0/arguments"),
    ({"text": "x", "extra": 1}, "/extra"),
])
def test_a_malformed_reply_is_refused_with_its_pointer(reply, where):
    with pytest.raises(ModelError) as caught:
        read_reply(reply, "acme/house")
    assert f"the model provider acme/house answered with a malformed reply at {where}:" in str(caught.value)


async def test_a_failing_worker_becomes_a_model_error_naming_the_provider():
    async def answer(request, pieces):
        raise ToolError("permission", "permission denied for the model provider acme/house")

    with pytest.raises(ModelError, match="the model provider acme/house failed: permission denied"):
        await chunks(ExtensionModelProvider("acme/house", answer), [ChatMessage("user", "hi")])


async def test_streamed_text_comes_as_it_is_yielded_and_the_tool_calls_at_the_end():
    go = asyncio.Event()

    async def answer(request, pieces):
        pieces.open()
        pieces.piece("Counting ")
        await go.wait()  # the function goes on only once the first piece was seen
        pieces.piece({"tool_calls": [{"id": "c1", "name": "word_count", "arguments": {"text": "a"}}]})
        pieces.piece({"text": "now."})
        return None

    stream = ExtensionModelProvider("acme/house", answer).stream([ChatMessage("user", "hi")], [])
    assert await anext(stream) == TextChunk("Counting ")
    go.set()
    assert [chunk async for chunk in stream] == [
        TextChunk("now."), ToolCallChunk(ToolCall("c1", "word_count", {"text": "a"}))]


async def test_an_empty_stream_is_an_empty_reply():
    async def answer(request, pieces):
        pieces.open()

    assert await chunks(ExtensionModelProvider("a/b", answer), [ChatMessage("user", "hi")]) == []


async def test_a_malformed_piece_is_refused_with_its_pointer_and_the_function_cancelled():
    cancelled = asyncio.Event()

    async def answer(request, pieces):
        pieces.open()
        pieces.piece("fine")
        pieces.piece({"tool_calls": [{"arguments": {}}]})
        try:
            await asyncio.sleep(30)
        finally:
            cancelled.set()

    with pytest.raises(ModelError) as caught:
        await chunks(ExtensionModelProvider("acme/house", answer), [ChatMessage("user", "hi")])
    assert ("the model provider acme/house answered with a malformed reply at /tool_calls/0/name "
            "(streamed piece 1): Field required") in str(caught.value)
    assert cancelled.is_set()


async def test_leaving_the_stream_cancels_the_function():
    cancelled = asyncio.Event()

    async def answer(request, pieces):
        pieces.open()
        pieces.piece("one ")
        try:
            await asyncio.sleep(30)
        finally:
            cancelled.set()

    stream = ExtensionModelProvider("a/b", answer).stream([ChatMessage("user", "hi")], [])
    assert await anext(stream) == TextChunk("one ")
    await stream.aclose()
    assert cancelled.is_set()


def test_extension_specs_are_read_and_malformed_ones_refused():
    assert extension_spec("ext:acme/house") == ("acme", "house")
    assert extension_spec("echo") is None and extension_spec("openai:gpt-4o") is None
    for bad in ("ext:", "ext:acme", "ext:/house", "ext:acme/", "ext:a/b/c"):
        with pytest.raises(ModelError, match="write ext:EXTENSION/PROVIDER"):
            extension_spec(bad)


def test_check_spec_refuses_what_names_no_built_in_model(tmp_path):
    (tmp_path / "s.json").write_text("[]")
    for good in ("echo", "auto", "openai", "openai:gpt-4o", "anthropic:claude", "local",
                 "local:m.gguf", "scripted:s.json"):
        check_spec(good, cwd=tmp_path)
    for bad, words in (("gpt-4", "unknown model 'gpt-4'; known: auto, echo"),
                       ("echo:x", "echo takes no argument"), ("auto:x", "auto takes no argument"),
                       ("scripted:", "scripted needs a file"),
                       ("scripted:missing.json", "cannot read the scripted model file")):
        with pytest.raises(ModelError, match=words):
            check_spec(bad, cwd=tmp_path)
