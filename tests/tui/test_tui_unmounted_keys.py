"""A screen's footer asks which keys apply while the screen is built and while it is
taken down: the answer never depends on a widget being mounted at that moment."""

from __future__ import annotations

from workbench.tui.screens.extensions import ExtensionsScreen
from workbench.tui.screens.mcp import McpScreen


def test_the_mcp_screen_answers_for_its_keys_with_no_list_mounted(make_app) -> None:
    screen = McpScreen(make_app([]).host)
    assert screen.selected is None
    assert screen.check_action("check", ()) is None
    assert screen.check_action("switch", ()) is None


def test_the_extensions_screen_answers_for_its_keys_with_no_tabs_mounted(make_app) -> None:
    screen = ExtensionsScreen(make_app([]).host)
    for action in ("install", "update", "remove", "trust"):
        assert screen.check_action(action, ()) is None
