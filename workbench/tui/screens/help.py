"""The keys, listed from the bindings themselves: those of the screen below, then the
app's, each with what it does (``workbench.tui.keys``, which the palette reads too)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from workbench.tui.keys import KeyRow


class HelpScreen(ModalScreen[None]):
    """The keys of ``title``'s screen and of every screen.

    Args:
        title: What the screen below is called (``Tasks``).
        rows: Its keys and the app's (``key_rows``).

    | Key | Action |
    | --- | --- |
    | escape, f1, ? | Close |
    | up, down, page up, page down | Scroll |
    """

    CSS_PATH = "help.tcss"
    shell_name = "help"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("f1", "close", "Close", show=False),
        Binding("question_mark", "close", "Close", show=False),
    ]

    def __init__(self, title: str, rows: Sequence[KeyRow]) -> None:
        super().__init__()
        self.title_text = title
        self.rows = tuple(rows)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog") as dialog:
            dialog.border_title = "Keys"
            dialog.border_subtitle = "Esc closes · Ctrl+P finds any action by name"
            with VerticalScroll(id="help-keys"):
                here = [row for row in self.rows if not row.everywhere]
                everywhere = [row for row in self.rows if row.everywhere]
                if here:
                    yield Label(Content.styled(f"On this screen: {self.title_text}", "bold"),
                                classes="help--heading")
                    yield from self._rows(here)
                yield Label(Content.styled("Everywhere", "bold"), classes="help--heading")
                yield from self._rows(everywhere)

    def _rows(self, rows: Sequence[KeyRow]) -> ComposeResult:
        for row in rows:
            with Horizontal(classes="help--row" + ("" if row.enabled else " -disabled")):
                yield Static(" ".join(row.keys), classes="help--keys")
                text = Content.styled(row.description, "bold")
                if row.help:
                    text = Content.assemble(text, "  ", (row.help, "$text-muted"))
                yield Static(text, classes="help--what")

    def on_mount(self) -> None:
        self.query_one("#help-keys").focus()

    def action_close(self) -> None:
        """Close the keys."""
        self.dismiss(None)
