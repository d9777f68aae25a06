"""A stored history a model would refuse is sent in a shape it accepts: a call without a
result, a result without its call, results out of order, a message in between, ids
repeated — for the OpenAI and the Anthropic wire, checked as those APIs check, and
through each provider against a loopback server that refuses as they do."""

from __future__ import annotations

import json

import pytest

from strict_models import StrictModelServer, anthropic_problem, openai_problem
from workbench.agent import anthropic, openai_wire
from workbench.agent.anthropic import AnthropicProvider
from workbench.agent.history_repair import NO_RESULT, repair
from workbench.agent.messages import ChatMessage, TextChunk, ToolCall
from workbench.agent.openai import OpenAIProvider


def call(model_id: str, ours: str | None = None, name: str = "word_count") -> ToolCall:
    return ToolCall(model_id, name, {"text": model_id}, ours)


def result(model_id: str, text: str, ours: str | None = None) -> ChatMessage:
    return ChatMessage("tool", json.dumps({"ok": True, "result": text}), tool_call_id=model_id,
                       name="word_count", call_id=ours)


BROKEN = {
    "a call without a result (killed mid-call)": [
        ChatMessage("user", "count"), ChatMessage("assistant", "", [call("c1")]),
        ChatMessage("user", "and now?")],
    "results out of order, one missing": [
        ChatMessage("user", "count"), ChatMessage("assistant", "", [call("a"), call("b"), call("c")]),
        result("c", "third"), result("a", "first"), ChatMessage("user", "next")],
    "a result without its call": [
        ChatMessage("user", "hi"), result("ghost", "?"), ChatMessage("assistant", "hello"),
        ChatMessage("user", "again")],
    "another turn's messages in between (two processes)": [
        ChatMessage("user", "first"), ChatMessage("assistant", "", [call("c1", "ours-1")]),
        ChatMessage("user", "second"), ChatMessage("assistant", "", [call("c1", "ours-2")]),
        result("c1", "for the first", "ours-1"), result("c1", "for the second", "ours-2"),
        ChatMessage("assistant", "done"), ChatMessage("user", "more")],
    "ids repeated across and within messages": [
        ChatMessage("user", "go"), ChatMessage("assistant", "", [call("call_0"), call("call_0")]),
        result("call_0", "one"), result("call_0", "two"), ChatMessage("assistant", "", [call("call_0")]),
        result("call_0", "three"), ChatMessage("user", "more")],
    "ids the Anthropic API cannot take, alike once cleaned": [
        ChatMessage("user", "go"), ChatMessage("assistant", "", [call("a.b"), call("a_b"), call("")]),
        result("a.b", "1"), result("a_b", "2"), result("", "3"), ChatMessage("user", "more")],
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_each_broken_history_is_refused_as_stored_and_accepted_repaired(name):
    history = BROKEN[name]
    naive_openai = [{"role": m.role, "content": m.content, "tool_call_id": m.tool_call_id,
                     **({"tool_calls": [{"id": c.id} for c in m.tool_calls]} if m.tool_calls else {})}
                    for m in history]
    # The checker is strict: the history as stored is refused (one case is only
    # refused by Anthropic, whose ids are stricter).
    _, naive_anthropic = _anthropic_as_stored(history)
    assert openai_problem(naive_openai) or anthropic_problem(naive_anthropic)
    assert openai_problem(openai_wire.to_wire(history)) is None
    assert anthropic_problem(anthropic.to_wire(history)[1]) is None


def _anthropic_as_stored(history):
    out = []
    for message in history:
        role = "user" if message.role in ("user", "tool") else "assistant"
        if message.role == "tool":
            blocks = [{"type": "tool_result", "tool_use_id": message.tool_call_id}]
        else:
            blocks = ([{"type": "text", "text": message.content}] if message.content else []) + [
                {"type": "tool_use", "id": c.id} for c in message.tool_calls]
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return "", out


def test_each_result_follows_its_own_call_and_nothing_is_lost_or_invented():
    repaired = repair(BROKEN["another turn's messages in between (two processes)"])
    shape = [(m.role, m.content if m.role != "tool" else json.loads(m.content)["result"],
              [c.id for c in m.tool_calls], m.tool_call_id) for m in repaired]
    assert shape == [
        ("user", "first", [], None), ("assistant", "", ["c1"], None),
        ("tool", "for the first", [], "c1"),
        ("user", "second", [], None), ("assistant", "", ["c1_2"], None),
        ("tool", "for the second", [], "c1_2"),
        ("assistant", "done", [], None), ("user", "more", [], None)]


def test_a_call_without_a_result_is_told_it_was_interrupted_and_an_orphan_is_left_out():
    killed = repair(BROKEN["a call without a result (killed mid-call)"])
    assert [m.role for m in killed] == ["user", "assistant", "tool", "user"]
    assert killed[2].content == NO_RESULT and killed[2].tool_call_id == "c1"
    assert json.loads(NO_RESULT)["error"]["kind"] == "interrupted"
    orphan = repair(BROKEN["a result without its call"])
    assert [m.role for m in orphan] == ["user", "assistant", "user"]
    ordered = repair(BROKEN["results out of order, one missing"])
    assert [(m.tool_call_id, m.content == NO_RESULT) for m in ordered if m.role == "tool"] == [
        ("a", False), ("b", True), ("c", False)]


def test_a_whole_history_is_sent_as_it_was():
    history = [ChatMessage("system", "be brief"), ChatMessage("user", "count"),
               ChatMessage("assistant", "Counting.", [call("c1"), call("c2")]),
               result("c1", "one"), result("c2", "two"), ChatMessage("assistant", "Two.")]
    assert repair(history) == history


@pytest.mark.parametrize("name", list(BROKEN))
async def test_providers_send_a_broken_history_that_a_strict_server_accepts(name):
    with StrictModelServer() as server:
        openai_model = OpenAIProvider("gpt-test", base_url=server.base_url, max_retries=0)
        claude = AnthropicProvider("claude-test", base_url=server.root_url, api_key="k",
                                   max_retries=0)
        for provider in (openai_model, claude):
            chunks = [c async for c in provider.stream(BROKEN[name], [])]
            assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "accepted"
        assert server.refusals == [] and len(server.requests) == 2
