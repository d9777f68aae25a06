"""The screen of the first frame: the chat's header and prompt box, drawn while the
host opens in a thread.

It imports only Textual and the prompt box, so that it is on the terminal before the
core is imported. What a person types here is kept: the text in the box moves to the
chat's box, what was sent with Enter is listed here and sent, in order, once the
chat is there, and a key for one of the chat's screens opens it then (``WorkbenchApp``
does all three when the host is open).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from workbench.tui.widgets.prompt_input import PromptInput

PLACEHOLDER = "Message the model…  (/ for commands)"
"""The prompt box's placeholder, the chat's own."""


class StartingScreen(Screen):
    """The chat as it looks before the host is open: its header, an empty
    conversation and the prompt box, focused.

    The chat's keys that mean something in a chat not yet started are taken here and
    done once it is (``later``); the others have nothing to act on yet (a new chat, the
    messages, cancelling a turn).
    """

    BINDINGS = [Binding("ctrl+o", "later('show_sessions')", "Sessions")]

    DEFAULT_CSS = """
    StartingScreen {
        layout: vertical;
        background: $background;
    }
    StartingScreen #chat-header {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    StartingScreen #starting-sent {
        height: 1fr;
        padding: 0 1;
    }
    StartingScreen #starting-sent Static {
        color: $text-muted;
    }
    StartingScreen #prompt-input {
        margin: 0 1;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []
        """What was sent with Enter before the chat was there, oldest first."""
        self.later: list[str] = []
        """The chat's actions asked for before it was there, to run once it is."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="chat-header"):
            yield Label("[b]workbench[/b]", id="chat-title")
        yield VerticalScroll(id="starting-sent")
        yield PromptInput(placeholder=PLACEHOLDER, id="prompt-input")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PromptInput).focus()

    @property
    def prompt_input(self) -> PromptInput:
        return self.query_one(PromptInput)

    def action_later(self, action: str) -> None:
        """Run the chat's ``action`` once the chat is there."""
        self.later.append(action)

    @on(PromptInput.HelpAsked)
    async def open_help(self) -> None:
        await self.app.run_action("open('help')")

    @on(PromptInput.Submitted)
    async def keep_sent(self, message: PromptInput.Submitted) -> None:
        """Keep a message sent before the chat is there; it is shown as waiting."""
        text = message.text.strip()
        if not text:
            return
        message.prompt_input.clear()
        self.sent.append(text)
        await self.query_one("#starting-sent").mount(
            Static(f"{text}\n  (sent once the chat is open)", markup=False))
