"""Pilot tests of moving through a conversation: earlier prompts in the prompt box, focus
from message to message, copying one, streaming Markdown, and a chat of 10,000 messages
of which only a window is mounted (scrolling up mounts older ones in place, jumping to
the top shows the first)."""

from __future__ import annotations

import asyncio

from textual import events
from visible import screen_lines, screen_text, settled, until_shown, widget_lines

from workbench.agent.messages import TextChunk
from workbench.tui.widgets.message_list import MAX_MOUNTED, MessageList
from workbench.tui.widgets.message_view import MessageView

SIZE = (80, 24)
LONG = 10_000


def texts(app) -> list[tuple[str, str]]:
    return [(view.role, view.text) for view in app.chat.query(MessageView)]


async def send(pilot, until, text: str) -> None:
    app = pilot.app
    await pilot.press(*text, "enter")
    await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy)
    await app.workers.wait_for_complete()
    await settled(pilot)


class TestEarlierPrompts:
    async def test_up_and_down_in_an_empty_prompt_recall_earlier_prompts(self, make_app,
                                                                         until) -> None:
        app = make_app([{"text": "one"}, {"text": "two"}])
        async with app.run_test(size=SIZE) as pilot:
            box = app.chat.prompt_input
            await send(pilot, until, "first prompt")
            await send(pilot, until, "second prompt")
            await pilot.press("up")
            assert box.text == "second prompt"
            await pilot.press("up")
            assert box.text == "first prompt"
            await pilot.press("up")  # the oldest stays
            assert box.text == "first prompt"
            await pilot.press("down")
            assert box.text == "second prompt"
            await pilot.press("down")  # past the newest: empty again
            assert box.text == ""

    async def test_a_draft_keeps_its_arrows(self, make_app, until) -> None:
        app = make_app([{"text": "one"}])
        async with app.run_test(size=SIZE) as pilot:
            box = app.chat.prompt_input
            await send(pilot, until, "sent before")
            await pilot.press(*"a draft", "ctrl+j", *"second line", "up")
            assert box.text == "a draft\nsecond line"
            assert box.cursor_location[0] == 0  # the cursor moved up a line instead
            # An edited recall is a draft too.
            box.clear()
            await pilot.press("up", "x", "up")
            assert box.text == "sent beforex"


class TestFocusAndCopy:
    async def test_ctrl_up_focuses_the_latest_message_and_arrows_move(self, make_app,
                                                                      until) -> None:
        app = make_app([{"text": "Reply **one**."}, {"text": "Reply two."}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "prompt one")
            await send(pilot, until, "prompt two")
            views = list(app.chat.query(MessageView))
            await pilot.press("ctrl+up")
            assert app.focused is views[3]
            assert views[3].has_class("-assistant")
            await pilot.press("up", "up")
            assert app.focused is views[1]
            await pilot.press("k")
            assert app.focused is views[0]
            await pilot.press("up")  # the first stays focused
            assert app.focused is views[0]
            await pilot.press("down", "j", "ctrl+down")
            assert app.focused is views[3]
            await pilot.press("down")  # past the latest: back to the prompt
            assert app.focused is app.chat.prompt_input

    async def test_c_copies_the_focused_message_with_a_notification(self, make_app,
                                                                    until) -> None:
        app = make_app([{"text": "Use `ls -la`\n\nto list **all** files."}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "how do I list files?")
            await pilot.press("ctrl+up")
            await pilot.press("c")
            reply = "Use `ls -la`\n\nto list **all** files."
            await until_shown(pilot, lambda: app.clipboard == reply)
            assert app.clipboard == reply
            assert any(n.message == f"Copied the reply ({len(reply)} characters, 3 lines)."
                       for n in app._notifications)
            await pilot.press("up", "c")
            await until_shown(pilot, lambda: app.clipboard == "how do I list files?")

    async def test_a_click_focuses_a_message_for_copying(self, make_app, until) -> None:
        app = make_app([{"text": "Clicked reply."}])
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, until, "click me")
            reply = list(app.chat.query(MessageView))[-1]
            await pilot.click(reply, offset=(3, 0))
            assert app.focused is reply
            assert "Copy" in screen_lines(app)[-1]  # the footer offers it
            await pilot.press("c")
            assert app.clipboard == "Clicked reply."


class Streaming:
    """A model that streams a Markdown reply in pieces, waiting between them."""

    name = "streaming"

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def stream(self, messages, tools):
        yield TextChunk("# Plan\n\n- **first**")
        await self.go.wait()
        yield TextChunk(" step\n- second step")


async def test_a_reply_is_markdown_while_it_streams(make_app, until) -> None:
    app = make_app([])
    model = Streaming()
    app.host.default_model.built = model
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"plan it", "enter")
        await until(pilot, lambda: len(texts(app)) == 2)
        reply = list(app.chat.query(MessageView))[-1]

        def drawn() -> list[str]:
            return [line.strip("▌ ") for line in widget_lines(reply)]

        await until(pilot, lambda: "• first" in drawn())
        assert reply.streaming
        lines = drawn()
        assert "Plan" in lines and "• first" in lines
        assert "**" not in "\n".join(lines)
        model.go.set()
        await until(pilot, lambda: not app.chat.busy)
        await until_shown(pilot, lambda: not reply.streaming)
        shown = [line.strip("▌ ") for line in widget_lines(reply)]
        assert "• first step" in shown and "• second step" in shown


