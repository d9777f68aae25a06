"""The chat screen: the conversation, the prompt box and the keys.

Prompts go to the host from a worker; what happens in the turn comes back as
``CoreEvent`` messages from the app's event bridge and is drawn by ``MessageList``.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Label

from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.events import (DisplayBubble, MessageEnded, Notice, SessionStarted, TextDelta,
                              ToolCallEnded, ToolCallLog, ToolCallProgress, ToolCallStarted,
                              TurnEnded)
from workbench.tui.core_event import CoreEvent
from workbench.tui.widgets.message_list import MessageList
from workbench.tui.widgets.prompt_input import PromptInput

SHORT_ID = 8


class ChatScreen(Screen):
    """One conversation with the model.

    Args:
        host: The host that runs the turns.
    """

    CSS_PATH = "chat.tcss"
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel turn"),
    ]

    session_id: reactive[str | None] = reactive(None)
    """The session the next prompt continues; None until the first prompt starts one."""
    busy: reactive[bool] = reactive(False)
    """Whether a turn is running."""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.host = host

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-header"):
            yield Label(self._title(), id="chat-title")
            yield Label("", id="chat-status")
        yield MessageList(
            f"Chatting with {self.host.model_label}.\n"
            "Type a message and press Enter. Shift+Enter or Ctrl+J starts a new line.",
            id="message-list")
        yield PromptInput(placeholder="Message the model…", id="prompt-input")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PromptInput).focus()

    @property
    def message_list(self) -> MessageList:
        return self.query_one(MessageList)

    # --- the header --------------------------------------------------------

    def _title(self) -> Text:
        # The model comes last: a long one (scripted:/some/path) is cut with an
        # ellipsis rather than pushing the session id out of sight.
        title = Text.assemble(("workbench", "bold"))
        if self.session_id:
            title.append("  ·  ")
            title.append(f"session {self.session_id[:SHORT_ID]}", style="dim")
        title.append("  ·  ")
        title.append(self.host.model_label)
        return title

    def watch_session_id(self) -> None:
        if self.is_mounted:
            self.query_one("#chat-title", Label).update(self._title())

    def watch_busy(self, busy: bool) -> None:
        if not self.is_mounted:
            return
        self.query_one("#chat-status", Label).update("● working — Esc cancels" if busy else "")
        self.query_one(PromptInput).set_class(busy, "-busy")
        self.refresh_bindings()

    # --- prompts and turns -------------------------------------------------

    @on(PromptInput.Submitted)
    def send_prompt(self, message: PromptInput.Submitted) -> None:
        text = message.text.strip()
        if not text:
            return
        if self.busy:
            self.notify("A turn is still running; press Escape to cancel it.",
                        severity="warning")
            return
        message.prompt_input.clear()
        self.run_turn(text)

    @work(exclusive=True, group="turn")
    async def run_turn(self, text: str) -> None:
        """Send ``text`` to the host and remember the session it ran in."""
        self.busy = True
        try:
            result = await self.host.send_prompt(text, session_id=self.session_id)
        except WorkbenchError as exc:
            await self.message_list.add_notice("error", str(exc))
        else:
            self.session_id = result.session_id
        finally:
            self.busy = False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy
        return True

    def action_cancel_turn(self) -> None:
        """Cancel the running turn."""
        self.host.cancel()

    # --- core events -------------------------------------------------------

    async def on_core_event(self, message: CoreEvent) -> None:
        event = message.event
        messages = self.message_list
        if not messages.is_attached:
            return  # The app is closing; a cancelled turn still reports its end.
        match event:
            case SessionStarted():
                self.session_id = event.session_id
            case TextDelta():
                await messages.append_text(event.message_id, event.text)
            case MessageEnded():
                await messages.end_message(event.message_id, event.role, event.text)
            case ToolCallStarted():
                await messages.start_tool_call(event.call_id, event.tool, event.arguments)
            case ToolCallProgress():
                card = messages.tool_card(event.call_id)
                if card is not None:
                    card.set_progress(event.progress, event.label)
            case ToolCallLog():
                card = messages.tool_card(event.call_id)
                if card is not None:
                    card.add_log(f"{event.level}: {event.message}")
            case ToolCallEnded():
                await messages.end_tool_call(event.call_id, event.tool, event.ok,
                                             event.result, event.error)
            case DisplayBubble():
                await messages.add_display(event.display, event.payload)
            case TurnEnded(status="error"):
                await messages.add_notice("error", event.error or "the turn failed")
            case TurnEnded(status="cancelled"):
                await messages.add_notice("info", "Cancelled.")
            case Notice():
                await messages.add_notice(event.level, event.message)
