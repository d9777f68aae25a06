"""Pilot tests of choosing the chat's model in the chat (``/model`` with its completion,
the palette's "Model", the header, Settings' line on which chats follow the default)
and of the keys around the prompt (typing and Esc come back to it, ``?`` opens the
help, Ctrl+Up reaches bubbles, bubbles come back when a chat is resumed)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Label, Static
from textual.widgets import Markdown

from test_tui_bubbles import enable_samples
from test_tui_chat import SIZE, StallingModel, notices, send, texts
from visible import until_screen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.settings import SettingsScreen
from workbench.tui.widgets.bubbles.bubble import Bubble, DiffBubble, ImageBubble, MarkdownBubble, TableBubble
from workbench.tui.widgets.display_view import DisplayView
from workbench.tui.widgets.message_view import MessageView
from workbench.tui.widgets.prompt_input import PromptInput
from workbench.tui.widgets.slash_menu import SlashMenu


def title(app) -> str:
    return str(app.chat.query_one("#chat-title", Label).render())


def menu_specs(app) -> list[str | None]:
    menu = app.chat.query_one(SlashMenu)
    return [command.model_spec for command in menu.commands] if menu.display else []


def prompt(app) -> PromptInput:
    return app.chat.query_one(PromptInput)


class TestModelCommand:
    async def test_model_completes_the_names_and_switches_this_chat_at_once(
            self, make_app, until, workdir: Path) -> None:
        (workdir / "other.json").write_text(json.dumps([{"text": "from the other script"}]))
        app = make_app([{"text": "first"}])
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.chat.model_info is not None)
            assert "scripted:replies.json" in title(app) and "not a model" not in title(app)
            await pilot.press(*"/model ")
            await until(pilot, lambda: "echo" in menu_specs(app))
            specs = menu_specs(app)
            assert {"auto", "local", "echo", "scripted:other.json", "scripted:replies.json",
                    "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"} <= set(specs)
            assert "default" not in specs  # the chat follows nothing else yet
            await pilot.press(*"oth")
            await until(pilot, lambda: menu_specs(app)[:1] == ["scripted:other.json"])
            await pilot.press("tab")
            assert prompt(app).text == "/model scripted:other.json"
            await pilot.press("enter")
            await until(pilot, lambda: any("now talks to scripted:other.json" in n for n in notices(app)))
            session = app.host.chats.get(app.chat.session_id)
            assert session["model"] == "scripted:other.json"  # a new chat got its session
            await until(pilot, lambda: "scripted:other.json" in title(app))
            await send(pilot, until, "hello")
            assert texts(app)[-1] == ("assistant", "from the other script")
            # Echo is said to be no model, in the header.
            await pilot.press(*"/model echo", "enter")
            await until(pilot, lambda: "not a model" in title(app))
            assert app.host.chats.get(app.chat.session_id)["model"] == "echo"
            await send(pilot, until, "ping")
            assert texts(app)[-1] == ("assistant", "You said: ping")
            # Back to the default: the chat has none of its own again.
            await pilot.press(*"/model ")
            await until(pilot, lambda: "default" in menu_specs(app))
            await pilot.press(*"default", "enter")
            await until(pilot, lambda: app.host.chats.get(app.chat.session_id)["model"] is None)
            await until(pilot, lambda: "not a model" not in title(app)
                        and "scripted:replies.json" in title(app))

    async def test_a_bad_name_is_said_and_changes_nothing(self, make_app, until) -> None:
        app = make_app([{"text": "first"}, {"text": "second"}])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"/model gpt-nonsense", "enter")
            await until(pilot, lambda: any("The model was not changed" in n for n in notices(app)))
            [said] = [n for n in notices(app) if "not changed" in n]
            assert "unknown model 'gpt-nonsense'; known: auto, echo" in said
            assert app.host.chats.sessions() == [] and app.chat.session_id is None  # nothing started
            await send(pilot, until, "hi")
            session_id = app.chat.session_id
            await pilot.press(*"/model scripted:missing.json", "enter")
            await until(pilot, lambda: sum("not changed" in n for n in notices(app)) == 2)
            # Opened with --model, the app's chats keep that model as their own.
            assert app.host.chats.get(session_id)["model"] == "scripted:replies.json"
            await send(pilot, until, "again")
            assert texts(app)[-1] == ("assistant", "second")

    async def test_the_palette_entry_opens_the_choice_in_the_prompt(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            [entry] = [c for c in app.get_system_commands(app.chat) if c.title == "Model"]
            entry.callback()
            await until(pilot, lambda: "echo" in menu_specs(app))
            assert prompt(app).text == "/model " and app.focused is prompt(app)

    async def test_settings_say_which_chats_follow_the_default(self, make_app, until) -> None:
        app = make_app([{"text": "a"}, {"text": "b"}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "one")
            await pilot.press(*"/model default", "enter")  # this one follows the default
            await until(pilot, lambda: app.host.chats.get(app.chat.session_id)["model"] is None)
            await pilot.press("ctrl+l")
            await send(pilot, until, "two")
            await pilot.press(*"/model echo", "enter")
            await until(pilot, lambda: app.host.chats.get(app.chat.session_id)["model"] == "echo")
            own = app.chat.session_id
            await pilot.press("f4")
            await until(pilot, lambda: isinstance(app.screen, SettingsScreen)
                        and app.screen.view is not None)
            help_text = lambda: str(app.screen.query_one("#settings-help", Static).render())  # noqa: E731
            await until(pilot, lambda: "follow" in help_text())
            assert f"1 chat follows the default; 1 has their own: {own[:8]} echo." in help_text()


class TestKeysAroundThePrompt:
    async def test_typing_on_a_message_goes_to_the_prompt(self, make_app, until) -> None:
        app = make_app([{"text": "a reply"}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "hi")
            await pilot.press("ctrl+up")
            assert isinstance(app.focused, MessageView)
            await pilot.press("c")  # a key the message binds: it copies, it is not typed
            assert isinstance(app.focused, MessageView) and prompt(app).text == ""
            await pilot.press(*"why?")
            assert app.focused is prompt(app) and prompt(app).text == "why?"

    async def test_escape_comes_back_to_the_prompt_before_it_cancels(self, make_app, until) -> None:
        app = make_app([])
        app.host.default_model.built = StallingModel()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"think", "enter")
            await until(pilot, lambda: ("assistant", "Thinking") in texts(app))
            await pilot.press("ctrl+up")
            assert isinstance(app.focused, MessageView)
            await pilot.press("escape")
            assert app.focused is prompt(app)
            assert app.chat.busy and app.host.chats.busy  # nothing cancelled yet
            await pilot.press("escape")
            await until(pilot, lambda: not app.chat.busy)
            assert "Cancelled." in notices(app)

    async def test_a_question_mark_in_the_empty_prompt_opens_the_help(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("question_mark")
            await until_screen(pilot, HelpScreen)
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.chat)
            await pilot.press(*"why?")  # not at the start: typed
            assert prompt(app).text == "why?" and app.screen is app.chat


class TestBubbles:
    async def test_ctrl_up_reaches_bubbles_and_they_come_back_when_resumed(
            self, make_app, until, workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_display", "arguments": {"title": "Samples"}}]},
                        {"text": "Shown."}])
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.host.loading.loaded_at > 0)
            await send(pilot, until, "show")
            await until(pilot, lambda: len(app.chat.query(DisplayView)) == 4)
            await pilot.press("ctrl+up")  # the reply
            assert isinstance(app.focused, MessageView)
            await pilot.press("ctrl+up")  # the last bubble: the diff
            assert isinstance(app.focused, DiffBubble)
            await pilot.press("ctrl+up", "ctrl+up")  # the table's rows, then the image
            assert isinstance(app.focused, ImageBubble)
            await pilot.press("ctrl+down", "ctrl+down", "ctrl+down")
            assert isinstance(app.focused, MessageView)
            session_id = app.chat.session_id
            await pilot.press("ctrl+l")
            await until(pilot, lambda: not app.chat.query(DisplayView))
            app.chat.resume(session_id)
            await until(pilot, lambda: app.chat.session_id == session_id)
            await app.workers.wait_for_complete()
            await until(pilot, lambda: len(app.chat.query(DisplayView)) == 4)
            views = list(app.chat.query(DisplayView))
            assert [type(view.bubble) for view in views] == [MarkdownBubble, ImageBubble, TableBubble, DiffBubble]
            assert views[0].bubble.query_one(Markdown).source.startswith("## Samples\n")
            assert all(isinstance(view.bubble, Bubble) for view in views)
