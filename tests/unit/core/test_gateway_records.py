"""The gateway's records of a call (written behind it, by the store's writer thread) and
its time limit, with host-native tools registered the way the host registers its own."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.errors import ToolError
from workbench.events import RequestDenied, ToolCallEnded
from workbench.store.writer import THREAD_NAME, DeferredWriteError
from workbench.tools.registry import HOST_RUNTIME, Tool


def host_tool(name: str, handler, timeout_ms: int | None = None) -> Tool:
    return Tool(name=name, description=name, parameters={"type": "object"}, extension="tests",
                source="builtin", function=name, folder=Path(__file__).parent, entry=None,
                runtime=HOST_RUNTIME, handler=handler, timeout_ms=timeout_ms)


@pytest.fixture
async def host(workdir):
    async with Host.open(cwd=workdir) as opened:
        yield opened


def _verbs(statements: list[str]) -> list[str]:
    return [s.split()[0].upper() for s in statements if s.split()[0].upper() in
            ("BEGIN", "COMMIT", "INSERT", "UPDATE", "DELETE")]


async def test_a_call_commits_nothing_itself_and_its_records_follow_in_order(host):
    async def double(arguments, ctx):
        return {"n": arguments["n"] * 2}

    host.registry.add(host_tool("double", double))
    session = host.chats.new()["id"]
    # The writer would wait this long for more writes: only a read's flush commits them.
    host.store.writer.gather_s = 60
    in_call: list[str] = []
    behind: list[str] = []
    host.store.writer.trace = behind.append
    host.store._db.conn.set_trace_callback(in_call.append)
    try:
        outcome = await host.tools.call("double", {"n": 4}, CallOptions(caller="model", session_id=session,
                                                                       user_message="twice"))
    finally:
        host.store._db.conn.set_trace_callback(None)
    assert outcome.result == {"n": 8}
    assert _verbs(in_call) == [] and behind == []
    (row,) = host.store.list_tool_calls()  # reading waits for the writer
    # The call ended before its start was written: its row is inserted ended, at once.
    assert _verbs(behind) == ["BEGIN", "INSERT", "INSERT", "INSERT", "COMMIT"]
    assert [s.split()[2] for s in behind if s.startswith(("INSERT", "UPDATE"))] == \
        ["tool_calls", "audit_log", "audit_log"]
    assert (row["tool"], row["caller"], row["status"], row["session_id"], row["result"]) == \
        ("tests.double", "model", "ok", session, {"n": 8})
    audit = [(a["actor"], a["action"], a["subject"], a["detail"]) for a in host.store.list_audit()[::-1]
             if a["action"].startswith("tool.")]
    assert audit == [("model", "tool.call", "tests.double", {"call_id": row["id"]}),
                     ("model", "tool.ok", "tests.double", {"call_id": row["id"]})]


async def test_a_call_whose_record_is_refused_still_ends_and_the_refusal_is_raised_later(host):
    async def one(arguments, ctx):
        return 1

    host.registry.add(host_tool("one", one))
    ended: list[ToolCallEnded] = []
    host.bus.subscribe(lambda event: ended.append(event) if isinstance(event, ToolCallEnded) else None)
    first = await host.gateway.call("one", {}, call_id="same")
    again = await host.gateway.call("one", {}, call_id="same")
    assert first.ok and again.ok and [e.ok for e in ended] == [True, True]
    with pytest.raises(DeferredWriteError) as raised:
        host.store.list_tool_calls()
    assert [f.label for f in raised.value.failures] == ["start of tool call 'same'",
                                                        "end of tool call 'same'"]
    assert "tool call 'same' was already started" in str(raised.value)
    # Raised once; the first call's records are whole, the second left no trace.
    (row,) = host.store.list_tool_calls()
    assert (row["id"], row["status"], row["result"]) == ("same", "ok", 1)
    assert [a["action"] for a in host.store.list_audit()[::-1] if a["action"].startswith("tool.")] == \
        ["tool.call", "tool.ok"]


async def test_closing_the_host_commits_the_records_and_leaves_no_writer_thread(workdir):
    async def one(arguments, ctx):
        return 1

    host = Host.open(cwd=workdir)
    host.registry.add(host_tool("one", one))
    host.store.writer.gather_s = 60
    outcome = await host.tools.call("one", {})
    assert [t for t in threading.enumerate() if t.name == THREAD_NAME]
    await host.aclose()
    assert not [t for t in threading.enumerate() if t.name == THREAD_NAME]
    reopened = Host.open(cwd=workdir)
    try:
        row = reopened.store.get_tool_call(outcome.call_id)
        assert (row["status"], row["result"]) == ("ok", 1)
    finally:
        reopened.close()


async def test_a_tool_that_ignores_its_cancellation_still_times_out(host):
    async def stubborn(arguments, ctx):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return {"finished": "anyway"}

    async def converts(arguments, ctx):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise ToolError("tool", "stopped") from None

    host.registry.add(host_tool("stubborn", stubborn, timeout_ms=100))
    host.registry.add(host_tool("converts", converts, timeout_ms=100))
    for name in ("stubborn", "converts"):
        outcome = await host.tools.call(name, {})
        assert outcome.error == {"kind": "timeout", "message": "the call took longer than 0.1 s"}
    assert [r["status"] for r in host.store.list_tool_calls()] == ["error", "error"]


async def test_a_form_pauses_the_time_limit_of_a_tool_run_in_the_calling_task(host):
    class SlowPerson:
        async def answer(self, request):
            await asyncio.sleep(0.3)
            return ["yes"]

    async def asks(arguments, ctx):
        return {"answers": await ctx.ask_user([{"question": "Go?"}])}

    host.answer_with(SlowPerson())
    host.registry.add(host_tool("asks", asks, timeout_ms=150))
    outcome = await host.tools.call("asks", {})
    assert outcome.to_json() == {"ok": True, "result": {"answers": ["yes"]}}


async def test_a_cancelled_caller_cancels_the_tool_and_the_call_is_recorded_cancelled(host):
    running, stopped = asyncio.Event(), asyncio.Event()

    async def waits(arguments, ctx):
        running.set()
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()

    class NeverAnswers:
        async def answer(self, request):
            raise RequestDenied("no")

    host.answer_with(NeverAnswers())
    host.registry.add(host_tool("waits", waits, timeout_ms=60_000))
    task = asyncio.ensure_future(host.tools.call("waits", {}))
    await asyncio.wait_for(running.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stopped.is_set()
    (row,) = host.store.list_tool_calls()
    assert (row["status"], row["error"]["kind"]) == ("cancelled", "cancelled")
