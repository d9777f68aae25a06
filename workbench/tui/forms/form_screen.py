"""A dialog of fields with Save and Cancel: how the setting and schedule forms save.

Save (ctrl+s, or the button with the class ``form--save``) reads the fields
(``checked``). Without a ``save`` the form dismisses with what it read; with one, it
runs ``save`` in a worker thread, one at a time, and dismisses with what that
returned. A field that cannot be read (``FormProblem``) or a refusal by the core
(``WorkbenchError``) is said on the form's message line, the ``Static`` with the class
``form--message``, and the form stays open with everything typed. Cancel (escape, or
the ``form--cancel`` button) dismisses with None.

Textual and ``workbench.errors`` only: nothing of the app or the chat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on, work
from textual.binding import Binding
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.errors import WorkbenchError


class FormProblem(ValueError):
    """A field of a form that cannot be read; the message names it."""


class FormScreen(ModalScreen[Any]):
    """A form that saves what ``checked`` reads, or says why not; see the module docstring.

    | Key | Does |
    | --- | --- |
    | ctrl+s | Save |
    | escape | Cancel: nothing is saved |

    Args:
        save: Saves what the fields hold through the core; runs in a thread and raises
            ``WorkbenchError`` when the core refuses. None: Save dismisses with it.
    """

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    checked: Callable[[], Any]
    """Each form's method giving what its fields hold, ready to save; it raises
    ``FormProblem`` when a field cannot be read or holds what would be refused."""

    def __init__(self, save: Callable[[Any], Any] | None = None) -> None:
        super().__init__()
        self.save = save
        self.saving = False
        """Whether ``save`` is running; another Save meanwhile does nothing."""
        self.problem = ""
        """Why the last Save was refused (empty: none yet)."""

    def say(self, text: str) -> None:
        """Show ``text`` on the message line as a problem; empty clears it."""
        message = self.query_one(".form--message", Static)
        message.update(Content(text))
        message.set_class(bool(text), "-error")

    def action_save(self) -> None:
        """Save what the fields hold, unless a field cannot be read or a save is running."""
        if self.saving:
            return
        try:
            value = self.checked()
        except FormProblem as exc:
            self._refused(str(exc))
            return
        if self.save is None:
            self.dismiss(value)
            return
        self.saving = True
        self.say("")
        self._save(self.save, value)

    @work(thread=True, group="form-save")
    def _save(self, save: Callable[[Any], Any], value: Any) -> None:
        try:
            result = save(value)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._refused, str(exc))
            return
        self.app.call_from_thread(self.dismiss, result)

    def _refused(self, reason: str) -> None:
        self.saving = False
        self.problem = reason
        if self.is_attached:
            self.say(f"Not saved: {reason}")

    def action_cancel(self) -> None:
        """Close without saving anything."""
        self.dismiss(None)

    @on(Button.Pressed, ".form--save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, ".form--cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()
