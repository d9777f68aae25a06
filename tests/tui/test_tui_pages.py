"""Pilot tests of the Pages screen: a page served by its extension's own tool in a real
sandboxed worker, drawn with the TUI's widgets, its form filled and its action run; a
hostile page's actions refused inline; reached by F5 and from the Extensions screen."""

from __future__ import annotations

from pathlib import Path

from page_samples import install_samples
from textual.widgets import Button, DataTable, OptionList
from visible import screen_text, until_screen, until_shown

from workbench.tui.screens.extensions import ExtensionsScreen
from workbench.tui.screens.pages import PagesScreen
from workbench.tui.widgets.card_view import CardView

SIZE = (110, 40)


def button(view: CardView, title: str) -> Button | None:
    """The button ``title`` of ``view`` once it is mounted (a view's children mount after it)."""
    return next((found for found in view.query(Button) if str(found.label) == title), None)


async def press(pilot, until, screen: PagesScreen, title: str) -> CardView:
    """Click the button ``title`` of the card the screen draws now; return that card."""
    view = await until(pilot, lambda: screen.card_view and button(screen.card_view, title)
                       and screen.card_view)
    found = button(view, title)
    assert found is not None
    await pilot.click(f"#{found.id}")
    return view


async def test_a_page_is_drawn_filled_and_acted_on(make_app, until, tmp_path: Path) -> None:
    install_samples(tmp_path / "src")
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f5")
        screen = await until_screen(pilot, PagesScreen)
        assert isinstance(screen, PagesScreen)
        view = await until(pilot, lambda: screen.card_view)
        await until_shown(pilot, lambda: "To do" in screen_text(app))
        assert [row.key for row in screen.rows] == ["planner/main", "planner/hostile", "planner/broken",
                                                   "planner/text"]
        # The required input is checked before anything runs.
        await press(pilot, until, screen, "Add")
        await until_shown(pilot, lambda: "New item is required" in view.problems)
        view.input_widget("title").focus()
        await pilot.press(*"Call Anna")
        await press(pilot, until, screen, "Add")
        await until_shown(pilot, lambda: screen.message.startswith("✓ item-add"))
        # The page is drawn again as its tool serves it after the action.
        table = await until(pilot, lambda: screen.card_view is not view
                            and screen.card_view.query_one(DataTable))
        await until_shown(pilot, lambda: "Call Anna" in screen_text(app))
        assert table.row_count == 1
        assert '"added": "Call Anna"' in screen.message

        # A card whose actions name tools outside its extension: each refused, said inline.
        listed = screen.query_one(OptionList)
        listed.focus()
        listed.highlighted = 1
        await until(pilot, lambda: listed.has_focus)
        await pilot.press("enter")
        await until(pilot, lambda: screen.opened and screen.opened.page.id == "hostile")
        await until_shown(pilot, lambda: "Hostile" in screen_text(app))
        shown = screen_text(app)
        assert "\x1b" not in shown and "\u202e" not in shown
        for title in ("read_file", "other.other-secret"):
            await press(pilot, until, screen, title)
            said = f"'{title}' is not a tool of planner"
            await until_shown(pilot, lambda said=said: said in screen.message)
            assert "secret" not in screen_text(app).replace("other-secret", "")

        # A page whose card is not in the subset says why, where the card would be.
        listed.highlighted = 2
        listed.focus()
        await until(pilot, lambda: listed.has_focus)
        await pilot.press("enter")
        await until_shown(pilot, lambda: "'Media' is not an element" in screen_text(app))
        assert screen.card_view is None and app.is_running
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PagesScreen))


async def test_the_pages_are_reached_from_the_extensions_screen_and_by_f5(make_app, until,
                                                                             tmp_path: Path) -> None:
    install_samples(tmp_path / "src")
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+e")
        extensions = await until_screen(pilot, ExtensionsScreen)
        await until(pilot, lambda: "planner" in [e.name for e in extensions.extension_list.extensions])
        names = [e.name for e in extensions.extension_list.extensions]
        extensions.extension_list.highlighted = names.index("planner")
        await pilot.press("p")
        screen = await until_screen(pilot, PagesScreen)
        await until(pilot, lambda: screen.card_view)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is extensions)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
        await pilot.press("f5")
        await until_screen(pilot, PagesScreen)
