"""Per-chat extension switches: the store's rows, what a chat offers, and refused calls."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from extension_folders import write_extension

from workbench.agent.messages import TextChunk
from workbench.config.home import Home
from workbench.core.host import Host
from workbench.core.switches import ChatSwitches
from workbench.errors import WorkbenchError
from workbench.events import ToolCallEnded, ToolCallStarted
from workbench.ext.manager import ExtensionManager
from workbench.store import Store
from workbench.tools.registry import Tool, ToolRegistry


@pytest.fixture
def installed(tmp_path: Path, home: Home) -> Home:
    """``ext-a`` (shared_tool, only_a) and ``ext-b`` (shared_tool) installed; ext-a wins."""
    with Store.open(home.db_path) as store:
        manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
        for name, tools in (("ext-a", ["shared_tool", "only_a"]), ("ext-b", ["shared_tool"])):
            manager.install(str(write_extension(tmp_path / "src" / name, name, tools)),
                            approve=lambda plan: True)
    return home


# --- the store --------------------------------------------------------------------------

def test_switches_are_kept_per_session_and_go_with_it(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        one, two = store.create_session()["id"], store.create_session()["id"]
        store.set_session_extension(one, "ext-a", False)
        store.set_session_extension(one, "ext-b", False)
        store.set_session_extension(one, "ext-b", True)
        store.set_session_extension(two, "ext-a", True)
        assert store.session_extensions(one) == {"ext-a": False, "ext-b": True}
        assert store.switched_off_extensions(one) == {"ext-a"}
        assert store.switched_off_extensions(two) == set()
        store.delete_session(one)
        assert store.session_extensions(one) == {}
        assert store._all("SELECT count(*) AS n FROM session_extensions")[0]["n"] == 1


def test_a_switch_needs_a_real_session(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        with pytest.raises(sqlite3.IntegrityError):
            store.set_session_extension("no-such-session", "ext-a", False)


# --- the registry -----------------------------------------------------------------------

def _tool(name: str, extension: str, source: str = "extension") -> Tool:
    return Tool(name=name, description=name, parameters={"type": "object"}, extension=extension,
                source=source, function=name, folder=Path("."), entry=None, runtime="python")


def off(extension: str) -> ChatSwitches:
    """The switches of a chat that switched ``extension`` off."""
    return ChatSwitches({extension: False})


def test_leaving_an_extension_out_gives_its_names_to_the_next_tool():
    registry = ToolRegistry(platforms={"linux"})
    for tool in (_tool("shared", "ext-a"), _tool("shared", "ext-b"), _tool("only_a", "ext-a"),
                 _tool("read", "builtin", "builtin")):
        registry.add(tool)
    assert [t.qualified_name for t in registry.available(exclude={"ext-a"})] == \
        ["builtin.read", "ext-b.shared"]
    assert registry.resolve("shared", exclude={"ext-a"}).extension == "ext-b"
    assert off("ext-a").route(registry, "shared") == ("ext-b.shared", None)
    assert off("ext-b").route(registry, "shared") == ("shared", None)
    assert off("ext-a").route(registry, "missing") == ("missing", None)
    name, refusal = off("ext-a").route(registry, "ext-a.shared")
    assert refusal.kind == "not_found" and "switched off in this chat" in refusal.message
    name, refusal = off("ext-a").route(registry, "only_a")
    assert (name, refusal.kind) == ("only_a", "not_found")
    assert refusal.message == "'only_a' belongs to the extension ext-a, which is switched off in this chat"


# --- the host -----------------------------------------------------------------------------

def test_a_chat_offers_the_tools_of_the_extensions_it_keeps_on(installed, workdir):
    with Host.open(cwd=workdir) as host:
        session = host.chats.new()["id"]
        everything = {t.qualified_name for t in host.switches.tools(session)}
        assert {"ext-a.shared_tool", "ext-a.only_a", "workbench.extensions_status"} <= everything
        host.switches.set_extension(session[:8], "ext-a", False)
        offered = {t.qualified_name for t in host.switches.tools(session)}
        assert offered == everything - {"ext-a.shared_tool", "ext-a.only_a"} | {"ext-b.shared_tool"}
        assert [s.name for s in host.chats.tool_specs(session)] == sorted(t.name for t in host.switches.tools(session))
        assert "only_a" in [s.name for s in host.chats.tool_specs()]  # other chats are untouched
        other = host.chats.new()["id"]
        assert {t.qualified_name for t in host.switches.tools(other)} == everything
        host.switches.set_extension(session, "ext-a", True)
        assert {t.qualified_name for t in host.switches.tools(session)} == everything
        audit = host.store._all("SELECT action, subject FROM audit_log WHERE action LIKE 'session.%'")
        assert [(r["action"], r["subject"]) for r in audit] == [
            ("session.extension.disable", "ext-a"), ("session.extension.enable", "ext-a")]


def test_switching_needs_a_known_session_and_extension(installed, workdir):
    with Host.open(cwd=workdir) as host:
        session = host.chats.new()["id"]
        with pytest.raises(WorkbenchError, match="no extension named 'nope'"):
            host.switches.set_extension(session, "nope", False)
        with pytest.raises(WorkbenchError, match="no session 'missing'"):
            host.switches.set_extension("missing", "ext-a", False)
        with pytest.raises(WorkbenchError, match="no session"):
            host.switches.tools("missing")
        host.switches.set_extension(session, "workbench", False)  # the host's own tools too
        assert "extensions_status" not in [t.name for t in host.switches.tools(session)]


class Recording:
    """A model that calls the tools it is given in ``calls`` and records what it was offered."""

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = list(calls)
        self.offered: list[list[str]] = []

    async def stream(self, messages, tools):
        from workbench.agent.messages import ToolCall, ToolCallChunk

        self.offered.append([spec.name for spec in tools])
        if self.calls:
            call_id, name = self.calls.pop(0)
            yield ToolCallChunk(ToolCall(call_id, name, {}))
        else:
            yield TextChunk("done")


async def test_a_turn_is_offered_the_chat_tools_and_refused_switched_off_ones(installed, workdir):
    model = Recording([("c1", "only_a"), ("c2", "ext-a.shared_tool")])
    with Host.open(cwd=workdir, model="echo", provider=model) as host:
        session = host.chats.new()["id"]
        host.switches.set_extension(session, "ext-a", False)
        seen = []
        host.bus.subscribe(seen.append)
        result = await host.chats.send_prompt("go", session_id=session)
        assert result.text == "done"
        assert "only_a" not in model.offered[0] and "shared_tool" in model.offered[0]
        results = [m for m in host.chats.messages(session) if m["role"] == "tool"]
        rows = [json.loads(m["content"]) for m in results]
        assert rows == [
            {"ok": False, "error": {"kind": "not_found", "message": "'only_a' belongs to the "
                                    "extension ext-a, which is switched off in this chat"}},
            {"ok": False, "error": {"kind": "not_found", "message": "'ext-a.shared_tool' belongs "
                                    "to the extension ext-a, which is switched off in this chat"}}]
        ended = [e for e in seen if isinstance(e, ToolCallEnded)]
        assert [(e.call_id, e.ok, e.session_id) for e in ended] == [
            (results[0]["call_id"], False, session), (results[1]["call_id"], False, session)]
        assert [m["tool_call_id"] for m in results] == ["c1", "c2"]
        audit = host.store._all("SELECT action, subject FROM audit_log WHERE action LIKE 'tool.%'")
        assert [(r["action"], r["subject"]) for r in audit] == [
            ("tool.refused.not_found", "only_a"), ("tool.refused.not_found", "ext-a.shared_tool")]


async def test_a_name_whose_winner_is_switched_off_runs_the_next_tool(installed, workdir):
    model = Recording([("c1", "shared_tool")])
    with Host.open(cwd=workdir, model="echo", provider=model) as host:
        session = host.chats.new()["id"]
        host.switches.set_extension(session, "ext-a", False)
        seen = []
        host.bus.subscribe(seen.append)
        await host.chats.send_prompt("go", session_id=session)
        started = [e for e in seen if isinstance(e, ToolCallStarted)]
        assert [e.tool for e in started] == ["ext-b.shared_tool"]
        (row,) = [m for m in host.chats.messages(session) if m["role"] == "tool"]
        assert json.loads(row["content"]) == {"ok": True, "result": {"from": "ext-b", "tool": "shared_tool"}}
