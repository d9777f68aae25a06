"""Pilot test of the Plugins screen: the example plugin listed with its state, its pane
drawn by the card widget from the document the plugin serves, a button of the pane
running the plugin's tool as the person, and Stop ending its instance."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from shell_helpers import open_screen, settle, text_of
from textual.widgets import Button, Input

from workbench.core.plugin_service import open_plugins
from workbench.tui.screens.plugins import PluginsScreen
from workbench.tui.widgets.card_view import CardView
from workbench.tui.widgets.switch_pills import SwitchPills

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
from plugin_folders import EXAMPLE, trusted_project  # noqa: E402

pytestmark = pytest.mark.slow
SIZE = (110, 40)


async def test_the_plugins_screen_shows_a_pane_and_stops_an_instance(make_app, until, home, workdir: Path) -> None:
    trusted_project(home, workdir, "echo")
    service = open_plugins(workdir)
    await service.install(service.plan(EXAMPLE))
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_screen(pilot, until, "f6", PluginsScreen)
        await until(pilot, lambda: screen.query(CardView))  # the pane, from the plugin
        await settle(pilot, until)
        shown = text_of(screen.query_one("#plugins-detail"))
        assert "Pings" in shown and "plugin_score" in shown and screen.rows[0].enabled
        view = screen.query_one(CardView)
        answer = view.query_one(Input)
        answer.value = "hello"
        score = next(b for b in view.query(Button) if str(b.label) == "Score")
        score.press()
        await until(pilot, lambda: "verdict" in text_of(screen.query_one("#plugins-message")))
        await until(pilot, lambda: screen.selected is not None and screen.selected.instances)
        await settle(pilot, until)  # the pane read again after the call
        view = screen.query_one(CardView)
        view.query_one(Input).value = "again"
        post = next(b for b in view.query(Button) if str(b.label) == "Post a card")
        post.press()  # the plugin posts a card: the drawer draws it with the card widget
        await until(pilot, lambda: app.unread == 1)
        await pilot.press("ctrl+n")
        await until(pilot, lambda: app.screen.query(".drawer--card-view"))
        assert "Hello from the echo plugin" in text_of(app.screen.query_one(".drawer--card-view"))
        await pilot.press("escape")  # the drawer, opened from the chat's level, closes to it
        await until(pilot, lambda: app.screen is app.chat)
        screen = await open_screen(pilot, until, "f6", PluginsScreen)
        await until(pilot, lambda: screen.selected is not None and screen.selected.instances)
        await pilot.press("x")
        await until(pilot, lambda: "Stopped 1 instance of echo" in text_of(screen.query_one("#plugins-message")))
        await until(pilot, lambda: app.host.plugins.rows()[0].instances == [])


async def test_composer_switches_are_pills_kept_per_chat(make_app, until, home, workdir: Path) -> None:
    trusted_project(home, workdir, "echo")
    service = open_plugins(workdir)
    await service.install(service.plan(EXAMPLE))
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        pills = app.chat.query_one(SwitchPills)
        await until(pilot, lambda: pills.query(Button))
        pill = pills.query_one(Button)
        assert str(pill.label) == "○ Mode" and pill.tooltip == "Mode is off"
        pill.press()
        await until(pilot, lambda: pills.rows and pills.rows[0].on)
        pill = pills.query_one(Button)
        assert str(pill.label) == "● Mode" and pill.tooltip == "Mode is on" and pill.has_class("-on")
        session = app.chat.session_id
        assert session is not None
    again = make_app([])
    async with again.run_test(size=SIZE) as pilot:  # restored at the next start, in that chat
        again.chat.resume(session)
        pills = again.chat.query_one(SwitchPills)
        await until(pilot, lambda: pills.rows and pills.rows[0].on)
