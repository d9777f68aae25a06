"""Cancelling one tool call (``Host.cancel_call``): the sandboxed tool is stopped, the call
ends as a ``cancelled`` error that the model gets as its result, and everything else
(the turn, another call) goes on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from workbench.core.host import Host
from workbench.events import ToolCallEnded, ToolCallLog, ToolCallStarted, TurnEnded

SLOW = Path(__file__).resolve().parents[1] / "fixtures" / "extensions" / "slow-py"


def open_host(workdir: Path, replies: list | None = None) -> Host:
    model = None
    if replies is not None:
        (workdir / "replies.json").write_text(json.dumps(replies), encoding="utf-8")
        model = "scripted:replies.json"
    host = Host.open(cwd=workdir, model=model)
    host.extensions.install(str(SLOW), lambda plan: True)
    return host


class Watcher:
    """Remembers the events and lets a test wait for the first log line of a call."""

    def __init__(self, host: Host) -> None:
        self.events: list = []
        self.logged: dict[str, asyncio.Event] = {}
        host.bus.subscribe(self.seen)

    def seen(self, event) -> None:
        self.events.append(event)
        if isinstance(event, ToolCallStarted):
            self.logged.setdefault(event.call_id, asyncio.Event())
        if isinstance(event, ToolCallLog):
            self.logged.setdefault(event.call_id, asyncio.Event()).set()

    def started(self) -> list[str]:
        return [e.call_id for e in self.events if isinstance(e, ToolCallStarted)]

    async def first_log(self, index: int) -> str:
        while len(self.started()) <= index:
            await asyncio.sleep(0.01)
        call_id = self.started()[index]
        await asyncio.wait_for(self.logged[call_id].wait(), 30)
        return call_id


async def test_one_call_is_cancelled_and_the_other_goes_on(workdir: Path) -> None:
    host = open_host(workdir)
    try:
        watch = Watcher(host)
        slow = asyncio.ensure_future(host.tools.call("slow_count", {"steps": 200, "delay": 0.05}))
        first = await watch.first_log(0)
        other = asyncio.ensure_future(host.tools.call("slow_count", {"steps": 3, "delay": 0.05}))
        await watch.first_log(1)

        assert host.chats.cancel_call(first) is True
        assert host.chats.cancel_call(first) is False  # already being stopped
        stopped, finished = await slow, await other

        assert not stopped.ok
        assert stopped.error == {"kind": "cancelled", "message": "the call was cancelled by the person"}
        assert stopped.to_json()["error"]["kind"] == "cancelled"
        assert finished.ok and finished.result == {"counted": 3}
        # The tool stopped counting: far fewer log lines than its 200 steps.
        lines = [e for e in watch.events if isinstance(e, ToolCallLog) and e.call_id == first]
        assert len(lines) < 200
        ended = [e for e in watch.events if isinstance(e, ToolCallEnded) and e.call_id == first]
        assert [e.error["kind"] for e in ended] == ["cancelled"]
        assert host.chats.cancel_call(first) is False  # it has ended
        assert host.chats.cancel_call("call_nope") is False
    finally:
        await host.aclose()


async def test_the_model_gets_the_cancellation_and_the_turn_goes_on(workdir: Path) -> None:
    host = open_host(workdir, [
        {"tool_calls": [{"name": "slow_count", "arguments": {"steps": 200, "delay": 0.05}}]},
        {"text": "You stopped the count."},
    ])
    try:
        watch = Watcher(host)
        turn = asyncio.ensure_future(host.chats.send_prompt("count slowly to 200"))
        call_id = await watch.first_log(0)
        assert host.chats.cancel_call(call_id)
        result = await turn

        assert result.status == "done" and result.text == "You stopped the count."
        assert [e.status for e in watch.events if isinstance(e, TurnEnded)] == ["done"]
        stored = host.chats.messages(result.session_id)
        tool = next(m for m in stored if m["role"] == "tool")
        assert json.loads(tool["content"]) == {
            "ok": False, "error": {"kind": "cancelled",
                                   "message": "the call was cancelled by the person"}}
        assert stored[-1]["role"] == "assistant" and stored[-1]["content"] == "You stopped the count."
    finally:
        await host.aclose()
