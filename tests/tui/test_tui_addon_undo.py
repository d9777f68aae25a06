"""Pilot: a chat's model adds a calendar event (the add-on's sandboxed tool, run at once
in the interactive chat, asking nothing), its card offers to undo the change, and ``u``
``u`` on the focused card undoes it through ``Host.changes`` — one mechanism with the
shell's change sets."""

from __future__ import annotations

from commands import workbench
from shell_helpers import open_screen, settle
from textual.widgets import ListView, Switch
from visible import screen_text, until_shown

from workbench.tui.screens.tools_menu import ExtensionSwitch, ToolsMenuScreen
from workbench.tui.widgets.tool_call_card import ToolCallCard

SIZE = (100, 30)


async def test_u_on_an_addon_calls_card_undoes_its_change(make_app, until) -> None:
    done = workbench("ext", "install", "calendar", "--yes")
    assert done.returncode == 0, done.stderr
    app = make_app([{"text": "Adding it.", "tool_calls": [{
        "name": "addon__calendar__event-create",
        "arguments": {"title": "Dinner with Sam", "start": "2026-12-04T20:00"}}]},
        {"text": "Added dinner with Sam."}])
    async with app.run_test(size=SIZE) as pilot:
        # Installed, the add-on is off in a new chat: the person switches it on in the Tools menu.
        menu = await open_screen(pilot, until, "ctrl+t", ToolsMenuScreen)
        await until(pilot, lambda: "calendar" in [row.name for row in menu.rows])
        rows = {item.row.name: item for item in menu.query(ExtensionSwitch)}
        assert rows["calendar"].query_one(Switch).value is False
        menu.query_one(ListView).index = [row.name for row in menu.rows].index("calendar")
        await settle(pilot, until)
        await pilot.press("space")
        await until(pilot, lambda: app.host.chats.sessions())
        session = app.host.chats.sessions()[0]["id"]
        await until(pilot, lambda: "calendar" not in app.host.switches.of(session).extensions_off)
        await settle(pilot, until)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat and app.chat.session_id == session)
        await pilot.press(*"add dinner with Sam at 8", "enter")
        await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=60)
        card = await until_shown(pilot, lambda: app.chat.query_one(ToolCallCard).ok is not None
                                 and app.chat.query_one(ToolCallCard))
        assert card.ok is True, card.outcome
        change_set = card.state.change_set
        assert isinstance(change_set, int)
        assert app.host.changes.show(change_set)["command"].startswith("Added “Dinner with Sam”")
        assert f"undo change set {change_set} (u)" in screen_text(app)
        card.focus()
        await pilot.press("u", "u")
        await until(pilot, lambda: card.state.undone, timeout=30)
        assert app.host.changes.show(change_set)["state"] == "undone"
        listed = await app.host.tools.call("addon__calendar__events-list",
                                           {"from": "2026-12-04", "to": "2026-12-04"})
        assert listed.ok and listed.result["occurrences"] == []
