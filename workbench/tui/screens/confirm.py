"""A yes-or-no question before something that cannot be undone (removing an extension)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``question``; dismisses with True for yes.

    Args:
        title: The dialog's title.
        question: What is asked.
        detail: What going ahead does, in a sentence or two.
        yes: What yes does, shown on its button (``Yes, remove``); empty for ``Yes``.

    | Key | Answer |
    | --- | --- |
    | y | Yes |
    | n, escape | No |
    """

    CSS_PATH = "confirm.tcss"
    AUTO_FOCUS = "#confirm-no"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n", "answer(False)", "No"),
        Binding("escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, title: str, question: str, detail: str = "", *, yes: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.question = question
        self.detail = detail
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Label(Content.styled(self.question, "bold"), id="confirm-question")
            if self.detail:
                yield Static(Content(self.detail), id="confirm-detail")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"[u]Y[/u]es, {self.yes}" if self.yes else "[u]Y[/u]es",
                             id="confirm-yes", variant="error")
                yield Button("[u]N[/u]o", id="confirm-no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        """Close the question with the answer."""
        self.dismiss(yes)
