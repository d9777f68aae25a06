"""Pilot tests of the command palette and the help screen: both list the keys from the
bindings themselves, so a screen's new binding shows in both without more code."""

from __future__ import annotations

from shell_helpers import open_screen, options_of, palette_listed, settle, text_of
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from visible import until_screen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.settings import SettingsScreen
from workbench.tui.screens.tasks import TasksScreen

SIZE = (80, 24)


class WaveScreen(Screen):
    """A screen as another part of the TUI would add one: its keys are its BINDINGS."""

    BINDINGS = [Binding("w", "wave", "Wave hello"), Binding("escape", "app.pop_screen", "Back")]

    def __init__(self) -> None:
        super().__init__()
        self.waves = 0

    def compose(self):
        yield Static("waving")
        yield Footer()

    def action_wave(self) -> None:
        """Wave at the person once."""
        self.waves += 1


async def open_palette(pilot, until) -> list[str]:
    """Open the palette and return its commands (title and help of each)."""
    app = pilot.app
    await pilot.press("ctrl+p")
    return options_of(await until(pilot, lambda: palette_listed(app)))


def titles(commands: list[str]) -> set[str]:
    return {command.split("\n")[0] for command in commands}


async def test_the_palette_holds_the_app_and_screen_actions(make_app, until) -> None:
    app = make_app([])
    app.host.schedules.add_schedule(title="Daily digest", instruction="Summarize.",
                          schedule={"kind": "interval", "everyMinutes": 60})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, until)
        commands = await open_palette(pilot, until)
        assert {"Tools", "Notifications", "Extensions", "Tasks", "MCP servers", "Settings",
                "Help", "Quit", "Theme"} <= titles(commands)
        tasks = next(c for c in commands if c.startswith("Tasks\n"))
        assert "f2 · Scheduled prompts" in tasks
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
        await open_screen(pilot, until, "f2", TasksScreen)
        await settle(pilot, until)
        commands = await open_palette(pilot, until)
        assert {"New", "Back", "Pause", "Run now", "Tools", "Settings"} <= titles(commands)
        assert "Resume" not in titles(commands)  # one key: what it does now
        new = next(c for c in commands if c.startswith("New\n"))
        assert "n · Make a new scheduled prompt." in new


async def test_a_command_runs_its_action(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, until)
        await open_palette(pilot, until)
        await pilot.press(*"settings", "down", "enter")
        await until_screen(pilot, SettingsScreen)


async def test_a_binding_another_screen_adds_is_in_the_palette_and_the_help(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, until)
        screen = WaveScreen()
        await app.push_screen(screen)
        commands = await open_palette(pilot, until)
        wave = next(c for c in commands if c.startswith("Wave hello\n"))
        assert "w · Wave at the person once." in wave
        # Screens that are not the app's own (this one, a question) open none of the
        # app's screens: the palette does not offer them.
        assert "Tasks" not in titles(commands) and "Quit" in titles(commands)
        await pilot.press(*"wave", "down", "enter")
        await until(pilot, lambda: screen.waves == 1)
        await pilot.press("f1")
        await until_screen(pilot, HelpScreen)
        shown = text_of(app.screen)
        assert "On this screen: Wave" in shown and "Wave hello  Wave at the person once." in shown


async def test_help_lists_the_keys_of_the_screen_and_of_every_screen(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, until)
        await open_screen(pilot, until, "f2", TasksScreen)
        await settle(pilot, until)
        help_screen = await open_screen(pilot, until, "question_mark", HelpScreen)
        shown = text_of(help_screen)
        assert "On this screen: Tasks" in shown
        here, everywhere = shown.split("Everywhere")
        assert "Pause  Stop the selected schedule firing until it is resumed." in here
        assert "^t\nTools  Switch extensions and MCP servers on or off" in everywhere
        assert "f1 ?\nHelp  The keys of this screen and of every screen" in everywhere
        # Over the help, the app's keys are the help's: F1 closes it.
        await pilot.press("f1")
        await until_screen(pilot, TasksScreen)
        await pilot.press("f1")
        await until_screen(pilot, HelpScreen)
        await pilot.press("escape")
        await until_screen(pilot, TasksScreen)
