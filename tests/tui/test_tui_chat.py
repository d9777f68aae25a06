"""Pilot tests of the chat screen: prompts, replies, tool cards, permissions, keys."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Label

from workbench.agent.messages import TextChunk
from workbench.tui.screens.permission import PermissionScreen
from workbench.tui.widgets.message_list import NoticeLine
from workbench.tui.widgets.message_view import MessageView
from workbench.tui.widgets.tool_call_card import ToolCallCard

from visible import settled, until_screen, until_shown, wait_until, widget_lines

SIZE = (100, 30)


def texts(app) -> list[tuple[str, str]]:
    return [(view.role, view.text) for view in app.chat.query(MessageView)]


def notices(app) -> list[str]:
    return [line.message for line in app.chat.query(NoticeLine)]


def finished_card(app) -> ToolCallCard | None:
    """The chat's tool card once its call has ended (it shows the outcome)."""
    card = app.chat.query_one(ToolCallCard)
    return card if card.ok is not None else None


async def send(pilot, until, text: str) -> None:
    """Type ``text``, press Enter, and wait for the turn to end."""
    app = pilot.app
    await pilot.press(*text, "enter")
    await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy)
    await app.workers.wait_for_complete()
    await settled(pilot)


class TestPrompt:
    async def test_reply_appears_in_the_message_list(self, make_app, until) -> None:
        app = make_app([{"text": "Hello from the **script**."}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "hi there")
            assert texts(app) == [("user", "hi there"), ("assistant", "Hello from the **script**.")]
            reply = app.chat.query(MessageView).last()
            # Drawn as Markdown: the bold words without their asterisks.
            assert "Hello from the script." in "\n".join(widget_lines(reply))
            assert app.chat.query_one("#prompt-input").text == ""

    async def test_header_shows_model_and_session(self, make_app, until) -> None:
        app = make_app([{"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            title = app.chat.query_one("#chat-title", Label)
            assert "scripted:replies.json" in str(title.render())
            assert "session" not in str(title.render())
            await send(pilot, until, "hi")
            session_id = app.host.chats.sessions()[0]["id"]
            assert app.chat.session_id == session_id
            assert f"session {session_id[:8]}" in str(title.render())

    async def test_next_prompt_continues_the_session(self, make_app, until) -> None:
        app = make_app([{"text": "first"}, {"text": "second"}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "one")
            await send(pilot, until, "two")
            assert [s["id"] for s in app.host.chats.sessions()] == [app.chat.session_id]
            stored = [(m["role"], m["content"]) for m in app.host.chats.messages(app.chat.session_id)]
            assert stored == [("user", "one"), ("assistant", "first"),
                              ("user", "two"), ("assistant", "second")]
            assert [t for _, t in texts(app)] == ["one", "first", "two", "second"]

    async def test_empty_prompt_is_not_sent(self, make_app, until) -> None:
        app = make_app([{"text": "never"}])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("space", "enter")
            await until_shown(pilot, lambda: app.host.chats.sessions() == [])
            assert texts(app) == []

    async def test_model_error_shows_as_a_notice(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "hello")
            assert any("no reply left" in message for message in notices(app))
            assert not app.chat.busy


class TestToolCalls:
    async def test_tool_call_shows_a_card_with_its_result(self, make_app, until) -> None:
        app = make_app([{"tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]},
                        {"text": "That is two words."}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "count a b")
            card = app.chat.query_one(ToolCallCard)
            assert card.tool == "builtin.word_count"
            assert str(card.border_title) == "builtin.word_count"
            arguments = card.query_one(".tool-call-card--arguments")
            assert str(arguments.render()) == 'text="a b"'
            assert card.ok is True
            assert card.has_class("-ok")
            assert card.outcome == "✓ words=2 lines=1 characters=3"
            assert texts(app)[-1] == ("assistant", "That is two words.")

    async def test_denied_permission_fails_in_the_card(self, make_app, until, workdir: Path) -> None:
        secret = workdir / "notes.txt"
        secret.write_text("the secret words", encoding="utf-8")
        app = make_app([{"tool_calls": [{"name": "read_file", "arguments": {"path": str(secret)}}]},
                        {"text": "I could not read it."}])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"read it", "enter")
            await until_screen(pilot, PermissionScreen)
            modal = app.screen
            assert modal.request.tool == "builtin.read_file"
            assert [(p["kind"], p["value"], p.get("project")) for p in modal.request.permissions] == [
                ("read", str(workdir), True)]
            await pilot.press("d")
            await until(pilot, lambda: not app.chat.busy)
            await until_shown(pilot, lambda: app.screen is app.chat)
            card = app.chat.query_one(ToolCallCard)
            assert card.tool == "builtin.read_file"
            assert card.ok is False
            assert card.has_class("-error")
            assert card.outcome.startswith("✗ permission denied")
            assert "the secret words" not in card.outcome
            assert texts(app)[-1] == ("assistant", "I could not read it.")

    async def test_granted_once_runs_the_tool(self, make_app, until, workdir: Path) -> None:
        notes = workdir / "notes.txt"
        notes.write_text("the secret words", encoding="utf-8")
        app = make_app([{"tool_calls": [{"name": "read_file", "arguments": {"path": str(notes)}}]},
                        {"text": "It says: the secret words."}])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"read it", "enter")
            await until_screen(pilot, PermissionScreen)
            await pilot.press("o")
            await until(pilot, lambda: not app.chat.busy)
            card = await until_shown(pilot, lambda: finished_card(app))
            assert card.ok is True
            assert "the secret words" in card.outcome


class StallingModel:
    """A model that says one word and then waits for ever (until cancelled)."""

    name = "stalling"

    async def stream(self, messages, tools):
        yield TextChunk("Thinking")
        await asyncio.Event().wait()


class TestKeys:
    async def test_escape_cancels_the_running_turn(self, make_app, until) -> None:
        app = make_app([])
        app.host.default_model.built = StallingModel()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"think", "enter")
            await until(pilot, lambda: ("assistant", "Thinking") in texts(app))
            assert app.chat.busy and app.host.chats.busy
            assert app.chat.check_action("cancel_turn", ()) is True
            await pilot.press("escape")
            await until(pilot, lambda: not app.chat.busy)
            await until_shown(pilot, lambda: "Cancelled." in notices(app))
            assert not app.host.chats.busy
            assert app.chat.check_action("cancel_turn", ()) is False

    async def test_ctrl_q_quits(self, make_app) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            assert app.return_code is None
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: app.return_code == 0)
        assert app.return_code == 0

    async def test_ctrl_q_quits_from_the_permission_prompt(self, make_app, until, workdir) -> None:
        app = make_app([{"tool_calls": [{"name": "read_file", "arguments": {"path": str(workdir)}}]}])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"read", "enter")
            await until_screen(pilot, PermissionScreen)
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: app.return_code == 0)
        assert app.return_code == 0
        assert not app.host.chats.busy


class TestStartup:
    async def test_untrusted_project_config_is_announced(self, make_app, workdir: Path) -> None:
        (workdir / ".workbench").mkdir()
        (workdir / ".workbench" / "config.toml").write_text('theme = "workbench-light"\n')
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, lambda: any("is not trusted" in message for message in notices(app)))
            assert app.theme == "workbench-dark"

    async def test_configured_theme_is_used(self, make_app, workdir: Path) -> None:
        home = Path(workdir.parent / "home")
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text('theme = "workbench-light"\n')
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, lambda: app.theme == "workbench-light")
            assert notices(app) == []

    async def test_unknown_theme_falls_back_with_a_notice(self, make_app, workdir: Path) -> None:
        home = Path(workdir.parent / "home")
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text('theme = "no-such-theme"\n')
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await until_shown(pilot, lambda: app.theme == "workbench-dark")
            [message] = notices(app)
            assert "unknown theme 'no-such-theme'" in message
            assert "using workbench-dark" in message


