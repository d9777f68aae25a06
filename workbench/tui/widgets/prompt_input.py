"""The prompt box at the bottom of the chat: Enter sends, Shift+Enter or Ctrl+J breaks the line."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea


class PromptInput(TextArea):
    """A text area that posts ``PromptInput.Submitted`` when Enter is pressed.

    | Key | Does |
    | --- | --- |
    | enter | Post ``Submitted`` with the text (the box keeps it; the screen clears it). |
    | shift+enter, ctrl+j | Insert a line break. |
    """

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: tall $border-blurred;
        &:focus {
            border: tall $border;
        }
        &.-busy {
            border: tall $warning 50%;
        }
    }
    """

    @dataclass
    class Submitted(Message):
        """The person pressed Enter in the prompt box."""

        prompt_input: PromptInput
        """The box that was submitted."""
        text: str
        """Its text, as typed."""

        @property
        def control(self) -> PromptInput:
            return self.prompt_input

    def __init__(self, *, placeholder: str = "", id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(soft_wrap=True, tab_behavior="focus", show_line_numbers=False,
                         highlight_cursor_line=False, placeholder=placeholder, id=id,
                         classes=classes)

    async def _on_key(self, event: events.Key) -> None:
        # Runs before TextArea._on_key (Textual dispatches down the MRO); preventing the
        # default keeps TextArea from inserting a newline for Enter.
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
        elif event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")

    def action_submit(self) -> None:
        """Post ``Submitted`` with the current text."""
        self.post_message(self.Submitted(self, self.text))
