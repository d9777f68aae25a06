"""Pilot tests of the MCP servers screen and of MCP servers in a chat's Tools menu, with
a real server (server-everything, installed into ``.mcp-servers/`` by ``make test``) and
a project server that waits for trust."""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import alive
from shell_helpers import open_screen, options_of, settle, text_of
from textual.widgets import ListView, OptionList

from workbench.config.home import Home
from workbench.mcp.config import ServerConfig, write_server
from workbench.tui.screens.mcp import McpScreen
from workbench.tui.screens.tools_menu import ToolsMenuScreen

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
SIZE = (80, 24)
PROJECT = "[mcp.servers.team]\ncommand = \"team-server\"\n"


@pytest.fixture(autouse=True)
def servers(home: Home, workdir: Path) -> None:
    """server-everything in the person's config; an untrusted one in the project's."""
    assert EVERYTHING.exists(), "the MCP test servers are missing; `make test` installs them"
    write_server(home.config_file, ServerConfig(name="everything", command="node",
                                                args=(str(EVERYTHING), "stdio")))
    (workdir / ".workbench").mkdir()
    (workdir / ".workbench" / "config.toml").write_text(PROJECT)


async def open_mcp(pilot, until) -> McpScreen:
    screen = await open_screen(pilot, until, "f3", McpScreen)
    await until(pilot, lambda: len(screen.servers) == 2, timeout=40)
    await settle(pilot, until)
    return screen


async def test_servers_are_listed_with_their_state_and_tools(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_mcp(pilot, until)
        listed = options_of(screen.query_one(OptionList))
        assert listed[0].startswith("everything\n") and " tools" in listed[0]
        assert listed[1] == "team\nuntrusted · tools unknown"
        detail = text_of(screen.query_one("#mcp-detail"))
        assert "stdio  node " in detail and "global · " in detail
        assert "⚙ mcp__everything__echo" in detail
        await pilot.press("down")
        await until(pilot, lambda: "in a project config that is not trusted" in text_of(
            screen.query_one("#mcp-detail")))


async def test_closing_the_app_stops_the_servers_it_started(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await open_mcp(pilot, until)
        await pilot.press("c")  # check: start it now
        await until(pilot, lambda: app.host.mcp.manager.servers["everything"].pid is not None, timeout=40)
        pid = app.host.mcp.manager.servers["everything"].pid
        assert alive(pid)
    assert not alive(pid)


async def test_checking_and_switching_a_server_off_everywhere(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_mcp(pilot, until)
        await pilot.press("c")
        message = screen.query_one("#mcp-message")
        await until(pilot, lambda: "everything is running." in text_of(message), timeout=40)
        await until(pilot, lambda: options_of(screen.query_one(OptionList))[0].startswith(
            "everything\nrunning"))
        await pilot.press("s")
        await until(pilot, lambda: app.host.mcp.disabled() == {"everything"})
        await until(pilot, lambda: options_of(screen.query_one(OptionList))[0].startswith(
            "everything\ndisabled"))
        assert not [t for t in app.host.registry.available() if t.extension == "mcp:everything"]
        await pilot.press("s")
        await until(pilot, lambda: not app.host.mcp.disabled())
        await until(pilot, lambda: [t for t in app.host.registry.available()
                                    if t.extension == "mcp:everything"], timeout=40)


async def test_a_chat_switches_a_server_off_in_its_tools_menu(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await open_mcp(pilot, until)
        await pilot.press("escape")
        menu = await open_screen(pilot, until, "ctrl+t", ToolsMenuScreen)
        await until(pilot, lambda: "mcp:everything" in [row.name for row in menu.rows])
        rows = {row.name: row for row in menu.rows}
        assert rows["mcp:everything"].kind == "MCP server" and rows["mcp:everything"].on
        assert rows["mcp:team"].note == "in a project config that is not trusted"
        names = [row.name for row in menu.rows]
        menu.query_one(ListView).index = names.index("mcp:everything")
        # The detail follows the highlighted row once the list has moved to it.
        await until(pilot, lambda: "echo" in text_of(menu.query_one("#tools-detail")))
        await pilot.press("space")
        await until(pilot, lambda: app.host.chats.sessions() and app.host.tools.status_report(
            app.host.chats.sessions()[0]["id"]).session.switched_off == ("mcp:everything",))
        session_tools = {t.extension for t in app.host.switches.tools(app.host.chats.sessions()[0]["id"])}
        assert "mcp:everything" not in session_tools
        # An untrusted server cannot be switched here: Space does nothing on it.
        menu.query_one(ListView).index = names.index("mcp:team")
        await settle(pilot, until)
        await pilot.press("space")
        await settle(pilot, until)
        assert app.host.tools.status_report(app.host.chats.sessions()[0]["id"]).session.switched_off == (
            "mcp:everything",)
