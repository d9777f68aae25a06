"""The chat widgets on their own: tool-call cards, message views, the prompt box."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Markdown, ProgressBar

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
        await pilot.pause()
        bar = card.query_one(ProgressBar)
        assert bar.percentage == 0.4
        assert str(card.query_one(".tool-call-card--log").render()) == "step 2 of 5"
        card.finish(False, error={"kind": "timeout", "message": "the call took longer than 1 s"})
        await pilot.pause()
        assert card.outcome == "✗ the call took longer than 1 s"
        assert card.has_class("-error") and not card.has_class("-running")
        assert not bar.display


async def test_message_view_streams_then_renders_markdown() -> None:
    view = MessageView("assistant", "Hel", streaming=True)
    app = Harness(view)
    async with app.run_test() as pilot:
        view.append("lo *you*")
        assert str(view.query_one(".message-view--body").render()) == "Hello *you*"
        assert not view.query(Markdown)
        await view.finish()
        await pilot.pause()
        assert view.query_one(Markdown).source == "Hello *you*"
        assert not view.streaming


async def test_prompt_input_enter_submits_and_ctrl_j_breaks_the_line() -> None:
    box = PromptInput()
    app = Harness(box)
    async with app.run_test() as pilot:
        box.focus()
        await pilot.press("a", "ctrl+j", "b", "enter")
        await pilot.pause()
        assert app.submitted == ["a\nb"]
        assert box.text == "a\nb"


async def test_display_bubbles_render_each_kind() -> None:
    from workbench.tui.widgets.display_view import DisplayView

    views = [
        DisplayView("markdown", {"text": "# Title"}),
        DisplayView("table", {"columns": ["name", "size"], "rows": [["a.txt", "3"]]}),
        DisplayView("diff", {"before": "one\n", "after": "two\n", "title": "notes.txt"}),
        DisplayView("image", {"dataB64": "", "mime": "image/png", "alt": "a cat"}),
    ]
    app = Harness(*views)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        markdown, table, diff, image = views
        assert markdown.query_one(Markdown).source == "# Title"
        assert table.region.height >= 3
        assert "notes.txt" in str(diff.query("Static").first().render())
        assert str(image.query_one("Static").render()) == "[image image/png: a cat]"


async def test_message_list_skips_empty_assistant_steps_and_keeps_order() -> None:
    from workbench.tui.widgets.message_list import MessageList, NoticeLine

    messages = MessageList("Nothing yet")
    app = Harness(messages)
    async with app.run_test() as pilot:
        assert messages.query(".message-list--empty")
        await messages.add_message("user", "hi")
        assert not messages.query(".message-list--empty")
        assert await messages.end_message("m1", "assistant", "") is None
        await messages.append_text("m2", "Hel")
        await messages.append_text("m2", "lo")
        await messages.end_tool_call("c9", "demo.tool", False, error={"message": "refused"})
        await messages.end_message("m2", "assistant", "Hello")
        await messages.add_notice("warning", "careful")
        await pilot.pause()
        kinds = [type(child).__name__ for child in messages.children]
        assert kinds == ["MessageView", "MessageView", "ToolCallCard", "NoticeLine"]
        assert messages.query_one(ToolCallCard).outcome == "✗ refused"
        assert messages.query_one(NoticeLine).has_class("-warning")