def long_chat(app, count: int = LONG) -> str:
    store = app.host.store
    session = store.create_session(title="a long chat", model=app.host.default_model.spec)["id"]
    with store.transaction():
        for n in range(count):
            role = "user" if n % 2 == 0 else "assistant"
            store.add_message(session, role, content=f"Message {n} from the {role}.")
    return session


async def resumed(pilot, until, session: str) -> MessageList:
    app = pilot.app
    app.chat.resume(session)
    await until(pilot, lambda: app.chat.session_id == session)
    await app.workers.wait_for_complete()
    await settled(pilot)  # the resumed messages drawn
    return app.chat.message_list


async def wheel_up(pilot, messages: MessageList) -> None:
    """Turn the mouse wheel up once over the conversation."""
    x, y = messages.region.x + 10, messages.region.y + 5
    messages.post_message(events.MouseScrollUp(messages, 10, 5, 0, -1, 0, False, False, False,
                                               screen_x=x, screen_y=y))
    await settled(pilot)  # the wheel's scroll handled and drawn


def content_lines(app, messages: MessageList) -> list[str]:
    """The conversation's lines on screen, without the lines saying what lies beyond."""
    region = messages.region
    right = region.right - 3  # not the scrollbar's columns
    lines = [line[region.x:right] for line in screen_lines(app)[region.y:region.bottom]]
    return [line for line in lines if "earlier items" not in line and "newer items" not in line]


def top_line(app, messages: MessageList) -> str:
    """The first line of the conversation on screen."""
    return next(line for line in content_lines(app, messages) if line.strip())


