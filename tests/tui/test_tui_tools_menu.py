"""Pilot tests of a chat's Tools menu: switches kept per chat, grants shown and revoked."""

from __future__ import annotations

import sys
from pathlib import Path

from shell_helpers import open_screen, settle, text_of
from textual.widgets import Button, ListView, Switch
from visible import until_screen, until_shown

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "ext"))
from ext_samples import DEFAULT_PERMISSIONS, tool, write_extension  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "tools"))
from example_source import Greetings  # noqa: E402

from workbench.tui.screens.tools_menu import ExtensionSwitch, ToolsMenuScreen, ToolSwitch  # noqa: E402

SIZE = (80, 24)
FOO = "loca-extension-foo"


def yes(_plan: object) -> bool:
    return True


def switches(menu: ToolsMenuScreen) -> dict[str, bool]:
    """Each extension listed and whether its switch shows on."""
    return {item.row.name: item.query_one(Switch).value for item in menu.query(ExtensionSwitch)}


async def open_menu(pilot, until) -> ToolsMenuScreen:
    menu = await open_screen(pilot, until, "ctrl+t", ToolsMenuScreen)
    await until(pilot, lambda: "builtin" in switches(menu))
    await settle(pilot, until)
    return menu


async def highlight(pilot, menu: ToolsMenuScreen, name: str, until) -> None:
    names = [row.name for row in menu.rows]
    menu.query_one(ListView).index = names.index(name)
    await settle(pilot, until)


