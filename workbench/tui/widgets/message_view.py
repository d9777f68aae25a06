"""One chat message: plain text while it streams in, Markdown once it has ended."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static


class MessageView(Vertical):
    """A user or assistant message.

    User messages are shown as typed. Assistant messages grow with ``append`` while
    the model streams and are rendered as Markdown by ``finish``.

    Args:
        role: ``user`` or ``assistant``; becomes the class ``-user`` or ``-assistant``.
        text: The text so far.
        streaming: Whether more text will come (``finish`` ends it).
    """

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
        & > .message-view--body {
            height: auto;
        }
        & > Markdown {
            margin: 0;
            padding: 0;
            background: transparent;
            & > MarkdownBlock:last-child {
                margin-bottom: 0;
            }
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

    def compose(self) -> ComposeResult:
        if self.role == "assistant" and not self.streaming:
            yield Markdown(self.text)
        else:
            yield Static(Text(self.text), classes="message-view--body")

    def append(self, text: str) -> None:
        """Add a streamed piece of text."""
        self.text += text
        self.query_one(".message-view--body", Static).update(Text(self.text))

    async def finish(self, text: str | None = None) -> None:
        """End the stream and render the whole text as Markdown.

        Args:
            text: The message's final text, when the sender gives it; otherwise the
                streamed pieces are kept.
        """
        if text is not None:
            self.text = text
        self.streaming = False
        if self.role != "assistant":
            self.query_one(".message-view--body", Static).update(Text(self.text))
            return
        await self.remove_children()
        await self.mount(Markdown(self.text))