class TestLongChat:
    async def test_only_a_window_of_a_long_chat_is_mounted(self, make_app, until) -> None:
        app = make_app([{"text": "unused"}] * (LONG // 2) + [{"text": "Still here."}])
        session = long_chat(app)
        async with app.run_test(size=SIZE) as pilot:
            messages = await resumed(pilot, until, session)
            assert messages.entry_count == LONG
            first, last = messages.window
            assert last == LONG and 0 < last - first <= MAX_MOUNTED
            assert len(app.chat.query(MessageView)) == last - first
            text = screen_text(app)
            assert "Message 9999 from the assistant." in text
            assert f"↑ {first:,} earlier items · click or Home for the first" in text
            assert "newer items" not in text
            # A new prompt continues the long chat at the bottom.
            await send(pilot, until, "one more")
            assert texts(app)[-2:] == [("user", "one more"), ("assistant", "Still here.")]
            assert "Still here." in screen_text(app)
            assert len(app.chat.query(MessageView)) <= MAX_MOUNTED

    async def test_ctrl_home_shows_the_first_message_and_ctrl_end_the_latest(self, make_app,
                                                                              until) -> None:
        app = make_app([])
        session = long_chat(app)
        async with app.run_test(size=SIZE) as pilot:
            messages = await resumed(pilot, until, session)
            await pilot.press("ctrl+home")
            await until_shown(pilot, lambda: messages.window[0] == 0)
            assert "Message 0 from the user." in top_line(app, messages)
            text = screen_text(app)
            assert f"↓ {LONG - messages.window[1]:,} newer items · click or End for the latest" in text
            assert "earlier items" not in text
            assert len(app.chat.query(MessageView)) <= MAX_MOUNTED
            await pilot.press("ctrl+end")
            await until_shown(pilot, lambda: messages.window[1] == LONG)
            assert "Message 9999 from the assistant." in screen_text(app)

    async def test_scrolling_up_mounts_older_messages_without_moving_the_view(self, make_app,
                                                                              until) -> None:
        app = make_app([])
        session = long_chat(app)
        async with app.run_test(size=SIZE) as pilot:
            messages = await resumed(pilot, until, session)
            first = messages.window[0]
            loads = 0
            for _ in range(12):
                start = messages.window[0]
                before = content_lines(app, messages)
                await wheel_up(pilot, messages)
                await until(pilot, lambda: not messages._loading)
                await settled(pilot)  # what the load mounted, drawn
                after = content_lines(app, messages)
                # Whether or not older messages were mounted above, the view moved by
                # the wheel's few lines only: each message still on screen is as much
                # lower as the others.
                rows_before = {line.strip(): row for row, line in enumerate(before)
                               if "Message" in line}
                rows_after = {line.strip(): row for row, line in enumerate(after)
                              if "Message" in line}
                shifts = {rows_after[text] - row for text, row in rows_before.items()
                          if text in rows_after}
                assert len(shifts) == 1 and 1 <= shifts.pop() <= 5, (before, after)
                loads += messages.window[0] < start
            assert loads >= 1 and messages.window[0] < first
            assert len(app.chat.query(MessageView)) <= MAX_MOUNTED

    async def test_moving_focus_up_past_the_window_mounts_older_messages(self, make_app,
                                                                         until) -> None:
        app = make_app([])
        session = long_chat(app, 120)
        async with app.run_test(size=SIZE) as pilot:
            messages = await resumed(pilot, until, session)
            assert messages.window[0] > 0
            await pilot.press("ctrl+up")
            for _ in range(125):
                await pilot.press("up")
            assert app.focused.text == "Message 0 from the user."
            assert messages.window[0] == 0
            assert len(app.chat.query(MessageView)) <= MAX_MOUNTED
            await pilot.press("end")  # on a message: the latest
            await until_shown(pilot, lambda: app.focused.text == "Message 119 from the assistant.")
            assert "Message 119 from the assistant." in screen_text(app)

    async def test_a_click_on_the_top_edge_jumps_to_the_first(self, make_app, until) -> None:
        app = make_app([])
        session = long_chat(app)
        async with app.run_test(size=SIZE) as pilot:
            messages = await resumed(pilot, until, session)
            assert "earlier items" in screen_text(app)
            await pilot.click("#window-top")
            await until(pilot, lambda: messages.window[0] == 0)
            await until_shown(pilot, lambda: "Message 0 from the user." in top_line(app, messages))

    async def test_sending_from_the_top_jumps_back_to_the_latest(self, make_app, until) -> None:
        app = make_app([{"text": "unused"}] * (LONG // 2) + [{"text": "Back at the end."}])
        session = long_chat(app)
        async with app.run_test(size=SIZE) as pilot:
            messages = await resumed(pilot, until, session)
            await pilot.press("ctrl+home")
            await send(pilot, until, "and now?")
            assert messages.window[1] == LONG + 2
            assert "Back at the end." in screen_text(app)


async def test_replies_are_redrawn_in_a_new_themes_colors(make_app, until) -> None:
    from textual.geometry import Region

    app = make_app([{"text": "# Heading\n\nSome text."}])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, until, "a heading, please")
        reply = list(app.chat.query(MessageView))[-1]

        def heading_color() -> str:
            for strip in reply.render_lines(Region(0, 0, *reply.size)):
                for segment in strip:
                    if "Heading" in segment.text:
                        return segment.style.color.triplet.hex.lower()
            raise AssertionError("no heading drawn")

        assert heading_color() == app.theme_variables["text-primary"].lower()
        dark = heading_color()
        app.theme = "workbench-light"
        await until_shown(pilot, lambda: heading_color() == app.theme_variables["text-primary"].lower() != dark)
