"""The chat widgets on their own: tool-call cards, message views, the prompt box."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import ProgressBar

from visible import until_shown

from workbench.tui.widgets.message_view import MessageView
from workbench.tui.widgets.prompt_input import PromptInput
from workbench.tui.widgets.tool_call_card import ToolCallCard, summarize_arguments, summarize_result


class Harness(App):
    def __init__(self, *widgets) -> None:
        super().__init__()
        self.widgets = widgets
        self.submitted: list[str] = []

    def compose(self) -> ComposeResult:
        yield from self.widgets

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.submitted.append(message.text)


def test_summaries_are_short_and_on_one_line() -> None:
    assert summarize_arguments({"path": "/tmp/a", "max_bytes": 10}) == "path=/tmp/a max_bytes=10"
    assert summarize_arguments({"text": "two words"}) == 'text="two words"'
    long = summarize_arguments({"text": "x" * 500})
    assert len(long) == 72 and long.endswith("…")
    assert summarize_result("line one\nline two") == "line one line two"
    assert summarize_result(None) == "done"
    assert summarize_result([1, 2]) == "[1, 2]"


async def test_tool_call_card_progress_then_error() -> None:
    card = ToolCallCard("c1", "demo.slow", {"n": 3})
    app = Harness(card)
    async with app.run_test() as pilot:
        assert card.has_class("-running")
        card.set_progress(0.4, "step 2 of 5")
        await until_shown(pilot, lambda: str(card.query_one(".tool-call-card--label").render())
                          == "step 2 of 5")
        bar = card.query_one(ProgressBar)
        assert bar.percentage == 0.4
        assert str(card.query_one(".tool-call-card--label").render()) == "step 2 of 5"
        card.finish(False, error={"kind": "timeout", "message": "the call took longer than 1 s"})
        await until_shown(pilot, lambda: card.outcome == "✗ the call took longer than 1 s")
        assert card.has_class("-error") and not card.has_class("-running")
        assert not bar.display


async def test_message_view_streams_then_renders_markdown(until) -> None:
    view = MessageView("assistant", "Hel", streaming=True)
    app = Harness(view)
    async with app.run_test() as pilot:
        view.append("lo *you*")
        assert view.text == "Hello *you*"
        # Markdown while it streams: the emphasis is drawn, not its asterisks.
        await until(pilot, lambda: lines_of(view) and "Hello you" in lines_of(view)[0])
        assert view.has_class("-streaming")
        await view.finish("Hello **world**")
        await until_shown(pilot, lambda: lines_of(view)[0].strip().endswith("Hello world"))
        assert not view.streaming and not view.has_class("-streaming")


def lines_of(widget) -> list[str]:
    """What ``widget`` draws, line by line."""
    from textual.geometry import Region

    return [strip.text for strip in widget.render_lines(Region(0, 0, *widget.size))]


async def test_prompt_input_enter_submits_and_ctrl_j_breaks_the_line() -> None:
    box = PromptInput()
    app = Harness(box)
    async with app.run_test() as pilot:
        box.focus()
        await pilot.press("a", "ctrl+j", "b", "enter")
        await until_shown(pilot, lambda: app.submitted == ["a\nb"])
        assert box.text == "a\nb"


async def test_message_list_skips_empty_assistant_steps_and_keeps_order() -> None:
    from workbench.tui.widgets.message_list import MessageList, NoticeLine

    messages = MessageList("Nothing yet")
    app = Harness(messages)
    async with app.run_test() as pilot:
        assert messages.query_one(".message-list--empty").display
        await messages.add_message("user", "hi")
        assert not messages.query_one(".message-list--empty").display
        assert await messages.end_message("m1", "assistant", "") is None
        await messages.append_text("m2", "Hel")
        await messages.append_text("m2", "lo")
        await messages.end_tool_call("c9", "demo.tool", False, error={"message": "refused"})
        await messages.end_message("m2", "assistant", "Hello")
        await messages.add_notice("warning", "careful")
        await until_shown(pilot, lambda: len(messages.views) == 4)
        kinds = [type(view).__name__ for view in messages.views]
        assert kinds == ["MessageView", "MessageView", "ToolCallCard", "NoticeLine"]
        assert messages.query_one(ToolCallCard).outcome == "✗ refused"
        assert messages.query_one(NoticeLine).has_class("-warning")
