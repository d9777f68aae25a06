"""Pilot tests of the chat list: listing the chats, resuming one (its history shown and the
next prompt continuing it in the store), starting a new chat; by keyboard and mouse."""

from __future__ import annotations

import asyncio
import json

from textual.widgets import OptionList
from visible import screen_text, settled, until_screen, until_shown

from workbench.agent.messages import TextChunk
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.times import when
from workbench.tui.widgets.message_view import MessageView
from workbench.tui.widgets.tool_call_card import ToolCallCard

SIZE = (80, 24)
T0 = 1_717_236_000_000  # 2024-06-01 10:00 UTC


def texts(app) -> list[tuple[str, str]]:
    return [(view.role, view.text) for view in app.chat.query(MessageView)]


def stored(app, session_id: str) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in app.host.chats.messages(session_id)
            if m["role"] in ("user", "assistant") and m["content"]]


def earlier_chats(app) -> tuple[str, str]:
    """Two stored chats: "Plants" (older, with a tool call) and "Trip to Lyon" (newer)."""
    store = app.host.store
    clock = iter(range(T0, T0 + 100 * 60_000, 60_000))
    store.clock = lambda: next(clock)
    model = app.host.default_model.spec  # the scripted model: its reply follows the replies stored
    plants = store.create_session(title="Plants", model=model)["id"]
    store.add_message(plants, "user", content="How often do ferns need water?")
    store.add_message(plants, "assistant", content="Let me count the words first.", tool_calls=[
        {"id": "c1", "name": "word_count", "arguments": {"text": "damp soil"}}])
    store.add_message(plants, "tool", content=json.dumps(
        {"ok": True, "result": {"words": 2, "lines": 1, "characters": 9}}),
        tool_call_id="c1", name="word_count")
    store.add_message(plants, "assistant", content="Keep the soil **damp**, not wet.")
    trip = store.create_session(title="Trip to Lyon", model=model)["id"]
    store.add_message(trip, "user", content="What should I see in Lyon?")
    store.add_message(trip, "assistant", content="The old town and the hill of Fourvière.")
    return plants, trip


class StallingModel:
    """A model that says one word and then waits for ever (until cancelled)."""

    name = "stalling"

    async def stream(self, messages, tools):
        yield TextChunk("Thinking")
        await asyncio.Event().wait()


async def open_sessions(pilot, until) -> SessionsScreen:
    await pilot.press("ctrl+o")
    await until_screen(pilot, SessionsScreen)
    screen = pilot.app.screen
    await until(pilot, lambda: bool(screen.sessions))
    await settled(pilot)  # the listed sessions drawn
    return screen


async def send(pilot, until, text: str) -> None:
    app = pilot.app
    await pilot.press(*text, "enter")
    await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy)
    await app.workers.wait_for_complete()
    await settled(pilot)


class TestList:
    async def test_lists_each_chat_with_title_date_and_message_count(self, make_app, until) -> None:
        app = make_app([])
        plants, trip = earlier_chats(app)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_sessions(pilot, until)
            assert [s.id for s in screen.sessions] == [trip, plants]  # the latest first
            assert screen.sessions == app.host.chats.rows()  # the rows `sessions list` prints
            text = screen_text(app)
            assert "Chats" in text and "2 chats" in text
            assert "Trip to Lyon" in text and "Plants" in text
            trip_row = screen.sessions[0]
            assert f"{when(trip_row.updated_at)} · 2 messages · scripted:replies.json" in text
            assert f"{when(screen.sessions[1].updated_at)} · 4 messages" in text
            assert app.focused is screen.query_one(OptionList)

    async def test_no_chats_yet(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+o")
            await until_screen(pilot, SessionsScreen)
            await until(pilot, lambda: "No chats yet" in screen_text(app))
            await pilot.press("escape")
            await until_shown(pilot, lambda: app.screen is app.chat)

    async def test_escape_goes_back_to_the_chat_as_it_was(self, make_app, until) -> None:
        app = make_app([{"text": "Hello."}])
        earlier_chats(app)
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "hi")
            current = app.chat.session_id
            screen = await open_sessions(pilot, until)
            assert "● current" in screen_text(app)
            assert screen.sessions[screen.query_one(OptionList).highlighted].id == current
            await pilot.press("escape")
            await until_shown(pilot, lambda: app.screen is app.chat and app.chat.session_id == current)
            assert texts(app) == [("user", "hi"), ("assistant", "Hello.")]


