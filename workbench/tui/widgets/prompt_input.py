"""The prompt box at the bottom of the chat: Enter sends, Shift+Enter or Ctrl+J breaks the line,
Up and Down bring back earlier prompts, ``?`` in an empty box asks for the help, and a slash
command menu takes the keys while open."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

MENU_KEYS = ("up", "down", "tab", "enter", "escape")
"""Keys a slash command menu takes while it is open."""


class PromptInput(TextArea):
    """A text area that posts ``PromptInput.Submitted`` when Enter is pressed.

    | Key | Does |
    | --- | --- |
    | enter | Post ``Submitted`` with the text (the box keeps it; the screen clears it). |
    | shift+enter, ctrl+j | Insert a line break. |
    | up, down | In an empty box (or one showing an earlier prompt unchanged): the previous or next earlier prompt. |
    | up, down, tab, enter, escape | While ``menu_open``: posted as ``MenuKey`` for the menu. |
    | ? | In an empty box: post ``HelpAsked`` (the screen opens the help). |
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

    @dataclass
    class HelpAsked(Message):
        """``?`` was pressed in the empty box."""

        prompt_input: PromptInput

        @property
        def control(self) -> PromptInput:
            return self.prompt_input

    @dataclass
    class MenuKey(Message):
        """A key for the slash command menu, pressed while it is open."""

        prompt_input: PromptInput
        key: str
        """``up``, ``down``, ``tab``, ``enter`` or ``escape``."""

        @property
        def control(self) -> PromptInput:
            return self.prompt_input

    def __init__(self, *, placeholder: str = "", id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(soft_wrap=True, tab_behavior="focus", show_line_numbers=False,
                         highlight_cursor_line=False, placeholder=placeholder, id=id,
                         classes=classes)
        self.prompt_history: list[str] = []
        """Earlier prompts, oldest first; Up brings them back."""
        self.menu_open = False
        """Whether a slash command menu is open (the screen sets it)."""
        self._recalled: int | None = None
        """The index in ``prompt_history`` of the prompt the box shows, while it shows one."""

    def remember(self, text: str) -> None:
        """Add a sent prompt to the history (not twice in a row)."""
        if text and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)
        self._recalled = None

    async def _on_key(self, event: events.Key) -> None:
        # Runs before TextArea._on_key (Textual dispatches down the MRO); preventing the
        # default keeps TextArea from inserting a newline for Enter. Stopping a key here
        # also keeps it from the bindings (the chat's Escape, TextArea's Up and Down).
        if self.menu_open and event.key in MENU_KEYS:
            event.stop()
            event.prevent_default()
            self.post_message(self.MenuKey(self, event.key))
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
        elif event.character == "?" and not self.text:
            event.stop()
            event.prevent_default()
            self.post_message(self.HelpAsked(self))
        elif event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
        elif event.key in ("up", "down") and self._recall(-1 if event.key == "up" else 1):
            event.stop()
            event.prevent_default()

    def _recall(self, step: int) -> bool:
        """Show the previous (``step`` -1) or next earlier prompt; whether the key was used."""
        showing = self._recalled
        if showing is not None and (showing >= len(self.prompt_history)
                                    or self.text != self.prompt_history[showing]):
            showing = self._recalled = None  # edited since: a draft like any other
        if self.text and showing is None:
            return False
        if showing is None:
            if step > 0 or not self.prompt_history:
                return False
            target = len(self.prompt_history) - 1
        else:
            target = showing + step
        if target < 0:
            return True  # already at the oldest: keep it
        if target >= len(self.prompt_history):
            self._recalled = None
            self.clear()
            return True
        self._recalled = target
        self.load_text(self.prompt_history[target])
        self.move_cursor(self.document.end)
        return True

    def action_submit(self) -> None:
        """Post ``Submitted`` with the current text."""
        self.post_message(self.Submitted(self, self.text))
