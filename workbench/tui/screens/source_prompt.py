"""Where to install an extension from: a folder, an archive, or a package on npm."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

PLACEHOLDER = "./my-extension, ~/Downloads/foo.tgz or npm:loca-extension-foo"


class SourcePromptScreen(ModalScreen[str | None]):
    """Ask for a source; dismisses with the text typed, or None when cancelled.

    | Key | Action |
    | --- | --- |
    | enter | Review what it brings |
    | escape | Cancel |
    """

    CSS_PATH = "source_prompt.tcss"
    AUTO_FOCUS = "#source-input"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="source-dialog") as dialog:
            dialog.border_title = "Install an extension"
            yield Label("A folder, a .tgz or .zip file, or npm:NAME[@VERSION]:")
            yield Input(placeholder=PLACEHOLDER, id="source-input")
            yield Static("Enter shows what it brings before anything is installed; "
                         "Esc cancels.", id="source-hint")

    @on(Input.Submitted, "#source-input")
    def submit(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.query_one("#source-hint", Static).update(
                "Type a folder, an archive or npm:NAME first (Esc cancels).")
            self.query_one("#source-hint").add_class("-error")
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        """Close without installing anything."""
        self.dismiss(None)