class TestResume:
    async def test_enter_shows_the_history_and_the_next_prompt_continues_it(self, make_app,
                                                                            until) -> None:
        # The scripted model answers by the replies already stored: Plants has two.
        app = make_app([{"text": "unused"}, {"text": "unused"},
                        {"text": "Water them when the top of the soil is dry."}])
        plants, trip = earlier_chats(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_sessions(pilot, until)
            await pilot.press("down", "enter")  # the second: Plants
            await until(pilot, lambda: app.chat.session_id == plants)
            await app.workers.wait_for_complete()
            await until_shown(pilot, lambda: app.screen is app.chat)
            assert texts(app) == [
                ("user", "How often do ferns need water?"),
                ("assistant", "Let me count the words first."),
                ("assistant", "Keep the soil **damp**, not wet."),
            ]
            card = app.chat.query_one(ToolCallCard)
            assert card.tool == "word_count" and card.ok is True
            assert card.outcome == "✓ words=2 lines=1 characters=9"
            text = screen_text(app)
            assert "Keep the soil damp, not wet." in text  # Markdown, the latest in view
            assert f"session {plants[:8]}" in text

            await send(pilot, until, "And in winter?")
            assert app.chat.session_id == plants
            assert [s["id"] for s in app.host.chats.sessions()][0] == plants  # no new session
            assert len(app.host.chats.sessions()) == 2
            assert stored(app, plants)[-2:] == [
                ("user", "And in winter?"),
                ("assistant", "Water them when the top of the soil is dry.")]
            assert texts(app)[-2:] == stored(app, plants)[-2:]

    async def test_up_recalls_the_resumed_chats_prompts(self, make_app, until) -> None:
        app = make_app([])
        earlier_chats(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_sessions(pilot, until)
            await pilot.press("enter")  # Trip to Lyon
            await until(pilot, lambda: bool(texts(app)))
            await pilot.press("up")
            assert app.chat.prompt_input.text == "What should I see in Lyon?"

    async def test_a_click_resumes_a_chat(self, make_app, until) -> None:
        app = make_app([])
        plants, trip = earlier_chats(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_sessions(pilot, until)
            # Each chat takes two lines; the list starts below the header and its border.
            await pilot.click(OptionList, offset=(4, 3))
            await until(pilot, lambda: app.chat.session_id == plants)
            await until(pilot, lambda: len(texts(app)) == 3)
            assert texts(app)[0] == ("user", "How often do ferns need water?")


class TestNewChat:
    async def test_n_in_the_list_starts_a_new_chat(self, make_app, until) -> None:
        app = make_app([{"text": "A fresh start."}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "one")
            first = app.chat.session_id
            await open_sessions(pilot, until)
            await pilot.press("n")
            await until_shown(pilot, lambda: app.screen is app.chat and app.chat.session_id is None)
            assert texts(app) == []
            assert "Type a message and press Enter" in screen_text(app)
            await send(pilot, until, "two")
            assert app.chat.session_id not in (None, first)
            assert len(app.host.chats.sessions()) == 2
            assert stored(app, app.chat.session_id) == [("user", "two"),
                                                        ("assistant", "A fresh start.")]
            assert stored(app, first) == [("user", "one"), ("assistant", "A fresh start.")]

    async def test_ctrl_l_starts_a_new_chat(self, make_app, until) -> None:
        app = make_app([{"text": "First."}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "one")
            assert app.chat.session_id is not None
            await pilot.press("ctrl+l")
            await until_shown(pilot, lambda: app.chat.session_id is None and texts(app) == [])
            assert app.focused is app.chat.prompt_input

    async def test_switching_is_refused_while_a_turn_runs(self, make_app, until) -> None:
        app = make_app([])
        app.host.default_model.built = StallingModel()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"think", "enter")
            await until(pilot, lambda: app.chat.busy)
            await pilot.press("ctrl+o")
            await pilot.press("ctrl+l")
            await until_shown(pilot, lambda: app.screen is app.chat)
            assert ("user", "think") in texts(app)
            assert any("before switching chats" in n.message for n in app._notifications)
            await pilot.press("escape")
            await until(pilot, lambda: not app.chat.busy)


class TestHeldElsewhere:
    async def test_a_chat_another_process_is_running_a_turn_in_says_so_and_sends_nothing(
            self, make_app, until) -> None:
        import subprocess
        import sys

        from workbench.tui.widgets.message_list import NoticeLine

        app = make_app([{"text": "unused"}, {"text": "unused"}, {"text": "Now it is ours."}])
        plants, _ = earlier_chats(app)
        other = subprocess.Popen([sys.executable, "-c", (
            "import sys\nfrom workbench.store import Store\n"
            f"store = Store.open({str(app.host.store.path)!r})\n"
            f"assert store.take_lease({plants!r}, 'theirs', 'workbench run') is None\n"
            "print('held', flush=True)\nsys.stdin.read()\n")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert other.stdout.readline() == "held\n"
            async with app.run_test(size=(120, 30)) as pilot:
                await open_sessions(pilot, until)
                await pilot.press("down", "enter")  # Plants
                await until(pilot, lambda: app.chat.session_id == plants)
                await app.workers.wait_for_complete()
                before = app.host.chats.messages(plants)
                await send(pilot, until, "And in winter?")
                [line] = [n.message for n in app.chat.query(NoticeLine)]
                assert line.startswith(f"Not sent: session {plants[:12]} is in use: workbench run "
                                       f"(pid {other.pid})")
                assert app.host.chats.messages(plants) == before
                other.kill()
                other.wait()
                await pilot.press("up")  # the message comes back, and now goes through
                await until(pilot, lambda: app.chat.prompt_input.text == "And in winter?")
                await pilot.press("enter")
                await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy)
                await app.workers.wait_for_complete()
                assert stored(app, plants)[-2:] == [("user", "And in winter?"),
                                                    ("assistant", "Now it is ours.")]
        finally:
            other.kill()
            other.wait()