class TestChatKeysAndMenu:
    async def test_the_chats_keys_have_descriptions_and_the_main_ones_show(self, make_app) -> None:
        from visible import screen_lines

        app = make_app([])
        async with app.run_test(size=(80, 24)) as pilot:
            await until_shown(pilot, lambda: "Sessions" in screen_lines(app)[-1])
            described = {b.binding.description for b in app.screen.active_bindings.values()
                         if b.node is app.chat}
            assert {"New chat", "Sessions", "Previous message", "Next message",
                    "First message", "Latest message"} <= described
            footer = screen_lines(app)[-1]
            assert "New chat" in footer and "Sessions" in footer

    async def test_escape_closes_the_slash_menu_before_it_cancels_the_turn(self, make_app,
                                                                          until) -> None:
        from workbench.tui.widgets.slash_menu import SlashMenu

        app = make_app([])
        app.host.default_model.built = StallingModel()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"think", "enter")
            await until(pilot, lambda: ("assistant", "Thinking") in texts(app))
            await pilot.press("slash")
            assert app.chat.query_one(SlashMenu).display
            await pilot.press("escape")
            await until_shown(pilot, lambda: not app.chat.query_one(SlashMenu).display)
            assert app.chat.busy and app.host.chats.busy  # the turn goes on
            await pilot.press("escape")
            await until(pilot, lambda: not app.chat.busy)
            assert "Cancelled." in notices(app)
