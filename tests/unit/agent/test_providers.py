"""The scripted and echo providers, and the errors a bad script file gets."""

from __future__ import annotations

import json

import pytest

from workbench.agent.messages import ChatMessage, TextChunk, ToolCallChunk
from workbench.agent.providers import EchoProvider, ScriptedProvider, make_provider
from workbench.errors import ModelError


async def collect(provider, messages):
    return [chunk async for chunk in provider.stream(messages, [])]


def write(path, data):
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


async def test_scripted_replays_text_then_tool_calls_by_position(tmp_path):
    script = write(tmp_path / "s.json", [
        {"text": "Let me count.", "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]},
        {"text": "Two words."},
    ])
    provider = ScriptedProvider(script)
    first = await collect(provider, [ChatMessage("user", "count")])
    assert "".join(c.text for c in first if isinstance(c, TextChunk)) == "Let me count."
    calls = [c.call for c in first if isinstance(c, ToolCallChunk)]
    assert [(c.name, c.arguments) for c in calls] == [("word_count", {"text": "a b"})]
    assert calls[0].id.startswith("call_")
    second = await collect(provider, [ChatMessage("user", "count"), ChatMessage("assistant", "Let me count."),
                                      ChatMessage("tool", "{}")])
    assert "".join(c.text for c in second) == "Two words."


async def test_scripted_accepts_replies_object(tmp_path):
    provider = ScriptedProvider(write(tmp_path / "s.json", {"replies": [{"text": "hi"}]}))
    assert [c.text for c in await collect(provider, [ChatMessage("user", "x")])] == ["hi"]


async def test_scripted_running_out_is_an_error_not_silence(tmp_path):
    provider = ScriptedProvider(write(tmp_path / "s.json", [{"text": "only one"}]))
    with pytest.raises(ModelError, match="no reply left: all 1 were used"):
        await collect(provider, [ChatMessage("user", "a"), ChatMessage("assistant", "only one"),
                                 ChatMessage("user", "b")])


def test_scripted_bad_json_names_line_and_column(tmp_path):
    path = write(tmp_path / "s.json", '[\n  {"text": "a"},\n  {"text": }\n]')
    with pytest.raises(ModelError) as info:
        ScriptedProvider(path)
    assert info.value.where == f"{path}:3:12"


def test_scripted_bad_shape_names_the_pointer(tmp_path):
    path = write(tmp_path / "s.json", [{"text": "a"}, {"tool_calls": [{"arguments": {}}]}])
    with pytest.raises(ModelError) as info:
        ScriptedProvider(path)
    assert info.value.where == f"{path}#/1/tool_calls/0/name"


def test_scripted_unknown_field_is_refused(tmp_path):
    path = write(tmp_path / "s.json", [{"txt": "typo"}])
    with pytest.raises(ModelError) as info:
        ScriptedProvider(path)
    assert info.value.where.endswith("#/0/txt")


def test_scripted_not_a_list(tmp_path):
    with pytest.raises(ModelError, match="expected a list"):
        ScriptedProvider(write(tmp_path / "s.json", {"text": "a"}))


def test_scripted_missing_file(tmp_path):
    with pytest.raises(ModelError, match="cannot read"):
        ScriptedProvider(tmp_path / "absent.json")


async def test_echo_repeats_the_last_user_message():
    chunks = await collect(EchoProvider(), [ChatMessage("user", "first"), ChatMessage("user", "second")])
    assert "".join(c.text for c in chunks) == "You said: second"


def test_make_provider_resolves_relative_paths_and_refuses_unknown(tmp_path):
    write(tmp_path / "s.json", [])
    assert make_provider("scripted:s.json", cwd=tmp_path).path == tmp_path / "s.json"
    with pytest.raises(ModelError, match="unknown model"):
        make_provider("gpt-nothing")
    with pytest.raises(ModelError, match="needs a file"):
        make_provider("scripted:")
