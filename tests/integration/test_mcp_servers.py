"""Real MCP servers as a source of tools: server-everything (npm) and mcp-server-time (PyPI),
installed into ``.mcp-servers/`` by ``make test``. Listing, calls through the gateway,
structured results and errors, progress, cancellation, time limits, elicitation,
list changes, prompts and resources, and switching servers and tools off."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from commands import workbench

from workbench.config.home import Home
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.events import (AskUserRequest, ExtensionStatusChanged, RequestDenied, ToolCallEnded,
                              ToolCallProgress)
from workbench.headless.responder import HeadlessResponder
from workbench.mcp.config import ServerConfig, write_server
from workbench.tools.registry import Tool

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
TIME = ROOT / ".mcp-servers/venv/bin/mcp-server-time"


@pytest.fixture(autouse=True)
def servers_installed() -> None:
    missing = [str(p) for p in (EVERYTHING, TIME) if not p.exists()]
    assert not missing, f"the MCP test servers are missing ({missing}); `make test` installs them"


def everything(**fields: Any) -> ServerConfig:
    return ServerConfig(**{"name": "everything", "command": "node",
                           "args": (str(EVERYTHING), "stdio"), **fields})


def time_server(**fields: Any) -> ServerConfig:
    return ServerConfig(**{"name": "time", "command": str(TIME),
                           "args": ("--local-timezone", "UTC"), **fields})


class Person:
    """Answers forms from a list (one list of answers per form) and remembers them."""

    def __init__(self, *forms: list[Any]) -> None:
        self.forms = list(forms)
        self.asked: list[AskUserRequest] = []

    async def answer(self, request: Any) -> Any:
        if isinstance(request, AskUserRequest):
            self.asked.append(request)
            if self.forms:
                return self.forms.pop(0)
        raise RequestDenied("no answer")


def open_host(home: Home, workdir: Path, *servers: ServerConfig, responder: Any = None) -> Host:
    for server in servers:
        write_server(home.config_file, server, replace=True)
    return Host.open(cwd=workdir, responder=responder)


async def test_tools_are_listed_with_mcp_names_and_mcp_precedence(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, everything(), time_server())
    try:
        tools = {t.name: t for t in host.registry.available() if t.source == "mcp"}
        assert {"mcp__everything__echo", "mcp__everything__get-sum", "mcp__time__get_current_time",
                "mcp__time__convert_time"} <= set(tools)
        assert "mcp__everything__trigger-elicitation-request" in tools  # added after init
        echo = tools["mcp__everything__echo"]
        assert echo.extension == "mcp:everything" and echo.runtime == "mcp" and echo.function == "echo"
        assert echo.parameters["required"] == ["message"]
        # A tool that needs MCP tasks cannot be driven here, so it is not offered.
        assert "mcp__everything__simulate-research-query" not in tools
        # Nothing ran yet for the registry: listed once, then cached.
        assert all(s.current_state().value == "stopped" for s in host.mcp.manager.servers.values())
        # An extension's tool of the same name wins; the MCP one is reached by its qualified name.
        host.registry.add(Tool(name="mcp__time__convert_time", description="", parameters={},
                               extension="someext", source="extension", function="f", folder=workdir,
                               entry=None, runtime="python"))
        assert host.registry.resolve("mcp__time__convert_time").source == "extension"
        assert host.registry.resolve("mcp:time.mcp__time__convert_time").source == "mcp"
        assert host.tools.status_report().counts["mcp_count"] >= 15
    finally:
        await host.aclose()


async def test_a_call_goes_through_the_gateway_and_keeps_structured_content(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, time_server(), everything())
    events: list = []
    host.bus.subscribe(events.append)
    try:
        outcome = await host.tools.call("mcp__time__get_current_time", {"timezone": "Europe/Paris"})
        assert outcome.ok, outcome.error
        assert outcome.result["isError"] is False
        assert outcome.result["structuredContent"]["timezone"] == "Europe/Paris"
        assert json.loads(outcome.result["content"][0]["text"])["timezone"] == "Europe/Paris"
        ended = [e for e in events if isinstance(e, ToolCallEnded)]
        assert ended[-1].tool == "mcp:time.mcp__time__get_current_time" and ended[-1].ok
        audit = [row["action"] for row in host.store.list_audit()]
        assert "tool.call" in audit and "tool.ok" in audit
        # Validation happens before the server is reached.
        refused = await host.tools.call("mcp__everything__get-sum", {"a": 1, "b": "two"})
        assert refused.error["kind"] == "invalid_arguments"
    finally:
        await host.aclose()


async def test_an_is_error_result_is_a_failed_call_that_keeps_what_the_server_said(
        home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, everything())
    try:
        outcome = await host.tools.call("mcp__everything__gzip-file-as-resource", {"data": "not a url"})
        assert not outcome.ok
        assert outcome.error["kind"] == "tool" and outcome.error["isError"] is True
        assert "Invalid URL" in outcome.error["content"][0]["text"]
    finally:
        await host.aclose()


async def test_progress_notifications_become_tool_progress_events(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, everything())
    events: list = []
    host.bus.subscribe(events.append)
    try:
        outcome = await host.tools.call("mcp__everything__trigger-long-running-operation",
                                       {"duration": 0.6, "steps": 3})
        assert outcome.ok, outcome.error
        progress = [e for e in events if isinstance(e, ToolCallProgress)]
        assert [round(p.progress, 2) for p in progress] == [0.33, 0.67, 1.0]
        assert [p.label for p in progress] == ["1/3", "2/3", "3/3"]
        assert {p.call_id for p in progress} == {outcome.call_id}
    finally:
        await host.aclose()


async def test_a_cancelled_call_ends_at_once_and_the_server_stays_usable(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, everything())
    events: list = []
    host.bus.subscribe(events.append)
    try:
        call = asyncio.ensure_future(host.tools.call("mcp__everything__trigger-long-running-operation",
                                                    {"duration": 30, "steps": 30}))
        for _ in range(100):
            if any(isinstance(e, ToolCallProgress) for e in events):
                break
            await asyncio.sleep(0.05)
        pid = host.mcp.manager.servers["everything"].pid
        started = asyncio.get_running_loop().time()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert asyncio.get_running_loop().time() - started < 2
        ended = [e for e in events if isinstance(e, ToolCallEnded)]
        assert ended[-1].error["kind"] == "cancelled"
        echo = await host.tools.call("mcp__everything__echo", {"message": "still here"})
        assert echo.ok and echo.result["content"][0]["text"] == "Echo: still here"
        assert host.mcp.manager.servers["everything"].pid == pid
    finally:
        await host.aclose()


async def test_a_call_past_the_servers_time_limit_times_out(home: Home, workdir: Path) -> None:
    # The bound is the server's, for every call: long enough for an echo on a loaded
    # machine, far shorter than the operation (which the time-out, not its end, stops).
    host = open_host(home, workdir, everything(timeout_ms=3000))
    try:
        assert host.registry.resolve("mcp__everything__echo").timeout_ms == 3000
        started = asyncio.get_running_loop().time()
        outcome = await host.tools.call("mcp__everything__trigger-long-running-operation",
                                       {"duration": 60, "steps": 60})
        assert outcome.error["kind"] == "timeout"
        assert asyncio.get_running_loop().time() - started < 60  # the operation was not waited for
        pid = host.mcp.manager.servers["everything"].pid
        assert (await host.tools.call("mcp__everything__echo", {"message": "x"})).ok
        assert host.mcp.manager.servers["everything"].pid == pid
    finally:
        await host.aclose()


async def test_an_elicitation_is_an_ask_user_form_answered_by_the_front_end(home: Home, workdir: Path) -> None:
    person = Person()
    host = open_host(home, workdir, everything(), responder=person)

    async def answer(request: Any) -> Any:
        person.asked.append(request)
        return [("Ada Lovelace" if q["name"] == "name" else
                 q["options"][0]["value"] if q.get("options") else "") for q in request.questions]

    person.answer = answer  # type: ignore[method-assign]
    try:
        outcome = await host.tools.call("mcp__everything__trigger-elicitation-request", {})
        assert outcome.ok, outcome.error
        form = person.asked[0]
        assert form.tool == "mcp:everything.mcp__everything__trigger-elicitation-request"
        assert form.call_id == outcome.call_id
        assert form.questions[0]["question"].startswith("MCP server everything asks:")
        raw = outcome.result["content"][-1]["text"]
        sent = json.loads(raw[raw.index("{"):])
        assert sent["action"] == "accept" and sent["content"]["name"] == "Ada Lovelace"
        assert sent["content"]["check"] is True and sent["content"]["integer"] == 42
    finally:
        await host.aclose()


async def test_an_elicitation_follows_the_headless_answer_policy(home: Home, workdir: Path) -> None:
    seen: list = []
    host = open_host(home, workdir, everything(),
                     responder=HeadlessResponder("deny", record=lambda r, o: seen.append((r, o))))
    try:
        outcome = await host.tools.call("mcp__everything__trigger-elicitation-request", {})
        assert outcome.ok, outcome.error
        assert '"action": "decline"' in outcome.result["content"][-1]["text"]
        assert isinstance(seen[0][0], AskUserRequest) and "denied" in seen[0][1]
    finally:
        await host.aclose()
    # An answers file answers the form, as for any tool's form.
    answers = [["Grace", False] + [None] * (len(seen[0][0].questions) - 2)]
    host = open_host(home, workdir, responder=HeadlessResponder("deny", answers=answers))
    try:
        outcome = await host.tools.call("mcp__everything__trigger-elicitation-request", {})
        text = outcome.result["content"][-1]["text"]
        assert '"action": "accept"' in text and '"name": "Grace"' in text
    finally:
        await host.aclose()


async def test_a_live_listing_refreshes_the_registry(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, everything())
    await host.aclose()
    cache = next((home.cache_dir / "mcp").glob("everything-*.json"))
    listing = json.loads(cache.read_text())
    listing["tools"] = [t for t in listing["tools"] if t["name"] == "echo"]
    cache.write_text(json.dumps(listing))

    host = Host.open(cwd=workdir)
    events: list = []
    host.bus.subscribe(events.append)
    try:
        names = {t.name for t in host.registry.available() if t.source == "mcp"}
        assert names == {"mcp__everything__echo"}
        assert (await host.tools.call("mcp__everything__echo", {"message": "hi"})).ok
        for _ in range(100):
            names = {t.name for t in host.registry.available() if t.source == "mcp"}
            if "mcp__everything__trigger-elicitation-request" in names:
                break
            await asyncio.sleep(0.05)
        assert {"mcp__everything__get-sum", "mcp__everything__trigger-elicitation-request"} <= names
        assert any(isinstance(e, ExtensionStatusChanged) for e in events)
        assert {t["name"] for t in json.loads(cache.read_text())["tools"]} >= {"get-sum", "echo"}
    finally:
        await host.aclose()


async def test_prompts_and_resources_are_listed_and_read(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, everything(), time_server())
    try:
        prompts = {p["command"]: p for p in host.mcp.prompts()}
        assert "/mcp__everything__simple-prompt" in prompts
        args = prompts["/mcp__everything__args-prompt"]["arguments"]
        assert args[0]["name"] == "city" and args[0]["required"] is True
        prompt = await host.mcp.get_prompt("everything", "args-prompt", {"city": "Lyon"})
        assert "Lyon" in json.dumps(prompt["messages"]) and "Lyon" in prompt["text"]
        row = next(r for r in host.mcp.servers() if r["name"] == "everything")
        assert "demo://resource/static/document/architecture.md" in row["resources"]
        read = await host.mcp.read_resource("everything", "demo://resource/static/document/architecture.md")
        assert read["contents"][0]["uri"] == "demo://resource/static/document/architecture.md"
        with pytest.raises(WorkbenchError, match="no longer configured"):
            await host.mcp.read_resource("nope", "x://y")
    finally:
        await host.aclose()


async def test_a_server_is_switched_off_per_chat_and_a_tool_everywhere(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, everything(), time_server())
    try:
        session = host.chats.new()["id"]
        host.mcp.set_in_chat(session, "time", False)
        offered = {t.name for t in host.switches.tools(session)}
        assert "mcp__everything__echo" in offered and not any(n.startswith("mcp__time__") for n in offered)
        assert any(t.name == "mcp__time__convert_time" for t in host.switches.tools(host.chats.new()["id"]))
        host.switches.set_extension(session, "mcp:time", True)  # the same switch as an extension's
        assert "mcp__time__convert_time" in {t.name for t in host.switches.tools(session)}

        host.mcp.set_enabled("everything", False, tool="echo")
        assert "mcp__everything__echo" not in {t.name for t in host.registry.available()}
        assert 'disabled_tools = ["echo"]' in home.config_file.read_text()
        host.mcp.set_enabled("time", False)
        assert not any(t.extension == "mcp:time" for t in host.registry.all_tools())
        assert next(r for r in host.mcp.servers() if r["name"] == "time")["state"] == "disabled"
        host.mcp.set_enabled("time", True)
        host.mcp.set_enabled("everything", True, tool="echo")
        names = {t.name for t in host.registry.available()}
        assert {"mcp__everything__echo", "mcp__time__convert_time"} <= names
        with pytest.raises(WorkbenchError, match="no tool named"):
            host.mcp.set_enabled("everything", False, tool="nope")
    finally:
        await host.aclose()


async def test_a_project_server_starts_only_once_trusted_in_that_version(home: Home, workdir: Path) -> None:
    from workbench.config.trust import trust_project

    project = workdir / ".workbench" / "config.toml"
    project.parent.mkdir()
    write_server(project, time_server())
    host = Host.open(cwd=workdir)
    try:
        assert not any(t.source == "mcp" for t in host.registry.all_tools())
        assert next(r for r in host.mcp.servers() if r["name"] == "time")["state"] == "untrusted"
        assert any("not trusted" in n for n in host.loading.notices())
    finally:
        await host.aclose()
    trust_project(home, workdir)
    host = Host.open(cwd=workdir)
    try:
        outcome = await host.tools.call("mcp__time__get_current_time", {"timezone": "UTC"})
        assert outcome.ok, outcome.error
        assert host.mcp.servers()[0]["scope"] == "project"
    finally:
        await host.aclose()
    # A changed entry waits for trust: the trusted version stays in force.
    write_server(project, time_server(args=("--local-timezone", "Europe/Paris")), replace=True)
    host = Host.open(cwd=workdir)
    try:
        row = host.mcp.servers()[0]
        assert row["state"] == "stopped" and row["pending_change"] is True
        assert row["config"]["args"] == ["--local-timezone", "UTC"]
        assert any("not trusted in this version" in n for n in host.loading.notices())
        assert host.registry.resolve("mcp__time__get_current_time").source == "mcp"
    finally:
        await host.aclose()
    trust_project(home, workdir)
    host = Host.open(cwd=workdir)
    try:
        row = host.mcp.servers()[0]
        assert row["pending_change"] is False and row["config"]["args"][-1] == "Europe/Paris"
    finally:
        await host.aclose()


async def test_hooks_apply_to_an_mcp_tool_as_to_any_other(home: Home, workdir: Path) -> None:

    guard = ROOT / "tests" / "fixtures" / "extensions" / "guard"
    done = workbench("ext", "install", str(guard), "--yes")
    assert done.returncode == 0, done.stderr
    host = open_host(home, workdir, time_server())
    try:
        # The guard's result hook hides the result of any tool named ...current_time.
        outcome = await host.tools.call("mcp__time__get_current_time", {"timezone": "UTC"},
                                       CallOptions(prompt=False))
        assert outcome.ok and outcome.result == {"iso": "hidden"}
        assert outcome.to_json()["hook_context"] == "[hook context]\nthe time was hidden"
        session = host.chats.new()["id"]
        host.switches.set_extension(session, "guard", False)  # its hooks are off in that chat
        plain = await host.tools.call("mcp__time__get_current_time", {"timezone": "UTC"},
                                     CallOptions(prompt=False, session_id=session,
                                                 without_hooks_of=frozenset({"guard"})))
        assert plain.ok and plain.result["structuredContent"]["timezone"] == "UTC"
    finally:
        await host.aclose()


async def test_the_model_is_offered_mcp_tools_and_calls_them_in_a_turn(home: Home, workdir: Path) -> None:
    replies = [{"tool_calls": [{"id": "c1", "name": "mcp__everything__get-sum",
                                "arguments": {"a": 20, "b": 22}}]},
               {"text": "done"}]
    script = workdir / "script.json"
    script.write_text(json.dumps(replies + replies))
    for server in (everything(),):
        write_server(home.config_file, server, replace=True)
    host = Host.open(cwd=workdir, model=f"scripted:{script}")
    try:
        result = await host.chats.send_prompt("add them")
        assert "mcp__everything__get-sum" in {spec.name for spec in host.chats.tool_specs(result.session_id)}
        tool_rows = [m for m in host.chats.messages(result.session_id) if m["role"] == "tool"]
        assert "The sum of 20 and 22 is 42." in tool_rows[0]["content"]
        # Switched off in this chat, the server's tools are neither offered nor run.
        host.mcp.set_in_chat(result.session_id, "everything", False)
        assert not any(s.name.startswith("mcp__") for s in host.chats.tool_specs(result.session_id))
        again = await host.chats.send_prompt("add them again", session_id=result.session_id)
        refused = [m for m in host.chats.messages(again.session_id) if m["role"] == "tool"][-1]
        assert "switched off in this chat" in refused["content"]
    finally:
        await host.aclose()
