"""Per-chat switches of single tools: the store's rows, what a chat offers and refuses."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from extension_folders import write_extension

from workbench.agent.messages import TextChunk, ToolCall, ToolCallChunk
from workbench.config.home import Home
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.core.switches import ChatSwitches
from workbench.errors import WorkbenchError
from workbench.events import ToolCallStarted
from workbench.ext.manager import ExtensionManager
from workbench.store import Store
from workbench.tools.registry import Tool, ToolRegistry


def write_garden_extension(folder: Path, name: str, tools: list[str]) -> Path:
    """An extension whose tools are found by the words "garden chores"."""
    return write_extension(folder, name, {tool: {"description": f"Garden chores: {tool}."}
                                          for tool in tools})


@pytest.fixture
def installed(tmp_path: Path, home: Home) -> Home:
    """``ext-a`` (shared_tool, only_a, other_a) and ``ext-b`` (shared_tool); ext-a wins."""
    with Store.open(home.db_path) as store:
        manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
        for name, tools in (("ext-a", ["shared_tool", "only_a", "other_a"]),
                            ("ext-b", ["shared_tool"])):
            manager.install(str(write_garden_extension(tmp_path / "src" / name, name, tools)),
                            approve=lambda plan: True)
    return home


# --- the store --------------------------------------------------------------------------

def test_tool_switches_are_kept_per_session_and_go_with_it(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        one, two = store.create_session()["id"], store.create_session()["id"]
        store.set_session_tool(one, "ext-a", "only_a", False)
        store.set_session_tool(one, "ext-a", "other_a", False)
        store.set_session_tool(one, "ext-a", "other_a", True)
        store.set_session_extension(one, "ext-b", False)
        store.set_session_tool(two, "ext-a", "only_a", True)
        assert store.session_switches(one) == ({"ext-b": False}, {("ext-a", "only_a"): False,
                                                                  ("ext-a", "other_a"): True})
        assert store.session_switches(two) == ({}, {("ext-a", "only_a"): True})
        store.delete_session(one)
        assert store.session_switches(one) == ({}, {})
        assert store._all("SELECT count(*) AS n FROM session_tools")[0]["n"] == 1
        with pytest.raises(sqlite3.IntegrityError):
            store.set_session_tool("no-such-session", "ext-a", "only_a", False)


def test_switching_an_extension_clears_its_tools_own_switches_in_that_chat(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        one, two = store.create_session()["id"], store.create_session()["id"]
        for session in (one, two):
            store.set_session_tool(session, "ext-a", "only_a", False)
        store.set_session_tool(one, "ext-b", "shared_tool", False)
        store.set_session_extension(one, "ext-a", True)
        assert store.session_switches(one) == ({"ext-a": True}, {("ext-b", "shared_tool"): False})
        assert store.session_switches(two) == ({}, {("ext-a", "only_a"): False})


# --- what a chat's switches leave out ----------------------------------------------------

def _tool(name: str, extension: str, source: str = "extension") -> Tool:
    return Tool(name=name, description=name, parameters={"type": "object"}, extension=extension,
                source=source, function=name, folder=Path("."), entry=None, runtime="python")


@pytest.fixture
def registry() -> ToolRegistry:
    found = ToolRegistry(platforms={"linux"})
    for tool in (_tool("shared", "ext-a"), _tool("shared", "ext-b"), _tool("only_a", "ext-a"),
                 _tool("other_a", "ext-a"), _tool("read", "builtin", "builtin")):
        found.add(tool)
    return found


def test_a_tool_switched_off_gives_its_name_to_the_next_tool(registry):
    switches = ChatSwitches(tools={("ext-a", "shared"): False})
    exclude, skip = switches.exclusions(registry)
    assert (exclude, skip) == (frozenset(), frozenset({"ext-a.shared"}))
    assert [t.qualified_name for t in registry.available(exclude=exclude, skip=skip)] == \
        ["ext-a.only_a", "ext-a.other_a", "builtin.read", "ext-b.shared"]
    assert switches.route(registry, "shared") == ("ext-b.shared", None)
    assert switches.route(registry, "only_a") == ("only_a", None)
    name, refusal = switches.route(registry, "ext-a.shared")
    assert (name, refusal.kind) == ("ext-a.shared", "not_found")
    assert refusal.message == "'ext-a.shared' is switched off in this chat"


def test_a_tool_kept_on_in_an_extension_switched_off_is_the_only_one_left_of_it(registry):
    switches = ChatSwitches(extensions={"ext-a": False}, tools={("ext-a", "only_a"): True})
    assert switches.extensions_off == {"ext-a"}
    exclude, skip = switches.exclusions(registry)
    assert exclude == frozenset() and skip == {"ext-a.shared", "ext-a.other_a"}
    assert [t.qualified_name for t in registry.available(exclude=exclude, skip=skip)] == \
        ["ext-a.only_a", "builtin.read", "ext-b.shared"]
    assert switches.route(registry, "only_a") == ("only_a", None)
    assert switches.route(registry, "shared") == ("ext-b.shared", None)
    name, refusal = switches.route(registry, "other_a")
    assert refusal.message == "'other_a' belongs to the extension ext-a, which is switched off in this chat"


def test_a_chat_with_nothing_switched_routes_every_name_as_it_is(registry):
    assert ChatSwitches().route(registry, "shared") == ("shared", None)
    assert ChatSwitches().exclusions(registry) == (frozenset(), frozenset())


# --- the host -----------------------------------------------------------------------------

def test_one_tool_is_switched_off_in_one_chat_only(installed, workdir):
    with Host.open(cwd=workdir) as host:
        chat, other = host.chats.new()["id"], host.chats.new()["id"]
        everything = {t.qualified_name for t in host.switches.tools(chat)}
        switched = host.switches.set_tool(chat[:8], "only_a", False)
        assert switched.qualified_name == "ext-a.only_a"
        assert {t.qualified_name for t in host.switches.tools(chat)} == everything - {"ext-a.only_a"}
        assert "only_a" not in [s.name for s in host.chats.tool_specs(chat)]
        assert {t.qualified_name for t in host.switches.tools(other)} == everything
        assert "only_a" in [s.name for s in host.chats.tool_specs(other)]
        assert "only_a" in [s.name for s in host.chats.tool_specs()]

        host.switches.set_tool(chat, "shared_tool", False)  # the winner: the next tool takes the name
        offered = {t.qualified_name for t in host.switches.tools(chat)}
        assert "ext-b.shared_tool" in offered and "ext-a.shared_tool" not in offered
        host.switches.set_tool(chat, "shared_tool", True)  # the one switched off, back on
        assert "ext-a.shared_tool" in {t.qualified_name for t in host.switches.tools(chat)}
        audit = host.store._all("SELECT action, subject, detail FROM audit_log "
                                "WHERE action LIKE 'session.tool.%' ORDER BY id")
        assert [(r["action"], r["subject"], json.loads(r["detail"])) for r in audit] == [
            ("session.tool.disable", "ext-a.only_a", {"session_id": chat}),
            ("session.tool.disable", "ext-a.shared_tool", {"session_id": chat}),
            ("session.tool.enable", "ext-a.shared_tool", {"session_id": chat})]


def test_one_tool_stays_on_in_a_chat_that_switched_its_extension_off(installed, workdir):
    with Host.open(cwd=workdir) as host:
        chat = host.chats.new()["id"]
        host.switches.set_extension(chat, "ext-a", False)
        host.switches.set_tool(chat, "ext-a.other_a", True)
        offered = {t.qualified_name for t in host.switches.tools(chat)}
        assert "ext-a.other_a" in offered
        assert not {"ext-a.only_a", "ext-a.shared_tool"} & offered
        host.switches.set_extension(chat, "ext-a", False)  # the extension's switch again: it follows
        assert "ext-a.other_a" not in {t.qualified_name for t in host.switches.tools(chat)}


def test_the_switches_of_a_chat_are_listed_for_a_tools_menu(installed, workdir):
    with Host.open(cwd=workdir) as host:
        chat = host.chats.new()["id"]
        host.switches.set_extension(chat, "ext-a", False)
        host.switches.set_tool(chat, "only_a", True)
        listing = host.switches.menu(chat[:8])
        assert listing.session == chat
        extensions = {e.name: (e.on, e.own) for e in listing.extensions}
        assert extensions["ext-a"] == (False, True) and extensions["ext-b"] == (True, False)
        tools = {t.qualified_name: (t.on, t.own, t.offered) for t in listing.tools}
        assert tools["ext-a.only_a"] == (True, True, True)
        assert tools["ext-a.other_a"] == (False, False, False)
        assert tools["ext-b.shared_tool"] == (True, False, True)
        assert tools["workbench.extensions_status"] == (True, False, True)
        assert "workbench.tool_search" not in tools
        host.switches.set_extension(chat, "ext-a", True)
        tools = {t.qualified_name: (t.on, t.offered) for t in host.switches.menu(chat).tools}
        assert tools["ext-b.shared_tool"] == (True, False)  # on, but ext-a's wins its name


def test_switching_needs_a_known_session_and_a_tool_a_chat_can_switch(installed, workdir):
    with Host.open(cwd=workdir) as host:
        chat = host.chats.new()["id"]
        with pytest.raises(WorkbenchError, match="no tool named 'nope' here"):
            host.switches.set_tool(chat, "nope", False)
        with pytest.raises(WorkbenchError, match="no session 'missing'"):
            host.switches.set_tool("missing", "only_a", False)
        with pytest.raises(WorkbenchError, match="tool_invoke is offered only when a turn needs it"):
            host.switches.set_tool(chat, "tool_invoke", False)
        assert host.store.session_switches(chat) == ({}, {})


async def test_a_direct_call_in_a_chat_is_refused_when_the_chat_switched_the_tool_off(installed, workdir):
    async with Host.open(cwd=workdir) as host:
        chat = host.chats.new()["id"]
        host.switches.set_tool(chat, "only_a", False)
        refused = await host.tools.call("only_a", {}, CallOptions(session_id=chat))
        assert refused.error == {"kind": "not_found",
                                 "message": "'only_a' is switched off in this chat"}
        elsewhere = await host.tools.call("only_a", {}, CallOptions(session_id=host.chats.new()["id"]))
        assert elsewhere.ok and elsewhere.result == {"from": "ext-a", "tool": "only_a"}
        assert (await host.tools.call("only_a", {})).ok  # no chat: no chat's switches
        host.switches.set_tool(chat, "shared_tool", False)
        routed = await host.tools.call("shared_tool", {}, CallOptions(session_id=chat))
        assert routed.result == {"from": "ext-b", "tool": "shared_tool"}
        audit = [r["action"] for r in host.store.list_audit(limit=None)]
        assert audit.count("tool.refused.not_found") == 1


class Calling:
    """A model that makes the calls it is given, one per step, and records what it was offered."""

    def __init__(self, calls: list[ToolCall]) -> None:
        self.calls = list(calls)
        self.offered: list[list[str]] = []

    async def stream(self, messages, tools):
        self.offered.append([spec.name for spec in tools])
        if self.calls:
            yield ToolCallChunk(self.calls.pop(0))
        else:
            yield TextChunk("done")


async def test_a_turn_is_refused_the_tool_its_chat_switched_off_also_through_tool_invoke(installed, workdir):
    model = Calling([
        ToolCall("c1", "only_a", {}),
        ToolCall("c2", "tool_invoke", {"name": "only_a", "arguments": {}}),
        ToolCall("c3", "tool_search", {"query": "garden chores", "limit": 20}),
        ToolCall("c4", "other_a", {})])
    async with Host.open(cwd=workdir, model="echo", provider=model) as host:
        chat = host.chats.new()["id"]
        host.switches.set_tool(chat, "only_a", False)
        seen = []
        host.bus.subscribe(seen.append)
        await host.chats.send_prompt("go", session_id=chat)
        assert "only_a" not in model.offered[0] and "other_a" in model.offered[0]
        rows = [json.loads(m["content"]) for m in host.chats.messages(chat) if m["role"] == "tool"]
        assert rows[0]["error"] == {"kind": "not_found", "message": "'only_a' is switched off in this chat"}
        assert rows[1]["ok"] is False and rows[1]["error"]["kind"] == "not_found"
        assert "switched off in this chat" in rows[1]["error"]["message"]
        found = [match["name"] for match in rows[2]["result"]["matches"]]
        assert "only_a" not in found and "other_a" in found
        assert rows[3] == {"ok": True, "result": {"from": "ext-a", "tool": "other_a"}}
        started = [e.tool for e in seen if isinstance(e, ToolCallStarted)]
        assert "ext-a.only_a" not in started and "ext-a.other_a" in started


def test_the_tools_menu_lists_the_tools_sessions_tools_all_lists(tmp_path, home, workdir):
    """One listing for both faces: a tool that does not run here is in neither, and the
    Tools menu's tools of an extension are the menu's own rows for it."""
    folder = write_garden_extension(tmp_path / "src" / "ext-p", "ext-p", ["here", "elsewhere"])
    manifest = json.loads((folder / "loca.json").read_text())
    manifest["tools"][1]["platforms"] = ["windows"]
    (folder / "loca.json").write_text(json.dumps(manifest))
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").install(
            str(folder), approve=lambda plan: True)
    with Host.open(cwd=workdir) as host:
        chat = host.chats.new()["id"]
        host.switches.set_tool(chat, "here", False)
        menu = host.switches.menu(chat)
        rows = host.switches.tool_rows(chat, "ext-p")
        assert rows == [t for t in menu.tools if t.extension == "ext-p"]
        assert [(t.name, t.on, t.own) for t in rows] == [("here", False, True)]
        assert [t.name for t in host.switches.tool_rows(None, "ext-p")] == ["here"]
        [row] = [r for r in host.switches.rows(chat) if r.name == "ext-p"]
        assert (row.kind, row.on) == ("extension", True)
