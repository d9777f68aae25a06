"""Pilot tests of slash commands: the menu that ``/`` opens above the prompt, completion,
the built-in commands, and the MCP servers' prompts against the real server-everything
(installed into ``.mcp-servers/`` by ``make test``), arguments asked for in a form."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input
from visible import screen_text, settled, until_screen, until_shown

from workbench.config.home import Home
from workbench.mcp.config import ServerConfig, write_server
from workbench.tui.screens.prompt_arguments import PromptArgumentsScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.widgets.message_list import NoticeLine
from workbench.tui.widgets.message_view import MessageView
from workbench.tui.widgets.slash_menu import SlashMenu

SIZE = (80, 24)
ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
ARGS_PROMPT = "/mcp__everything__args-prompt"
SIMPLE_PROMPT = "/mcp__everything__simple-prompt"


def menu(app) -> SlashMenu:
    return app.chat.query_one(SlashMenu)


def listed(app) -> list[str]:
    return [command.name for command in menu(app).commands] if menu(app).display else []


def texts(app) -> list[tuple[str, str]]:
    return [(view.role, view.text) for view in app.chat.query(MessageView)]


def notices(app) -> list[str]:
    return [line.message for line in app.chat.query(NoticeLine)]


async def turn_ended(pilot, until) -> None:
    app = pilot.app
    await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=30)
    await app.workers.wait_for_complete()
    await settled(pilot)


class TestMenu:
    async def test_slash_lists_the_commands_and_typing_narrows_them(self, make_app) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            assert not menu(app).display
            await pilot.press("slash")
            await until_shown(pilot, lambda: listed(app) == ["/new", "/sessions", "/model", "/copy", "/help"])
            text = screen_text(app)
            assert "/sessions  Switch to an earlier chat and continue it" in text
            assert "/help  The slash commands and the chat's keys" in text
            await pilot.press("s", "e")
            await until_shown(pilot, lambda: listed(app) == ["/sessions"])
            await pilot.press("backspace", "backspace", "x", "y")
            await until_shown(pilot, lambda: listed(app) == [] and not menu(app).display)
            assert app.focused is app.chat.prompt_input

    async def test_arrows_move_and_enter_runs_the_highlighted_command(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("slash", "down")
            assert menu(app).chosen.name == "/sessions"
            await pilot.press("down", "up")
            assert menu(app).chosen.name == "/sessions"
            await pilot.press("enter")
            await until_screen(pilot, SessionsScreen)
            assert app.chat.prompt_input.text == ""
            assert not menu(app).display

    async def test_tab_completes_then_enter_runs(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("slash", "h", "tab")
            await until_shown(pilot, lambda: app.chat.prompt_input.text == "/help")
            assert listed(app) == ["/help"]
            await pilot.press("enter")
            await until(pilot, lambda: bool(notices(app)))
            [help_text] = notices(app)
            assert "/sessions  Switch to an earlier chat" in help_text
            assert "Ctrl+O earlier chats" in help_text
            assert app.chat.prompt_input.text == ""
            assert app.host.chats.sessions() == []  # nothing was sent to the model

    async def test_escape_closes_the_menu_without_cancelling(self, make_app) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("slash", "n")
            assert menu(app).display
            await pilot.press("escape")
            await until_shown(pilot, lambda: not menu(app).display)
            assert app.chat.prompt_input.text == "/n"

    async def test_a_click_on_a_command_runs_it(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("slash")
            await until_shown(pilot, lambda: menu(app).display)
            # The menu's border, then one line per command: /sessions is the second.
            await pilot.click(SlashMenu, offset=(4, 2))
            await until_screen(pilot, SessionsScreen)

    async def test_new_and_copy(self, make_app, until, until_notified) -> None:
        app = make_app([{"text": "The **answer** is 42."}])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("slash", "c", "o", "p", "y", "enter")
            assert "no reply to copy" in await until_notified(pilot, "no reply to copy")
            await pilot.press(*"question", "enter")
            await turn_ended(pilot, until)
            await pilot.press(*"/copy", "enter")
            await until_shown(pilot, lambda: app.clipboard == "The **answer** is 42.")
            assert app.chat.session_id is not None
            await pilot.press(*"/new", "enter")
            await until_shown(pilot, lambda: app.chat.session_id is None and texts(app) == [])

    async def test_text_that_names_no_command_is_sent_as_a_prompt(self, make_app, until) -> None:
        app = make_app([{"text": "That is a path."}])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"/usr/bin is where", "enter")
            await turn_ended(pilot, until)
            assert texts(app) == [("user", "/usr/bin is where"), ("assistant", "That is a path.")]


@pytest.fixture
def everything(home: Home) -> None:
    """server-everything configured in the test's home."""
    assert EVERYTHING.exists(), f"{EVERYTHING} is missing; `make test` installs it"
    write_server(home.config_file, ServerConfig(name="everything", command="node",
                                                args=(str(EVERYTHING), "stdio")), replace=True)


