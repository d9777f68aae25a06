"""One model message with several tool calls: parallel-safe ones together, the others in
order; a cancel in the middle leaves every call answered, and the session resumes."""

from __future__ import annotations

import asyncio
import json


from waits import until

from workbench.core.host import Host
from workbench.events import Notice, ToolCallEnded, ToolCallStarted, TurnEnded
from workbench.tools.loader import load_extension

CODE = """
import time
def nap(args, ctx):
    time.sleep(args.get("seconds", 0.3))
    return {"slept": args.get("tag")}
"""


def extension(tmp_path, parallel: bool):
    folder = tmp_path / ("par" if parallel else "seq")
    folder.mkdir()
    (folder / "main.py").write_text(CODE)
    name = "nap_par" if parallel else "nap_seq"
    (folder / "loca.json").write_text(json.dumps({
        "name": folder.name, "displayName": "Nap", "description": "Naps.", "entry": "main.py",
        "tools": [{"name": name, "description": "Nap.", "parameters": {"type": "object"},
                   "function": "nap", "parallelSafe": parallel}]}))
    return folder


def script(tmp_path, replies):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def calls(name, *tags, seconds=0.3):
    return [{"id": f"c{tag}", "name": name, "arguments": {"tag": tag, "seconds": seconds}} for tag in tags]


async def run(tmp_path, replies):
    async with Host.open(cwd=tmp_path, model=script(tmp_path, replies)) as host:
        load_extension(host.registry, extension(tmp_path, True))
        load_extension(host.registry, extension(tmp_path, False))
        seen = []
        host.bus.subscribe(seen.append)
        result = await host.chats.send_prompt("go")
        return result, seen, host.chats.messages(result.session_id)


def order(seen):
    return [(type(e).__name__, e.call_id) for e in seen if isinstance(e, (ToolCallStarted, ToolCallEnded))]


async def test_parallel_safe_calls_run_together(tmp_path):
    result, seen, messages = await run(tmp_path, [
        {"tool_calls": calls("nap_par", 1, 2, 3)}, {"text": "rested"}])
    events = order(seen)
    starts = [i for i, (kind, _) in enumerate(events) if kind == "ToolCallStarted"]
    ends = [i for i, (kind, _) in enumerate(events) if kind == "ToolCallEnded"]
    assert max(starts) < min(ends), events
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["c1", "c2", "c3"]
    assert result.text == "rested"


async def test_other_calls_run_one_after_another_in_order(tmp_path):
    _, seen, messages = await run(tmp_path, [{"tool_calls": calls("nap_seq", 1, 2, seconds=0.05)
                                              + calls("nap_par", 3, seconds=0.05)}, {"text": "ok"}])
    model_id = {c["call_id"]: c["id"] for m in messages for c in m["tool_calls"] or ()}
    assert [(kind, model_id[call_id]) for kind, call_id in order(seen)] == [("ToolCallStarted", "c1"), ("ToolCallEnded", "c1"),
                           ("ToolCallStarted", "c2"), ("ToolCallEnded", "c2"),
                           ("ToolCallStarted", "c3"), ("ToolCallEnded", "c3")]


async def test_cancel_mid_batch_answers_every_call_and_resumes(tmp_path):
    model = script(tmp_path, [{"tool_calls": calls("nap_par", 1, 2, seconds=30)}, {"text": "resumed fine"}])
    async with Host.open(cwd=tmp_path, model=model) as host:
        load_extension(host.registry, extension(tmp_path, True))
        started: list[ToolCallStarted] = []
        host.bus.subscribe(lambda e: started.append(e) if isinstance(e, ToolCallStarted) else None)
        turn = asyncio.ensure_future(host.chats.send_prompt("go"))
        await until(lambda: len(started) == 2, "both calls of the batch started")
        host.chats.cancel()
        result = await turn
        assert result.status == "cancelled"
        messages = host.chats.messages(result.session_id)
        tool_rows = [m for m in messages if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_rows] == ["c1", "c2"]
        assert all(json.loads(m["content"])["error"]["kind"] == "cancelled" for m in tool_rows)
        assert {c["status"] for c in host.store.list_tool_calls(result.session_id)} == {"cancelled"}
        again = await host.chats.send_prompt("and now?", session_id=result.session_id)
        assert again.status == "done" and again.text == "resumed fine"


async def test_a_runaway_turn_stops_with_a_notice(tmp_path):
    replies = [{"tool_calls": [{"name": "word_count", "arguments": {"text": "a"}}]}] * 30
    async with Host.open(cwd=tmp_path, model=script(tmp_path, replies)) as host:
        seen = []
        host.bus.subscribe(seen.append)
        result = await host.chats.send_prompt("loop")
        assert result.status == "error" and "model steps" in result.error
        assert any(isinstance(e, Notice) and "model steps" in e.message for e in seen)
        assert isinstance(seen[-1], TurnEnded)
