"""The example plugin end to end: installed, enabled for a trusted project, its tools
called through the core service, by ``workbench call`` and by the agent; its breaker
opening when its process is killed and cannot come back, closing when it can."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from pathlib import Path

import pytest

from commands import workbench
from waits import until
from plugin_folders import EXAMPLE, seed_plugin, trusted_project
from workbench.core.host import Host
from workbench.core.plugin_service import PluginService, open_plugins
from workbench.errors import ToolError

pytestmark = pytest.mark.slow


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def installed(service: PluginService, folder: Path = EXAMPLE) -> None:
    await service.install(service.plan(folder))


async def test_a_tool_is_called_in_a_trusted_project_with_its_settings(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    (project / ".workbench" / "config.toml").write_text(
        "[plugins.echo]\nenabled = true\n[plugins.echo.settings]\ncount = 3\n", encoding="utf-8")
    from workbench.config.trust import trust_project

    trust_project(home, project)
    service = open_plugins(project)
    await installed(service)
    try:
        result = await service.call_tool("echo", "echo", {"text": "hi"})
        assert result == {"content": [{"type": "text", "text": "hi hi hi"}]}  # count read over the Plugin API
        scored = await service.call_tool("echo", "score", {"answer": "hello world"})
        assert scored["structuredContent"] == {"score": 10, "verdict": "long"}
        assert ("echo", "GET", "/channel") in service.api.received
        assert await service.run_action("echo", "ping", trigger="manual") == (202, {"accepted": True})
        [row] = service.rows()
        assert row.enabled and [i.here for i in row.instances] == [True]
        with pytest.raises(ToolError) as caught:
            await service.call_tool("echo", "echo", {"text": 3})
        assert caught.value.kind == "invalid_arguments"
    finally:
        await service.aclose()
    assert service.rows()[0].instances == []


async def test_a_plugin_written_from_the_seed_alone_serves_on_the_port_it_binds(
        home, tmp_path: Path, workdir: Path) -> None:
    project = trusted_project(home, workdir, "shout")
    service = open_plugins(project)
    await installed(service, seed_plugin(tmp_path / "shout"))
    try:
        result = await service.call_tool("shout", "shout", {"text": "hi"})
        assert result == {"content": [{"type": "text", "text": "HI"}]}
        instance = service.instances[("shout", str(project.resolve()))]
        with socket.socket() as probe:  # bound in the sandbox's network, not the host's
            assert probe.connect_ex(("127.0.0.1", instance.port)) != 0
    finally:
        await service.aclose()


async def test_a_project_that_does_not_enable_it_gets_409(home, workdir: Path) -> None:
    service = open_plugins(workdir)
    await installed(service)
    with pytest.raises(ToolError, match="does not enable plugin echo") as caught:
        await service.call_tool("echo", "echo", {"text": "hi"})
    assert caught.value.kind == "unavailable"
    assert (await service.run_action("echo", "ping"))[0] == 409
    assert service.instances == {}


async def test_the_breaker_opens_when_killed_and_closes_when_it_comes_back(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    service = open_plugins(project)
    service.clock = clock = Clock()
    await installed(service)
    try:
        await service.call_tool("echo", "echo", {"text": "hi"})
        instance = service.instances[("echo", str(project.resolve()))]
        data = instance.paths.data
        code = instance.folder / "server.py"
        # Kill it, and keep it from starting again: its command is replaced by one that fails.
        os.chmod(code, 0o644)
        code.write_text("raise SystemExit(3)\n")
        os.killpg(instance.process.pid, signal.SIGKILL)
        for _ in range(3):
            # Unanswered: cut off as the killed process goes, then starts that fail.
            with pytest.raises(ToolError, match="before it answered /healthz|closed before an answer") as caught:
                await service.call_tool("echo", "echo", {"text": "hi"})
            assert caught.value.kind == "unavailable"
        assert instance.breaker.state == "open"
        log_size = instance.paths.log.stat().st_size
        with pytest.raises(ToolError, match="calls resume in 30 s"):
            await service.call_tool("echo", "echo", {"text": "hi"})
        assert instance.paths.log.stat().st_size == log_size  # no start was tried
        assert (await service.run_action("echo", "ping"))[0] == 503
        code.write_text((EXAMPLE / "server.py").read_text())
        clock.now += 30
        assert (await service.call_tool("echo", "echo", {"text": "back"}))["content"][0]["text"] == "back"
        assert instance.breaker.state == "closed"
        assert data.is_dir()
    finally:
        await service.aclose()


async def test_idle_instances_are_stopped(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    service = open_plugins(project)
    service.clock = clock = Clock()
    await installed(service)
    try:
        await service.call_tool("echo", "echo", {"text": "hi"})
        assert await service.stop_idle() == []
        clock.now += service.idle_s
        assert await service.stop_idle() == ["echo"]
        assert service.rows()[0].instances == []
        assert (await service.call_tool("echo", "echo", {"text": "again"}))["content"][0]["text"] == "again"
    finally:
        await service.aclose()


def test_workbench_plugin_commands_and_call(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    shown = workbench("plugin", "install", str(EXAMPLE), input="n\n")
    assert shown.returncode == 1 and "schedule               run actions on a schedule" in shown.stdout
    assert "Nothing was installed" in shown.stdout
    done = workbench("plugin", "install", str(EXAMPLE), "--yes")
    assert done.returncode == 0, done.stderr
    again = workbench("plugin", "install", str(EXAMPLE), "--yes")
    assert again.returncode == 2 and "is installed already" in again.stderr
    listed = workbench("plugin", "list", "--json", cwd=project)
    assert json.loads(listed.stdout)["enabled_here"] is True
    called = workbench("call", "plugin_score", "--json", "-a", '{"answer": "abc"}', cwd=project)
    assert json.loads(called.stdout)["result"]["structuredContent"] == {"score": 3, "verdict": "short"}
    assert json.loads(workbench("plugin", "list", "--json", cwd=project).stdout)["instances"] == []
    removed = workbench("plugin", "remove", "echo", "--purge")
    assert removed.returncode == 0 and not (home.root / "plugins" / "echo").exists()
    assert workbench("plugin", "validate", str(workdir)).returncode == 2


async def test_the_agent_calls_a_plugin_tool(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    (project / "replies.json").write_text(json.dumps([
        {"tool_calls": [{"name": "plugin_score", "arguments": {"answer": "hello"}}]},
        {"text": "It scored."}]), encoding="utf-8")
    service = open_plugins(project)
    await installed(service)
    host = Host.open(cwd=project, model="scripted:replies.json")
    try:
        result = await host.chats.send_prompt("score hello")
        assert result.status == "done" and result.text == "It scored."
        tool = next(m for m in host.chats.messages(result.session_id) if m["role"] == "tool")
        assert json.loads(tool["content"])["result"]["structuredContent"] == {"score": 5, "verdict": "short"}
        rows = [row for _, row in host.sources.status_rows() if row.kind == "plugin"]
        assert [(r.name, r.tools, r.state) for r in rows] == [("plugin:echo", 2, "running")]

        async def events() -> list:
            return (await host.plugins.x("echo", "GET", "/events"))[1]["events"]

        await host.plugin_events.settled()
        assert {"type": "agent.status", "thread_id": result.session_id} in await events()
        # A config write the owner trusts: the running instance is told its settings.
        (project / ".workbench" / "config.toml").write_text(
            "[plugins.echo]\nenabled = true\n[plugins.echo.settings]\ncount = 4\n", encoding="utf-8")
        from workbench.config.trust import trust_project

        trust_project(home, project)
        host.folder.follow_config()
        assert await host.plugins.tell_settings() == ["echo"]
        assert {"type": "settings.changed", "thread_id": ""} in await events()
    finally:
        await host.aclose()


async def until_async(check, what: str, bound_s: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + bound_s
    while not await check():
        assert loop.time() < end, f"{what} did not happen within {bound_s:g} s"
        await asyncio.sleep(0.05)


async def test_an_agent_run_goes_in_a_hidden_chat_with_its_tools_alone(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    (project / "replies.json").write_text(json.dumps([
        {"tool_calls": [{"name": "plugin_score", "arguments": {"answer": "not given"}}]},
        {"tool_calls": [{"name": "plugin_echo", "arguments": {"text": "hello"}}]},
        {"text": "Said hello."}]), encoding="utf-8")
    await installed(open_plugins(project))
    host = Host.open(cwd=project, model="scripted:replies.json")
    try:
        before = {row.id for row in host.chats.rows()}
        assert await host.plugins.run_action("echo", "ask") == (202, {"accepted": True})
        await until(lambda: host.plugins.runs.rows("echo") and host.plugins.runs.rows("echo")[0]["done_sent"],
                    "the run's end told to the plugin")
        [run] = host.plugins.runs.rows("echo")
        assert (run["agent"], run["status"], run["result"]) == ("say", "done", "Said hello.")
        messages = host.chats.messages(run["session_id"])
        tools = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        assert tools[0]["error"]["kind"] == "not_found"  # a tool the agent was not given
        assert tools[1]["result"]["content"][0]["text"] == "hello"
        assert {row.id for row in host.chats.rows()} == before  # the run's chat is hidden
        await host.plugin_events.settled()
        seen = (await host.plugins.x("echo", "GET", "/events"))[1]["events"]
        assert run["session_id"] not in {e["thread_id"] for e in seen}  # nor are its events sent
        status, body = await host.plugins.x("echo", "GET", "/runs")
        assert status == 200, body
        assert body["runs"][-1] == {"run_id": run["id"], "status": "done",
                                                       "result": "Said hello."}
        host.plugins.runs.daily_limit = 1
        assert await host.plugins.run_action("echo", "ask") == (202, {"accepted": True})

        async def refused() -> bool:
            return (await host.plugins.x("echo", "GET", "/runs"))[1]["runs"][-1] == {"status": "refused 429"}

        await until_async(refused, "a run past the daily limit refused")
        assert len(host.plugins.runs.rows("echo")) == 1
    finally:
        await host.aclose()


async def test_runs_survive_a_restart_of_the_workbench(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    (project / "replies.json").write_text(json.dumps([{"text": "Back again."}]), encoding="utf-8")
    await installed(open_plugins(project))
    where = str(project.resolve())
    host = Host.open(cwd=project, model="scripted:replies.json")
    try:
        # What a workbench that stopped left: a run still queued, one that was going on
        # (its process gone), one that ended well before its plugin was told.
        add = host.store.add_plugin_run
        queued, going, ended = (add(plugin="echo", project=where, agent="say", prompt=f"run {n}",
                                    daily_limit=50)["id"] for n in range(3))
        with host.store.transaction():
            host.store._execute("UPDATE plugin_runs SET status = 'running', owner_pid = 2147483000, "
                                "owner_start = 'gone' WHERE id = ?", (going,))
        host.store.end_plugin_run(ended, "done", "Ended while stopping.")
        await host.plugins.call_tool("echo", "echo", {"text": "hi"})  # the project's first need
        await until(lambda: all(r["done_sent"] for r in host.plugins.runs.rows("echo")), "every run told")
        told = {r["run_id"]: (r["status"], r["result"])
                for r in (await host.plugins.x("echo", "GET", "/runs"))[1]["runs"]}
        assert told == {queued: ("done", "Back again."),
                        going: ("failed", "the workbench stopped while the run was going on"),
                        ended: ("done", "Ended while stopping.")}
    finally:
        await host.aclose()