async def prompts_offered(pilot, until) -> None:
    app = pilot.app
    await until(pilot, lambda: any(c.name == ARGS_PROMPT for c in app.chat.commands), timeout=60)


@pytest.mark.usefixtures("everything")
class TestMcpPrompts:
    async def test_the_servers_prompts_are_offered_with_their_arguments(self, make_app,
                                                                        until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await prompts_offered(pilot, until)
            await pilot.press(*"/mcp__everything__", "a")
            await until_shown(pilot, lambda: listed(app) == [ARGS_PROMPT])
            assert (f"{ARGS_PROMPT} <city> <state>  A prompt with two arguments"
                    in screen_text(app))
            await pilot.press("backspace")
            await until_shown(pilot, lambda: {SIMPLE_PROMPT, ARGS_PROMPT} <= set(listed(app)))

    async def test_a_prompt_without_arguments_is_sent_at_once(self, make_app, until) -> None:
        app = make_app([{"text": "Understood."}])
        async with app.run_test(size=SIZE) as pilot:
            await prompts_offered(pilot, until)
            await pilot.press(*SIMPLE_PROMPT, "enter")
            await until(pilot, lambda: ("assistant", "Understood.") in texts(app), timeout=30)
            await turn_ended(pilot, until)
            sent = "This is a simple prompt without arguments."
            assert texts(app) == [("user", sent), ("assistant", "Understood.")]
            stored = app.host.chats.messages(app.chat.session_id)
            assert [(m["role"], m["content"]) for m in stored] == [
                ("user", sent), ("assistant", "Understood.")]
            await pilot.press("up")
            assert app.chat.prompt_input.text == sent

    async def test_arguments_are_asked_for_then_the_prompt_is_sent(self, make_app, until) -> None:
        app = make_app([{"text": "Sunny, 24 degrees."}])
        async with app.run_test(size=SIZE) as pilot:
            await prompts_offered(pilot, until)
            await pilot.press(*"/mcp__everything__args", "enter")
            form = await until_screen(pilot, PromptArgumentsScreen)
            text = screen_text(app)
            assert ARGS_PROMPT in text and "city *  Name of the city" in text
            assert app.focused is form.query_one("#argument-0", Input)
            # The required city is missing: not sent, the form says so.
            await pilot.press("ctrl+s")
            await until_shown(pilot, lambda: app.screen is form)
            assert any("Fill in city (required)" in n.message for n in app._notifications)
            await pilot.press(*"Lyon", "enter")  # to the next field
            assert app.focused is form.query_one("#argument-1", Input)
            await pilot.press("enter")  # the last field: send
            await until(pilot, lambda: ("assistant", "Sunny, 24 degrees.") in texts(app),
                        timeout=30)
            await turn_ended(pilot, until)
            assert app.screen is app.chat
            assert texts(app)[0] == ("user", "What's weather in Lyon?")
            stored = app.host.chats.messages(app.chat.session_id)
            assert stored[0]["role"] == "user" and stored[0]["content"] == "What's weather in Lyon?"

    async def test_escape_in_the_form_sends_nothing(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await prompts_offered(pilot, until)
            await pilot.press(*ARGS_PROMPT, "enter")
            await until_screen(pilot, PromptArgumentsScreen)
            await pilot.press("escape")
            await until_shown(pilot, lambda: app.screen is app.chat and texts(app) == [])
            assert app.host.chats.sessions() == []

    async def test_arguments_typed_after_the_command(self, make_app, until) -> None:
        app = make_app([{"text": "Rainy."}])
        async with app.run_test(size=SIZE) as pilot:
            await prompts_offered(pilot, until)
            await pilot.press(*f"{ARGS_PROMPT} city=Paris", "enter")
            await until(pilot, lambda: ("assistant", "Rainy.") in texts(app), timeout=30)
            await turn_ended(pilot, until)
            assert texts(app)[0] == ("user", "What's weather in Paris?")
