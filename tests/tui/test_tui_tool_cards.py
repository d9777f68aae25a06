"""Pilot tests of tool-call cards with a real slow tool (``tests/fixtures/extensions/slow-py``,
sandboxed): live progress, the log on demand (key and click), cancelling one call (key
and click) while the turn goes on, and copying an outcome."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import ProgressBar
from visible import screen_text, settled, until_shown

from workbench.tui.widgets.tool_call_card import ToolCallActions, ToolCallCard

SIZE = (80, 24)
SLOW = Path(__file__).resolve().parents[1] / "fixtures" / "extensions" / "slow-py"
CANCELLED = "✗ the call was cancelled by the person"


def slow_turn(steps: int, delay: float, reply: str = "Done counting.") -> list[dict]:
    return [{"text": "Counting.", "tool_calls": [
                {"name": "slow_count", "arguments": {"steps": steps, "delay": delay}}]},
            {"text": reply}]


def card_of(app) -> ToolCallCard:
    return app.chat.query_one(ToolCallCard)


async def start_count(pilot, until, logged: int = 3) -> ToolCallCard:
    """Send a prompt whose turn calls the slow tool; wait until it has logged ``logged`` lines."""
    app = pilot.app
    await pilot.press(*"count slowly", "enter")
    await until(pilot, lambda: bool(app.chat.query(ToolCallCard))
                and card_of(app).state.log_count >= logged, timeout=30)
    await settled(pilot)  # the logged lines drawn
    return card_of(app)


def stored_tool_result(app) -> dict:
    rows = app.host.chats.messages(app.chat.session_id)
    return json.loads(next(row for row in rows if row["role"] == "tool")["content"])


async def test_a_running_call_shows_its_label_description_and_bar(make_app, until) -> None:
    # A call that runs for minutes, ended by the test: it is still running whenever the
    # test looks, however slowly a loaded machine gets there (200 steps of 50 ms could
    # end under load before the test had looked, and the card stopped running).
    app = make_app(slow_turn(1000, 0.3))
    app.host.extensions.install(str(SLOW), lambda plan: True)
    async with app.run_test(size=SIZE) as pilot:
        card = await start_count(pilot, until)
        assert card.has_class("-running")
        assert str(card.border_title) == "slow-py.slow_count"
        text = screen_text(app)
        assert "steps=1000 delay=0.3" in text
        assert "counting slowly" in text and " of 1000" in text
        assert "log lines (l)" in text and "✕ cancel (x)" in text
        bar = card.query_one(ProgressBar)
        assert bar.display and bar.percentage is not None and bar.percentage > 0
        # The log is there on demand only.
        assert "info: step 1 done" not in text
        await pilot.press("x")  # not focused: the key does nothing to the card
        await until_shown(pilot, lambda: card.has_class("-running"))
        app.host.chats.cancel()
        await until(pilot, lambda: not app.chat.busy)


async def test_the_log_is_shown_and_hidden_by_key_and_by_click(make_app, until) -> None:
    app = make_app(slow_turn(3, 0))
    app.host.extensions.install(str(SLOW), lambda plan: True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"count slowly", "enter")
        await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=30)
        card = await until_shown(pilot, lambda: card_of(app).ok is not None and card_of(app))
        assert card.ok is True and card.outcome == "✓ counted=3"
        assert "▸ 3 log lines (l)" in screen_text(app)
        assert "info: step 1 done" not in screen_text(app)

        # Keyboard: Ctrl+Up from the prompt focuses the latest message, Up the card.
        await pilot.press("ctrl+up", "up")
        assert app.focused is card
        await pilot.press("l")
        await until_shown(pilot, lambda: card.logs_open)
        text = screen_text(app)
        assert "▾ 3 log lines (l)" in text
        assert "info: step 1 done" in text and "info: step 3 done" in text
        assert card.logs_open and card.has_class("-logs-open")
        await pilot.press("enter")
        await until_shown(pilot, lambda: not card.logs_open)
        assert "info: step 1 done" not in screen_text(app)

        # Mouse: a click on "▸ 3 log lines".
        await pilot.click(ToolCallActions, offset=(2, 0))
        await until_shown(pilot, lambda: card.logs_open)
        assert "info: step 2 done" in screen_text(app)
        await pilot.click(ToolCallActions, offset=(2, 0))
        await until_shown(pilot, lambda: not card.logs_open)


async def test_x_cancels_the_focused_call_and_the_turn_goes_on(make_app, until) -> None:
    app = make_app(slow_turn(1000, 0.05, "You stopped the count."))
    app.host.extensions.install(str(SLOW), lambda plan: True)
    async with app.run_test(size=SIZE) as pilot:
        card = await start_count(pilot, until)
        await pilot.press("ctrl+up")
        if app.focused is not card:
            await pilot.press("up")
        assert app.focused is card
        assert card.check_action("cancel_call", ()) is True
        await pilot.press("x")  # asks on the card first
        await until_shown(pilot, lambda: "Cancel this call? x again cancels it" in screen_text(app))
        assert card.ok is None and not card.state.stopping
        await pilot.press("x")
        await until(pilot, lambda: card.ok is not None, timeout=30)
        await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=30)
        await until_shown(pilot, lambda: card.ok is False and card.has_class("-error"))
        assert card.outcome == CANCELLED
        text = screen_text(app)
        assert CANCELLED in text
        assert "You stopped the count." in text  # the model answered: the turn went on
        assert "Cancelled." not in text  # ... and was not cancelled itself
        assert card.state.log_count < 1000
        assert stored_tool_result(app) == {
            "ok": False, "error": {"kind": "cancelled",
                                   "message": "the call was cancelled by the person"}}
        assert card.check_action("cancel_call", ()) is False
        assert "✕ cancel" not in screen_text(app)


async def test_a_click_on_cancel_stops_the_call(make_app, until) -> None:
    app = make_app(slow_turn(1000, 0.05, "Stopped, as you asked."))
    app.host.extensions.install(str(SLOW), lambda plan: True)
    async with app.run_test(size=SIZE) as pilot:
        card = await start_count(pilot, until)
        actions = card.query_one(ToolCallActions)
        plain = actions.visual.plain
        await pilot.click(ToolCallActions, offset=(plain.index("✕") + 2, 0))
        await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=30)
        await until_shown(pilot, lambda: card.outcome == CANCELLED)
        assert "Stopped, as you asked." in screen_text(app)
        assert stored_tool_result(app)["error"]["kind"] == "cancelled"


async def test_escape_still_cancels_the_whole_turn(make_app, until) -> None:
    app = make_app(slow_turn(1000, 0.05, "never said"))
    app.host.extensions.install(str(SLOW), lambda plan: True)
    async with app.run_test(size=SIZE) as pilot:
        card = await start_count(pilot, until)
        await pilot.press("escape")
        await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=30)
        await until_shown(pilot, lambda: card.ok is False)
        text = screen_text(app)
        assert "Cancelled." in text and "never said" not in text


async def test_c_copies_a_finished_cards_outcome(make_app, until) -> None:
    app = make_app(slow_turn(2, 0))
    app.host.extensions.install(str(SLOW), lambda plan: True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"count slowly", "enter")
        await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=30)
        await pilot.press("ctrl+up", "up")
        assert app.focused is card_of(app)
        await pilot.press("c")
        await until_shown(pilot, lambda: app.clipboard == "✓ counted=2")
        assert any("Copied the outcome of slow-py.slow_count" in n.message
                   for n in app._notifications)
