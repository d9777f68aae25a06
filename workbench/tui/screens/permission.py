"""The permission prompt: a tool needs something it was not granted.

The person answers with a key: once, for the session, always, or deny. The screen
dismisses with the decision; ``TuiResponder`` turns it into the core's answer.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from workbench.events import PermissionRequest

DECISIONS = ("once", "session", "always", "deny")


class PermissionScreen(ModalScreen[str]):
    """Ask whether ``request.tool`` may have ``request.permissions``.

    Dismisses with ``once``, ``session``, ``always`` or ``deny``.

    | Key | Decision |
    | --- | --- |
    | o | Allow this call once |
    | s | Allow for this session |
    | a | Allow always |
    | d, escape | Deny |
    """

    CSS_PATH = "permission.tcss"
    AUTO_FOCUS = "#deny"
    BINDINGS = [
        Binding("o", "decide('once')", "Once"),
        Binding("s", "decide('session')", "Session"),
        Binding("a", "decide('always')", "Always"),
        Binding("d", "decide('deny')", "Deny"),
        Binding("escape", "decide('deny')", "Deny", show=False),
    ]

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(id="permission-dialog") as dialog:
            dialog.border_title = "Permission needed"
            yield Label(Text.assemble((self.request.tool, "bold"), " asks to:"),
                        id="permission-tool")
            for entry in self.request.permissions:
                what = f"{entry.get('kind', '')} {entry.get('value', '')}".strip()
                yield Static(Text.assemble("• ", (what, "bold")), classes="permission--entry")
                if entry.get("reason"):
                    yield Static(Text(str(entry["reason"])), classes="permission--reason")
            with Horizontal(id="permission-buttons"):
                yield Button("[u]O[/u]nce", id="once", variant="primary")
                yield Button("[u]S[/u]ession", id="session")
                yield Button("[u]A[/u]lways", id="always")
                yield Button("[u]D[/u]eny", id="deny", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id in DECISIONS:
            event.stop()
            self.dismiss(event.button.id)

    def action_decide(self, decision: str) -> None:
        """Close the prompt with ``decision``."""
        self.dismiss(decision)
