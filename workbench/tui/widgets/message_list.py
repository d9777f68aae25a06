"""The scrolling conversation: messages, tool-call cards, display bubbles and notices.

The chat screen calls the methods here as core events arrive; this widget only keeps
track of which view belongs to which message or call.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from workbench.tui.widgets.display_view import DisplayView
from workbench.tui.widgets.message_view import MessageView
from workbench.tui.widgets.tool_call_card import ToolCallCard

NOTICE_ICONS = {"info": "ℹ", "warning": "⚠", "error": "✗"}


class NoticeLine(Static):
    """A line the workbench says about itself (setup warnings, errors, cancellations).

    Args:
        level: ``info``, ``warning`` or ``error``; becomes the class ``-info`` etc.
        message: What to say.
    """

    DEFAULT_CSS = """
    NoticeLine {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        color: $text-muted;
        &.-warning { color: $text-warning; background: $warning 10%; }
        &.-error { color: $text-error; background: $error 10%; }
    }
    """

    def __init__(self, level: str, message: str) -> None:
        icon = NOTICE_ICONS.get(level, NOTICE_ICONS["info"])
        super().__init__(Text(f"{icon} {message}"), classes=f"-{level}")
        self.level = level
        self.message = message


class MessageList(VerticalScroll):
    """The conversation, newest at the bottom; it follows new content until scrolled up.

    Args:
        placeholder: What to show while the conversation is empty.
    """

    DEFAULT_CSS = """
    MessageList {
        height: 1fr;
        padding: 1 1 0 1;
        & > .message-list--empty {
            width: 100%;
            height: 1fr;
            color: $text-muted;
            text-align: center;
            content-align: center middle;
            padding: 0 4;
        }
    }
    """

    def __init__(self, placeholder: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.placeholder = placeholder
        self._messages: dict[str, MessageView] = {}
        self._cards: dict[str, ToolCallCard] = {}

    def compose(self):
        if self.placeholder:
            yield Static(Text(self.placeholder), classes="message-list--empty")

    async def _add(self, widget: Widget) -> Widget:
        if not self.is_anchored:
            # From the first message on, the conversation sits at the bottom, next to
            # the prompt, and follows new content until the person scrolls up.
            await self.query(".message-list--empty").remove()
            self.anchor()
        await self.mount(widget)
        return widget

    # --- messages ----------------------------------------------------------

    async def add_message(self, role: str, text: str) -> MessageView:
        """Add a complete message."""
        view = MessageView(role, text)
        await self._add(view)
        return view

    async def append_text(self, message_id: str, text: str) -> MessageView:
        """Add a streamed piece to the assistant message ``message_id``, starting it if new."""
        view = self._messages.get(message_id)
        if view is None:
            view = MessageView("assistant", text, streaming=True)
            self._messages[message_id] = view
            await self._add(view)
        else:
            view.append(text)
        return view

    async def end_message(self, message_id: str, role: str, text: str) -> MessageView | None:
        """End a message: render a streamed one as Markdown, or add it whole.

        An assistant message with no text (a step that only called tools) adds nothing.
        """
        view = self._messages.pop(message_id, None)
        if view is not None:
            await view.finish(text or view.text)
            return view
        if not text.strip():
            return None
        return await self.add_message(role, text)

    # --- tool calls --------------------------------------------------------

    async def start_tool_call(self, call_id: str, tool: str, arguments: Any) -> ToolCallCard:
        """Add a card for a call that started."""
        card = ToolCallCard(call_id, tool, arguments)
        self._cards[call_id] = card
        await self._add(card)
        return card

    def tool_card(self, call_id: str) -> ToolCallCard | None:
        """The card of ``call_id``, if it is shown."""
        return self._cards.get(call_id)

    async def end_tool_call(self, call_id: str, tool: str, ok: bool, result: Any = None,
                            error: dict[str, Any] | None = None) -> ToolCallCard:
        """Show how a call ended; a call refused before it started gets its card now."""
        card = self._cards.get(call_id)
        if card is None:
            card = await self.start_tool_call(call_id, tool, None)
        card.finish(ok, result, error)
        return card

    # --- the rest ----------------------------------------------------------

    async def add_display(self, display: str, payload: dict[str, Any]) -> DisplayView:
        """Add a display bubble a tool pushed."""
        view = DisplayView(display, payload)
        await self._add(view)
        return view

    async def add_notice(self, level: str, message: str) -> NoticeLine:
        """Add a notice line."""
        line = NoticeLine(level, message)
        await self._add(line)
        return line
