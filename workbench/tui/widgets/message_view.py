"""One chat message: the person's text as typed, the model's as Markdown, even while it streams."""

from __future__ import annotations

import time

from rich.console import RenderableType
from rich.text import Text
from rich.theme import Theme
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Static


STREAM_INTERVAL = 1 / 20
"""At most this often (seconds) a streaming reply is drawn again."""

_themes: dict[str, Theme] = {}
"""Rich themes for the Markdown, per Textual theme name: the same for every message."""


class MessageView(Static, can_focus=True):
    """A user or assistant message; focus it to copy it.

    Assistant messages are Markdown from the first streamed piece on: ``append`` adds
    pieces (drawn at most every ``STREAM_INTERVAL``), ``finish`` draws the final text.

    | Key | Does |
    | --- | --- |
    | c | Copy the message's text to the clipboard. |

    Args:
        role: ``user`` or ``assistant``; becomes the class ``-user`` or ``-assistant``.
        text: The text so far.
        streaming: Whether more text will come (``finish`` ends it).
    """

    BINDINGS = [Binding("c", "copy", "Copy")]

    DEFAULT_CSS = """
    MessageView {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        border-left: outer $secondary;
        &.-user {
            border-left: outer $primary;
            background: $primary 10%;
        }
        &.-streaming {
            border-left: outer $secondary 50%;
        }
        &:focus {
            border-left: outer $accent;
            background: $accent 10%;
        }
    }
    """

    def __init__(self, role: str, text: str = "", *, streaming: bool = False,
                 id: str | None = None) -> None:
        super().__init__(id=id, classes=f"-{role}")
        self.role = role
        self.text = text
        """The message's text so far."""
        self.streaming = streaming
        """Whether the message is still growing."""
        self.set_class(streaming, "-streaming")
        self._drawn_at = 0.0
        self._drawn_theme: str | None = None
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self._draw()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        # A new theme restyles every widget: draw the Markdown again in its colors.
        # (Not a theme signal subscription: a long chat mounts and unmounts many views.)
        drawn = getattr(self, "_drawn_theme", None)  # also called while __init__ runs
        if drawn is not None and drawn != self.app.theme:
            self._draw()

    def _renderable(self) -> RenderableType:
        if self.role != "assistant":
            return Text(self.text)
        # Imported with the first reply (Rich's Markdown and Syntax are slow to
        # import and the first frame has none).
        from workbench.tui.widgets.chat_markdown import ChatMarkdown, markdown_theme

        name = self.app.theme
        theme = _themes.get(name)
        if theme is None:
            theme = _themes[name] = markdown_theme(self.app.theme_variables)
        return ChatMarkdown(self.text, theme, dark=self.app.current_theme.dark)

    def _draw(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._drawn_at = time.monotonic()
        self._drawn_theme = self.app.theme
        self.update(self._renderable())

    def append(self, text: str) -> None:
        """Add a streamed piece of text."""
        self.text += text
        if not self.is_mounted or self._timer is not None:
            return
        wait = STREAM_INTERVAL - (time.monotonic() - self._drawn_at)
        if wait <= 0:
            self._draw()
        else:
            self._timer = self.set_timer(wait, self._draw)

    async def finish(self, text: str | None = None) -> None:
        """End the stream and draw the whole text.

        Args:
            text: The message's final text, when the sender gives it; otherwise the
                streamed pieces are kept.
        """
        if text is not None:
            self.text = text
        self.streaming = False
        self.remove_class("-streaming")
        if self.is_mounted:
            self._draw()

    def action_copy(self) -> None:
        """Copy the message's text to the clipboard and say so."""
        self.app.copy_to_clipboard(self.text)
        lines = self.text.count("\n") + 1
        self.notify(f"Copied the {'reply' if self.role == 'assistant' else 'message'} "
                    f"({len(self.text)} characters, {lines} line{'s' if lines != 1 else ''}).",
                    title="Copied")
