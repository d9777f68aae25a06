"""The Pages screen driven by keys alone: the approval cards of two waiting Tables
changes, one confirmed and one cancelled with tab and enter, then a cell of a table's
grid edited and saved, as a person in a terminal (or tmux send-keys) would."""

from __future__ import annotations

import json

import pytest
from commands import workbench
from textual.widgets import Button, OptionList
from visible import screen_text, until_screen, until_shown

from workbench.tui.screens.pages import PagesScreen

pytestmark = pytest.mark.slow

T = "addon__tables__"


def propose(workdir, item: str) -> None:
    """A headless run with Tables switched on proposes one row; the change waits for the
    person's card."""
    script = workdir / f"model-{item}.json"
    script.write_text(json.dumps([
        {"text": "Adding.", "tool_calls": [{"name": T + "rows-insert", "arguments": {
            "resourceId": "shop", "table": "Items", "rows": [{"Item": item}]}}]},
        {"text": "It waits."}]))
    assert workbench("run", "--addon", "tables", "--model", f"scripted:{script}", "add it").returncode == 0


def confirms(screen: PagesScreen) -> int:
    """How many Confirm buttons the card drawn now holds."""
    view = screen.card_view
    return sum(str(b.label) == "Confirm" for b in view.query(Button)) if view is not None else -1


def focused_title(app) -> str:
    focused = app.focused
    return str(focused.label) if isinstance(focused, Button) else ""


async def tab_to(pilot, until, app, title: str, reached=None) -> None:
    """Press tab until the button ``title`` (or what ``reached`` says) has the focus."""
    reached = reached or (lambda: focused_title(app) == title)
    for _ in range(40):
        if reached():
            return
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is not None)
    assert reached(), f"tab never reached {title}"


async def open_page(pilot, until, app, screen: PagesScreen, index: int, page: str) -> None:
    """Back to the list of pages with shift+tab, down to the page ``index``, enter."""
    listed = screen.query_one(OptionList)
    for _ in range(60):
        if listed.has_focus:
            break
        await pilot.press("shift+tab")
    while listed.highlighted != index:
        await pilot.press("down")
    await pilot.press("enter")
    await until(pilot, lambda: screen.opened and screen.opened.page.id == page and screen.card_view
                and screen.card_view.query(Button))


async def test_confirm_and_cancel_are_pressed_with_the_keyboard(make_app, until, workdir) -> None:
    assert workbench("ext", "install", "tables", "--yes").returncode == 0
    assert workbench("call", T + "databases-create", "-a", '{"name": "Shop", "resourceId": "shop"}').returncode == 0
    table = {"resourceId": "shop", "table": "Items", "columns": [{"label": "Item", "type": "text"}]}
    assert workbench("call", T + "tables-create", "-a", json.dumps(table)).returncode == 0
    propose(workdir, "pen")
    propose(workdir, "ink")
    app = make_app([])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f5")
        screen = await until_screen(pilot, PagesScreen)
        await until(pilot, lambda: screen.opened and screen.opened.page.id == "approvals")
        await until(pilot, lambda: confirms(screen) == 2)
        # Newest first: ink's card, then pen's; tab reaches ink's Confirm and enter presses it.
        await tab_to(pilot, until, app, "Confirm")
        await pilot.press("enter")
        await until_shown(pilot, lambda: screen.message.startswith("✓ proposals-confirm"))
        # The page drawn again keeps the keyboard in the card: on pen's Confirm now.
        await until(pilot, lambda: confirms(screen) == 1 and focused_title(app) == "Confirm")
        await pilot.press("tab")
        await until(pilot, lambda: focused_title(app) == "Cancel")
        await pilot.press("enter")
        await until_shown(pilot, lambda: screen.message.startswith("✓ proposals-cancel"))
        await until_shown(pilot, lambda: "Nothing waits for your confirmation" in screen_text(app))

        # Shop open on the table page (its databases page's Open button): a cell of its
        # grid is edited and saved by keys.
        assert workbench("call", T + "pages-view", "-a", '{"resourceId": "shop"}').returncode == 0
        await open_page(pilot, until, app, screen, 2, "table")
        view = screen.card_view
        await tab_to(pilot, until, app, "the cell", lambda: app.focused is view.input_widget("r1.c0"))
        await pilot.press("ctrl+u", *"quill")
        await tab_to(pilot, until, app, "Save changes")
        await pilot.press("enter")
        await until_shown(pilot, lambda: screen.message.startswith("✓ pages-rows-save"))
    query = workbench("call", T + "rows-query", "--json", "-a", '{"resourceId": "shop", "table": "Items"}')
    assert [r["values"] for r in json.loads(query.stdout)["result"]["rows"]] == [["quill"]]
