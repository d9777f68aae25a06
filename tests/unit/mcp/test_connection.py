"""One server's supervision without a real server: states, reasons, re-listing, log lines."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from waits import until

from workbench.errors import ToolError
from workbench.mcp import connection
from workbench.mcp.config import ServerConfig
from workbench.mcp.connection import CallBridge, McpServer, State
from workbench.mcp.session import Launcher


def server(open_stdio=None, changes: list | None = None) -> McpServer:
    async def missing(config: ServerConfig):
        raise FileNotFoundError(2, "No such file", "no-such-server")

    seen = changes if changes is not None else []
    return McpServer(ServerConfig(name="s", command="no-such-server"),
                     Launcher(open_stdio=open_stdio or missing, startup_timeout_s=2),
                     on_change=lambda s, what: seen.append((what, s.state.value)))


def bridge(logs: list) -> CallBridge:
    async def ask(questions):
        return []

    return CallBridge(loop=asyncio.get_running_loop(), progress=lambda *a: None, ask=ask,
                      log=lambda level, message: logs.append((level, message)))


async def test_a_server_that_cannot_start_says_why_and_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BACKOFF_S", (5.0,))
    changes: list = []
    found = server(changes=changes)
    with pytest.raises(ToolError) as caught:
        await found.ensure_started()
    assert caught.value.kind == "unavailable"
    assert "could not start: its command was not found (no-such-server)" in caught.value.message
    assert found.state is State.BACKOFF and ("state", "starting") in changes
    with pytest.raises(ToolError, match=r"restarts in \d\.\d s"):
        await found.ensure_started()
    await found.stop()
    assert found.state is State.STOPPED


async def test_a_server_whose_loop_ended_is_started_afresh_on_this_one() -> None:
    found = server()
    dead = asyncio.new_event_loop()
    dead.close()
    found.loop, found.state = dead, State.RUNNING
    assert found.current_state() is State.STOPPED
    with pytest.raises(ToolError, match="could not start"):
        await found.ensure_started()
    assert found.loop is asyncio.get_running_loop()
    await found.stop()


async def test_list_changed_notifications_in_a_burst_cost_one_more_listing() -> None:
    from mcp.types import ToolListChangedNotification

    calls: list = []

    async def list_tools(params: Any = None) -> Any:
        calls.append(params)
        await asyncio.sleep(0.02)
        return SimpleNamespace(tools=[f"tool{len(calls)}"], next_cursor=None)

    changes: list = []
    found = server(changes=changes)
    found.session = SimpleNamespace(list_tools=list_tools)
    await found._on_message(ToolListChangedNotification())
    await until(lambda: calls, "the listing started")
    for _ in range(3):
        await found._on_message(ToolListChangedNotification())
    await asyncio.wait_for(found._refreshing["tools"], 30)  # the re-listing in the background ended
    assert len(calls) == 2 and found.tools == ["tool2"]
    assert [what for what, _ in changes] == ["tools", "tools"]
    # Notifications before a listing starts are covered by that listing.
    calls.clear()
    for _ in range(3):
        await found._on_message(ToolListChangedNotification())
    await asyncio.wait_for(found._refreshing["tools"], 30)
    assert len(calls) == 1


async def test_a_servers_log_line_during_a_call_goes_to_that_call() -> None:
    from mcp.types import LoggingMessageNotification, LoggingMessageNotificationParams

    logs: list = []
    found = server()
    found._calls.append(bridge(logs))
    await found._on_message(LoggingMessageNotification(
        params=LoggingMessageNotificationParams(level="warning", data={"disk": "full"})))
    assert logs == [("warn", 's: {"disk": "full"}')]
    found._calls.clear()
    await found._on_message(LoggingMessageNotification(
        params=LoggingMessageNotificationParams(level="error", data="ignored: no call runs")))
    assert len(logs) == 1


async def test_an_elicitation_without_an_answer_is_declined_and_a_wrong_one_cancelled() -> None:
    from mcp.types import ElicitRequestFormParams

    params = ElicitRequestFormParams(message="Age?", requested_schema={
        "type": "object", "properties": {"age": {"type": "integer"}}})
    found = server()
    assert (await found._elicit(None, params)).action == "decline"  # nobody to ask
    logs: list = []
    answering = bridge(logs)

    async def wrong(questions):
        return ["old"]

    answering.ask = wrong
    found._calls.append(answering)
    assert (await found._elicit(None, params)).action == "cancel"
    assert "not sent" in logs[0][1]

    async def right(questions):
        return ["41"]

    answering.ask = right
    result = await found._elicit(None, params)
    assert result.action == "accept" and result.content == {"age": 41}


def test_the_delays_grow_until_the_server_is_given_up_on() -> None:
    assert list(connection.BACKOFF_S) == sorted(connection.BACKOFF_S)
    assert connection.MAX_FAILURES == len(connection.BACKOFF_S)
