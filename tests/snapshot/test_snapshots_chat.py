"""How the chat's own screens look: the list of chats, a tool card with its log open, the
slash command menu and an MCP prompt's arguments; in workbench-dark and workbench-light.

Accept intended changes with
``pytest tests/snapshot/test_snapshots_chat.py --snapshot-update`` (the whole file).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_factory import SIZE, SMALL, no_cursor_blink, send_prompt, wait_until
from textual.widgets import Input
from visible import settled, until_screen, until_shown

from workbench.config.files import set_setting
from workbench.config.home import Home
from workbench.tui.screens.prompt_arguments import PromptArgumentsScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.slash_commands import SlashCommand
from workbench.tui.widgets.tool_call_card import ToolCallCard

SLOW = Path(__file__).resolve().parents[1] / "fixtures" / "extensions" / "slow-py"
T0 = 1_717_236_000_000  # 2024-06-01 10:00 UTC

SLOW_COUNT = [
    {"text": "Counting to three.", "tool_calls": [
        {"name": "slow_count", "arguments": {"steps": 3, "delay": 0}}]},
    {"text": "I counted to **3**, one step at a time."},
]

ARGS_PROMPT = SlashCommand(
    "/mcp__everything__args-prompt", "A prompt with two arguments, one required and one optional",
    server="everything", prompt="args-prompt",
    arguments=({"name": "city", "description": "Name of the city", "required": True},
               {"name": "state", "required": False}))


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dates are shown in local time (``TZ``): make it UTC, the same on every machine."""
    monkeypatch.setenv("TZ", "UTC")


def stored_chats(app) -> None:
    """Three chats at fixed times, the latest first in the list."""
    store = app.host.store
    clock = iter(range(T0, T0 + 1000 * 3_600_000, 3_600_000))
    store.clock = lambda: next(clock)
    chats = [
        ("Water the ferns: how often, and how much in winter?", [
            "How often do ferns need water?", "Keep the soil damp, not wet."]),
        ("Trip to Lyon", ["What should I see in Lyon?", "The old town and Fourvière.",
                          "And where do I eat?", "A bouchon in the old town."]),
        (None, ["hi", "Hello! How can I help?"]),
    ]
    for title, messages in chats:
        session = store.create_session(title=title, model="scripted:replies.json")["id"]
        for n, text in enumerate(messages):
            store.add_message(session, "user" if n % 2 == 0 else "assistant", content=text)


async def show_sessions(pilot) -> None:
    await no_cursor_blink(pilot)
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen)
                     and bool(pilot.app.screen.sessions))
    await settled(pilot)  # the listed sessions drawn


async def count_then_open_the_log(pilot) -> None:
    await send_prompt(pilot, "count to three, slowly")
    await wait_until(pilot, lambda: pilot.app.chat.query_one(ToolCallCard).ok is not None)
    await pilot.press("ctrl+up", "up", "l")
    await until_shown(pilot, lambda: pilot.app.chat.query_one(ToolCallCard).logs_open)


async def type_slash(pilot) -> None:
    await no_cursor_blink(pilot)
    await pilot.press("slash")
    await until_shown(pilot, lambda: pilot.app.chat.slash_menu.display)


async def ask_arguments(pilot) -> None:
    await no_cursor_blink(pilot)
    pilot.app.push_screen(PromptArgumentsScreen(ARGS_PROMPT))
    form = await until_screen(pilot, PromptArgumentsScreen)
    await pilot.press(*"Lyon")
    await until_shown(pilot, lambda: form.query_one("#argument-0", Input).value == "Lyon")


async def choose_echo(pilot) -> None:
    """``/model echo`` sent: the header says the replies are only echoes."""
    await no_cursor_blink(pilot)
    chat = pilot.app.chat
    await wait_until(pilot, lambda: chat.model_info is not None)
    await pilot.press(*"/model echo", "enter")
    await wait_until(pilot, lambda: chat.model_info is not None and chat.model_info["stand_in"])
    await pilot.app.workers.wait_for_complete()
    await settled(pilot)  # the header's new model drawn


async def type_model(pilot) -> None:
    """``/model `` typed: the models this chat can switch to."""
    await no_cursor_blink(pilot)
    await pilot.press(*"/model ")
    await wait_until(pilot, lambda: any(c.model_spec == "echo"
                                        for c in pilot.app.chat.slash_menu.commands))
    await settled(pilot)  # the menu of models drawn


class TestChatScreens:
    """The chat's list of chats, tool card, slash menu and prompt form, in workbench-dark."""

    def test_echo_header(self, snap_compare, snapshot_app) -> None:
        """The chat switched to echo: the header names it and says it is not a model."""
        assert snap_compare(snapshot_app([]), terminal_size=SIZE, run_before=choose_echo)

    def test_model_menu(self, snap_compare, snapshot_app) -> None:
        """``/model `` typed in the prompt: the models offered, the first highlighted."""
        assert snap_compare(snapshot_app([]), terminal_size=SIZE, run_before=type_model)

    def test_session_list(self, snap_compare, snapshot_app) -> None:
        """Three chats with their titles, dates and message counts; the latest first."""
        app = snapshot_app([])
        stored_chats(app)
        assert snap_compare(app, terminal_size=SMALL, run_before=show_sessions)

    def test_tool_card_with_log_open(self, snap_compare, snapshot_app) -> None:
        """A finished call's card, focused, with its three log lines shown."""
        app = snapshot_app(SLOW_COUNT)
        app.host.extensions.install(str(SLOW), lambda plan: True)
        assert snap_compare(app, terminal_size=SMALL, run_before=count_then_open_the_log)

    def test_slash_menu(self, snap_compare, snapshot_app) -> None:
        """``/`` typed in the prompt: the commands, the first highlighted."""
        assert snap_compare(snapshot_app([]), terminal_size=SMALL, run_before=type_slash)

    def test_prompt_arguments(self, snap_compare, snapshot_app) -> None:
        """An MCP prompt's arguments asked for: a required city, an optional state."""
        assert snap_compare(snapshot_app([]), terminal_size=SMALL, run_before=ask_arguments)

    def test_tool_card_with_log_open_wide(self, snap_compare, snapshot_app) -> None:
        """The same card in a 100x30 terminal."""
        app = snapshot_app(SLOW_COUNT)
        app.host.extensions.install(str(SLOW), lambda plan: True)
        assert snap_compare(app, terminal_size=SIZE, run_before=count_then_open_the_log)


class TestChatScreensLight(TestChatScreens):
    """The same scenes in workbench-light."""

    @pytest.fixture(autouse=True)
    def _light(self, workdir) -> None:
        set_setting(Home.resolve().ensure(), workdir, "theme", "workbench-light")