async def test_switching_off_in_a_new_chat_starts_its_session_and_is_kept(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        menu = await open_menu(pilot, until)
        assert app.chat.session_id is None
        assert "a new chat" in menu.query_one("#tools-dialog").border_subtitle
        assert switches(menu)["builtin"] is True
        await highlight(pilot, menu, "builtin", until)
        await pilot.press("space")
        await until(pilot, lambda: app.host.chats.sessions())
        await settle(pilot, until)
        session_id = app.host.chats.sessions()[0]["id"]
        assert app.host.tools.status_report(session_id).session.switched_off == ("builtin",)
        assert "builtin" not in {t.extension for t in app.host.switches.tools(session_id)}
        assert "This chat no longer uses builtin." in text_of(menu.query_one("#tools-message"))
        assert menu.query_one("#tools-dialog").border_subtitle == f"session {session_id[:8]}"
        # The chat continues in that session, and the menu opened again shows the switch off.
        await until(pilot, lambda: app.chat.session_id == session_id)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
        menu = await open_menu(pilot, until)
        assert switches(menu)["builtin"] is False
        await highlight(pilot, menu, "builtin", until)
        await pilot.press("enter")
        await until(pilot, lambda: not app.host.tools.status_report(session_id).session.switched_off)
        assert len(app.host.chats.sessions()) == 1


async def test_a_click_on_the_switch_switches_it(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        menu = await open_menu(pilot, until)
        names = [row.name for row in menu.rows]
        item = list(menu.query(ExtensionSwitch))[names.index("workbench")]
        await pilot.click(item.query_one(Switch))
        await until(pilot, lambda: app.host.chats.sessions()
                    and app.host.tools.status_report(app.host.chats.sessions()[0]["id"]).session.switched_off)
        assert app.host.tools.status_report(app.host.chats.sessions()[0]["id"]).session.switched_off == (
            "workbench",)
        assert switches(menu)["workbench"] is False


async def test_grants_are_shown_and_revoked(make_app, until, workdir) -> None:
    app = make_app([])
    app.host.extensions.install(str(write_extension(
        workdir / "foo", tools=[tool("fetch_page", DEFAULT_PERMISSIONS), tool("count_words")])), yes)
    read = next(row for row in app.host.grants.explain(f"{FOO}.fetch_page") if row["kind"] == "read")
    app.host.store.add_grant(f"{FOO}.fetch_page", "read", read["value"], "always")
    async with app.run_test(size=SIZE) as pilot:
        menu = await open_menu(pilot, until)
        await highlight(pilot, menu, FOO, until)
        detail = menu.query_one("#tools-detail")
        # The detail mounts row by row, a granted permission's row (its text beside its
        # Revoke button) after the tool's title: wait for that row, the one a person reads.
        await until_shown(pilot, lambda: detail.query(Button) and "granted always since" in text_of(detail))
        shown = text_of(detail)
        assert "count_words" in shown and "needs no permissions" in shown and "fetch_page" in shown
        assert "read ~/Documents  granted always since" in shown
        assert "net example.com:443  asks when needed" in shown
        revoke = detail.query_one(Button)
        assert str(revoke.label) == "Revoke"
        revoke.focus()
        await pilot.press("enter")
        await until(pilot, lambda: app.host.grants.explain(f"{FOO}.fetch_page")[0]["state"]
                    == "not granted")
        await until(pilot, lambda: "read ~/Documents  asks when needed" in text_of(detail))
        await settle(pilot, until)
        assert not detail.query(Button)
        assert "Revoked read ~/Documents of loca-extension-foo.fetch_page" in text_of(
            menu.query_one("#tools-message"))


async def test_the_menu_opens_only_over_the_chat_and_closes_with_its_key(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await open_menu(pilot, until)
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.screen is app.chat)
        await pilot.press("f2")
        await until(pilot, lambda: type(app.screen).__name__ == "TasksScreen")
        await pilot.press("ctrl+t")
        await until_screen(pilot, ToolsMenuScreen)
        # Over the chat, not over the Tasks screen it was opened from.
        assert app.screen_stack[-2] is app.chat


def tool_switches(menu: ToolsMenuScreen) -> dict[str, bool]:
    """Each tool shown on the right and whether its switch shows on."""
    return {switch.tool.name: switch.value for switch in menu.query(ToolSwitch)}


async def test_a_single_tool_is_switched_in_the_chat_and_wins_over_its_extension(
        make_app, until, workdir) -> None:
    app = make_app([])
    app.host.extensions.install(str(write_extension(
        workdir / "foo", tools=[tool("fetch_page"), tool("count_words")])), yes)
    async with app.run_test(size=SIZE) as pilot:
        menu = await open_menu(pilot, until)
        await highlight(pilot, menu, FOO, until)
        await until(pilot, lambda: tool_switches(menu) == {"count_words": True, "fetch_page": True})
        await pilot.press("tab")
        assert isinstance(app.focused, ToolSwitch) and app.focused.tool.name == "count_words"
        await pilot.press("space")
        await until(pilot, lambda: app.host.chats.sessions())
        session_id = app.host.chats.sessions()[0]["id"]
        offered = lambda: {t.name for t in app.host.switches.tools(session_id)  # noqa: E731
                           if t.extension == FOO}
        await until(pilot, lambda: offered() == {"fetch_page"})
        detail = menu.query_one("#tools-detail")
        await until(pilot, lambda: "count_words  off in this chat" in text_of(detail))
        assert "This chat no longer offers count_words." in text_of(menu.query_one("#tools-message"))
        # The extension off, its one tool switched on again: that tool stays in the chat.
        menu.query_one(ListView).focus()
        await pilot.press("space")
        await until(pilot, lambda: offered() == set())
        await until(pilot, lambda: tool_switches(menu) == {"count_words": False, "fetch_page": False})
        await pilot.click(list(menu.query(ToolSwitch))[0])
        await until(pilot, lambda: offered() == {"count_words"})
        await until(pilot, lambda: tool_switches(menu) == {"count_words": True, "fetch_page": False})


async def test_a_new_tool_source_is_listed_and_switched_like_an_extension(make_app, until) -> None:
    app = make_app([])
    app.host.sources.register(Greetings())
    async with app.run_test(size=SIZE) as pilot:
        app.host.loading.reload()
        menu = await open_menu(pilot, until)
        assert switches(menu)["greetings"] is True
        row = next(row for row in menu.rows if row.name == "greetings")
        assert (row.title, row.kind, row.tools) == ("Greetings", "greeter", 1)
        assert [r.name for r in menu.rows][-1] == "greetings"  # a kind of its own comes last
        await highlight(pilot, menu, "greetings", until)
        await until(pilot, lambda: "greet" in text_of(menu.query_one("#tools-detail")))
        await pilot.press("space")
        await until(pilot, lambda: app.host.chats.sessions()
                    and app.host.tools.status_report(app.host.chats.sessions()[0]["id"]).session.switched_off)
        session_id = app.host.chats.sessions()[0]["id"]
        assert app.host.tools.status_report(session_id).session.switched_off == ("greetings",)
        assert "greet" not in {t.name for t in app.host.switches.tools(session_id)}


async def test_the_network_row_chooses_the_shells_network_within_the_ceiling(make_app, until, home) -> None:
    """The shell's Network row: a person picks Package registries from its list, the
    chat keeps it (through the core, as `workbench sessions network` does), the menu
    says what is in force, and a level past the ceiling is capped by it."""
    from textual.widgets import Select

    (home.root / "config.toml").write_text('[shell]\nnetwork_ceiling = "registries"\n')
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        menu = await open_menu(pilot, until)
        await highlight(pilot, menu, "shell", until)
        await until(pilot, lambda: menu.query("#shell-network"))
        network = menu.query_one("#shell-network", Select)
        await until(pilot, lambda: network.value == "off")  # the setting's, as drawn
        # The shell's grant names the chat's folder as its prompt and the file tools do.
        assert "write this project (~/work)" in text_of(menu.query_one("#tools-detail"))
        note = text_of(menu.query_one("#shell-network-note"))
        assert "ceiling: Package registries (PyPI, npm, Debian) (shell.network_ceiling" in note
        network.focus()
        await pilot.press("enter")  # open the list
        await until(pilot, lambda: network.expanded)
        await pilot.press("down", "enter")  # Off -> Package registries
        await until(pilot, lambda: "The shell's network in this chat" in text_of(menu.query_one("#tools-message")))
        assert ("The shell's network in this chat: Package registries (PyPI, npm, Debian)."
                in text_of(menu.query_one("#tools-message")))
        session_id = app.host.chats.sessions()[0]["id"]
        assert app.host.shell.network(session_id)["chosen"] == "registries"

        await pilot.press("enter")
        await until(pilot, lambda: network.expanded)
        await pilot.press("down", "enter")  # All public sites: beyond the ceiling
        await until(pilot, lambda: app.host.shell.network(session_id)["chosen"] == "all")
        await until(pilot, lambda: "Package registries" in text_of(menu.query_one("#tools-message"))
                    and app.host.shell.network(session_id)["level"] == "registries")

        await pilot.press("escape")  # the list is closed: the menu
        await until(pilot, lambda: app.screen is app.chat)
        menu = await open_menu(pilot, until)
        await highlight(pilot, menu, "shell", until)
        await until(pilot, lambda: menu.query("#shell-network"))
        await until(pilot, lambda: menu.query_one("#shell-network", Select).value == "all")
        assert "in force: Package registries" in text_of(menu.query_one("#shell-network-note"))
