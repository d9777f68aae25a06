"""Pilot tests of the Settings screen: values and where they come from, edits written
through the core with the file's comments kept, refusals that lose nothing, and
trusting the project's config."""

from __future__ import annotations

from pathlib import Path

from shell_helpers import footer_keys, open_screen, settle, text_of
from textual.widgets import DataTable, Input
from visible import settled, until_screen

from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.screens.setting_form import SettingFormScreen
from workbench.tui.screens.settings import SettingsScreen

SIZE = (80, 24)
GLOBAL = "# My settings.\n[tools]\n# a slow machine\ntimeout_ms = 1000\n"


def row_of(screen: SettingsScreen, key: str) -> list[str]:
    """What the table shows for ``key``: setting, value, from."""
    return [str(cell) for cell in screen.query_one(DataTable).get_row(key)]


async def open_settings(pilot, until) -> SettingsScreen:
    screen = await open_screen(pilot, until, "f4", SettingsScreen)
    await until(pilot, lambda: screen.query_one(DataTable).row_count > 0)
    await settle(pilot, until)
    return screen


async def edit(pilot, until, screen: SettingsScreen, key: str) -> SettingFormScreen:
    table = screen.query_one(DataTable)
    table.move_cursor(row=table.get_row_index(key))
    await settled(pilot)  # the screen has handled the highlighted row (RowHighlighted)
    await pilot.press("enter")
    await until_screen(pilot, SettingFormScreen)
    return pilot.app.screen


async def test_values_are_listed_with_their_origin(make_app, until, home) -> None:
    home.config_file.write_text(GLOBAL)
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, until)
        assert row_of(screen, "tools.timeout_ms") == ["tools.timeout_ms", "1000", "global"]
        assert row_of(screen, "model") == ["model", "auto", "default"]
        assert "~/home/config.toml" in text_of(screen.query_one("#settings-global"))
        assert "none here" in text_of(screen.query_one("#settings-project"))
        await edit(pilot, until, screen, "tools.timeout_ms")
        assert app.screen.query_one(Input).value == "1000"


async def test_an_edit_is_written_through_the_core_keeping_comments(make_app, until, home) -> None:
    home.config_file.write_text(GLOBAL)
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, until)
        form = await edit(pilot, until, screen, "tools.timeout_ms")
        form.query_one(Input).value = "2500"
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
        assert home.config_file.read_text() == GLOBAL.replace("1000", "2500")
        assert app.host.config.get("tools.timeout_ms") == 2500
        await until(pilot, lambda: row_of(screen, "tools.timeout_ms")[1] == "2500")
        assert "Saved tools.timeout_ms = 2500" in text_of(screen.query_one("#settings-message"))


async def test_an_invalid_value_is_refused_and_nothing_is_lost(make_app, until, home) -> None:
    home.config_file.write_text(GLOBAL)
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, until)
        form = await edit(pilot, until, screen, "tools.timeout_ms")
        form.query_one(Input).value = "-5"
        await pilot.press("enter")
        message = form.query_one("#setting-message")
        await until(pilot, lambda: "must be greater than zero" in text_of(message))
        assert text_of(message).startswith("Not saved: ")
        assert app.screen is form and form.query_one(Input).value == "-5"
        form.query_one(Input).value = "soon"
        await pilot.press("enter")
        await until(pilot, lambda: "integer" in text_of(message))
        assert home.config_file.read_text() == GLOBAL
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert row_of(screen, "tools.timeout_ms")[1] == "1000"


async def test_a_value_for_this_project_waits_for_trust_which_the_screen_gives(
        make_app, until, workdir: Path) -> None:
    project = workdir / ".workbench" / "config.toml"
    project.parent.mkdir()
    project.write_text("# the team's settings\n[tools]\ntimeout_ms = 7000\n")
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, until)
        assert "not trusted" in text_of(screen.query_one("#settings-project"))
        assert row_of(screen, "tools.timeout_ms")[1:] == ["300000", "default"]
        assert footer_keys(screen).get("t") == "Trust project"
        await pilot.press("t")
        await until_screen(pilot, ConfirmScreen)
        assert "It sets tools.timeout_ms." in text_of(app.screen)
        await pilot.press("y")
        await until(pilot, lambda: app.host.config.project_state == "trusted")
        await until(pilot, lambda: row_of(screen, "tools.timeout_ms")[1:] == ["7000", "project"])
        assert "trusted" in text_of(screen.query_one("#settings-project"))
        assert app.host.config.get("tools.timeout_ms") == 7000
        await settle(pilot, until)
        assert "t" not in footer_keys(screen)
        # A value written to the project's file: it changed since trusted, so it waits.
        form = await edit(pilot, until, screen, "tools.timeout_ms")
        assert form.chosen_scope == "project"
        form.query_one(Input).value = "8000"
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
        assert "timeout_ms = 8000" in project.read_text() and "# the team's settings" in project.read_text()
        message = screen.query_one("#settings-message")
        await until(pilot, lambda: "differs from the version you trusted" in text_of(message))
        assert "changed since you trusted it" in text_of(screen.query_one("#settings-project"))


async def test_the_theme_set_here_applies_and_an_unknown_one_is_refused(make_app, until, home) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, until)
        form = await edit(pilot, until, screen, "theme")
        form.query_one(Input).value = "solarized-ish"
        await pilot.press("enter")
        await until(pilot, lambda: "unknown theme 'solarized-ish'" in text_of(
            form.query_one("#setting-message")))
        assert not home.config_file.exists() or "solarized" not in home.config_file.read_text()
        form.query_one(Input).value = "workbench-light"
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen)
        assert app.theme == "workbench-light"
        assert 'theme = "workbench-light"' in home.config_file.read_text()
