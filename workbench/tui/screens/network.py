"""The network card: a shell command asks for a host its chat does not allow but the
person's ceiling does. Allow once (this command), Allow for this chat, or Deny; the
screen dismisses with ``"once"``, ``"chat"`` or ``"deny"`` (``NETWORK_ANSWERS``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.events import NETWORK_ANSWERS, NetworkRequest


class NetworkScreen(ModalScreen[str]):
    """Ask whether a shell command may reach ``request.host`` on ``request.port``.

    | Key | Answer |
    | --- | --- |
    | o | Allow once (this command) |
    | c | Allow for this chat |
    | d, escape | Deny |
    """

    CSS_PATH = "network.tcss"
    AUTO_FOCUS = "#deny"
    BINDINGS = [
        Binding("o", "answer('once')", "Allow once"),
        Binding("c", "answer('chat')", "This chat"),
        Binding("d", "answer('deny')", "Deny"),
        Binding("escape", "answer('deny')", "Deny", show=False),
    ]

    def __init__(self, request: NetworkRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="network-dialog") as dialog:
            dialog.border_title = "Network"
            yield Static(Content.assemble((request.tool, "bold $text-primary"), " wants to reach ",
                                          (f"{request.host}", "bold $text-accent"),
                                          f" (port {request.port})"), id="network-target")
            yield Static(Content.styled("This chat's network does not allow it; your ceiling "
                                        "(shell.network_ceiling) does.", "$text-muted"),
                         id="network-why")
            if request.command:
                yield Static(Content.styled(request.command.splitlines()[0][:200], "$text-muted italic"),
                             id="network-command")
            with Horizontal(id="network-buttons"):
                yield Button(Content.from_markup("Allow [u]o[/u]nce"), id="once", variant="primary")
                yield Button(Content.from_markup("Allow for this [u]c[/u]hat"), id="chat")
                yield Button(Content.from_markup("[u]D[/u]eny"), id="deny", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in NETWORK_ANSWERS:
            event.stop()
            self.action_answer(event.button.id)

    def action_answer(self, answer: str) -> None:
        """Close the card with ``answer``."""
        self.dismiss(answer)
