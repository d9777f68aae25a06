"""Turns end to end through the Host: model, tool calls, results, persistence, resume, cancel."""

from __future__ import annotations

import asyncio
import json

import pytest

from workbench.core.host import Host
from workbench.events import MessageEnded, TextDelta, ToolCallEnded, TurnEnded


def script(tmp_path, replies):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


async def test_a_turn_with_a_tool_call_is_persisted_in_order(tmp_path):
    model = script(tmp_path, [
        {"text": "Counting.", "tool_calls": [{"id": "c1", "name": "word_count", "arguments": {"text": "one two three"}}]},
        {"text": "Three words."},
    ])
    async with Host.open(cwd=tmp_path, model=model) as host:
        seen = []
        host.bus.subscribe(seen.append)
        result = await host.chats.send_prompt("how many words?")
        assert (result.status, result.text) == ("done", "Three words.")
        rows = host.chats.messages(result.session_id)
        assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
        ours = rows[1]["tool_calls"][0]["call_id"]
        assert rows[1]["tool_calls"] == [{"id": "c1", "name": "word_count", "call_id": ours,
                                          "arguments": {"text": "one two three"}}]
        assert json.loads(rows[2]["content"]) == {"ok": True, "result": {"words": 3, "lines": 1, "characters": 13}}
        assert (rows[2]["tool_call_id"], rows[2]["call_id"]) == ("c1", ours)
        ended = [e for e in seen if isinstance(e, ToolCallEnded)]
        assert ended[0].ok and ended[0].session_id == result.session_id and ended[0].call_id == ours
        record = host.store.get_tool_call(ours)
        assert (record["model_call_id"], record["message_id"]) == ("c1", rows[1]["id"])
        assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "Counting.Three words."
        assert isinstance(seen[-1], TurnEnded) and seen[-1].text == "Three words."


async def test_a_session_resumes_by_id_and_prefix(tmp_path):
    model = script(tmp_path, [{"text": "first"}, {"text": "second"}])
    async with Host.open(cwd=tmp_path, model=model) as host:
        first = await host.chats.send_prompt("a")
    async with Host.open(cwd=tmp_path, model=model) as host:
        second = await host.chats.send_prompt("b", session_id=first.session_id[:8])
        assert second.session_id == first.session_id and second.text == "second"
        assert [m["content"] for m in host.chats.messages(first.session_id)] == ["a", "first", "b", "second"]


async def test_running_out_of_script_ends_the_turn_with_an_error(tmp_path):
    async with Host.open(cwd=tmp_path, model=script(tmp_path, [])) as host:
        result = await host.chats.send_prompt("hello")
        assert result.status == "error" and "no reply left" in result.error
        assert [m["role"] for m in host.chats.messages(result.session_id)] == ["user"]


async def test_a_failed_tool_call_goes_back_to_the_model_as_an_error(tmp_path):
    model = script(tmp_path, [{"tool_calls": [{"name": "no_such_tool"}]}, {"text": "Sorry."}])
    async with Host.open(cwd=tmp_path, model=model) as host:
        result = await host.chats.send_prompt("go")
        tool_row = host.chats.messages(result.session_id)[2]
        assert json.loads(tool_row["content"])["error"]["kind"] == "not_found"
        assert result.text == "Sorry."


async def test_cancel_ends_the_turn_as_cancelled(tmp_path, workdir):
    # A file of the project (the chat's folder): reading it asks, and the answer is slow.
    (workdir / "notes.txt").write_text("hello\n")
    model = script(tmp_path, [{"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]}])

    class Slow:
        asked = asyncio.Event()

        async def answer(self, request):
            self.asked.set()
            await asyncio.sleep(30)  # a person who has not answered yet

    slow = Slow()
    async with Host.open(cwd=workdir, model=model, responder=slow) as host:
        seen = []
        host.bus.subscribe(seen.append)
        turn = asyncio.ensure_future(host.chats.send_prompt("read it"))
        await asyncio.wait_for(slow.asked.wait(), 30)  # the turn waits on the question
        assert host.chats.busy
        assert host.chats.cancel()
        result = await turn
        assert result.status == "cancelled"
        assert [e.status for e in seen if isinstance(e, TurnEnded)] == ["cancelled"]
        assert not host.chats.busy


async def test_unknown_session_is_a_clear_error(tmp_path):
    async with Host.open(cwd=tmp_path, model="echo") as host:
        with pytest.raises(Exception, match="no session 'nope'"):
            await host.chats.send_prompt("x", session_id="nope")


async def test_echo_model_offline(tmp_path):
    async with Host.open(cwd=tmp_path, model="echo") as host:
        seen = []
        host.bus.subscribe(seen.append)
        result = await host.chats.send_prompt("ping")
        assert result.text == "You said: ping"
        assert [e.role for e in seen if isinstance(e, MessageEnded)] == ["user", "assistant"]


async def test_a_resumed_chat_shows_the_model_what_another_process_added(tmp_path):
    """The history a turn keeps is read again from where it stopped: messages another
    process added to the chat in between reach the model, in order."""
    from workbench.store import Store

    seen: list[list[str]] = []
    async with Host.open(cwd=tmp_path, model="echo") as host:
        first = await host.chats.send_prompt("one")
        provider = host.chats.provider(first.session_id)
        stream = provider.stream

        async def watched(messages, tools):
            seen.append([m.content for m in messages if m.role in ("user", "assistant")])
            async for chunk in stream(messages, tools):
                yield chunk

        provider.stream = watched  # type: ignore[method-assign]
        with Store.open(host.store.path) as other:
            other.add_message(first.session_id, "user", content="from elsewhere")
            other.add_message(first.session_id, "assistant", content="noted")
        await host.chats.send_prompt("two", first.session_id)
    assert seen[-1][-3:] == ["from elsewhere", "noted", "two"]
    assert seen[-1][0] == "one"


async def test_the_agent_end_hook_sees_the_last_twenty_messages_of_a_long_chat(tmp_path):
    from workbench.hooks.registry import Hook

    async with Host.open(cwd=tmp_path, model="echo") as host:
        session = host.chats.new()["id"]
        for n in range(30):
            host.store.add_message(session, "user", content=f"m{n}")
        events: list[dict] = []

        async def runner(tool, event, ctx, timeout_ms):
            if tool.name == "on_agent_end":
                events.append(event)

        host.hook_runtime.runner = runner
        host.hook_runtime.registry.add(Hook(extension="watcher", event="on_agent_end", function="f",
                                            folder=tmp_path, entry=tmp_path / "main.py", runtime="python"))
        result = await host.chats.send_prompt("hello", session)
        async with asyncio.timeout(30):  # the handler runs in the background; a bound for a failing test
            while not events:
                await asyncio.sleep(0.01)
    messages = events[0]["messages"]
    assert events[0]["session_id"] == session and len(messages) == 20
    assert [m["content"] for m in messages[:2]] == ["m12", "m13"]
    assert messages[-2]["content"] == "hello" and messages[-1]["content"] == result.text
