"""Change one setting: its value, typed as on the command line, in the global or the
project config file.

Saving runs the caller's ``save`` in a worker thread (``Config.set``, which keeps the
file's comments). A value the setting refuses, or a file that cannot be parsed, is
said in the dialog, which stays open with what was typed: nothing is written and
nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from workbench.config.settings import Setting
from workbench.errors import WorkbenchError


@dataclass(frozen=True)
class SettingChange:
    """A value to write: the setting, the text typed, and which file."""

    key: str
    text: str
    scope: str
    """``global`` or ``project``."""


class SettingFormScreen(ModalScreen[Any]):
    """Edit ``setting``; dismisses with what ``save`` returned, or None when cancelled.

    Args:
        setting: The setting.
        value: Its value as it applies now, typed (``true``, ``["a"]``).
        origin: Where that value comes from.
        scope: The file to write by default: ``project`` when the value comes from
            the project's config, else ``global``.
        save: Writes a ``SettingChange``; runs in a thread and raises
            ``WorkbenchError`` when the value or the file is refused.

    | Key | Action |
    | --- | --- |
    | enter, ctrl+s | Save |
    | escape | Cancel |
    """

    CSS_PATH = "setting_form.tcss"
    AUTO_FOCUS = "#setting-value"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, setting: Setting, value: str, origin: str, scope: str,
                 save: Callable[[SettingChange], Any]) -> None:
        super().__init__()
        self.setting = setting
        self.value = value
        self.origin = origin
        self.scope = scope
        self.save = save
        self.saving = False

    def compose(self) -> ComposeResult:
        setting = self.setting
        with Vertical(id="setting-dialog") as dialog:
            dialog.border_title = setting.key
            yield Static(Content(setting.help), id="setting-help")
            yield Static(Content.assemble(("It takes ", "$text-muted"), setting.type_name,
                                          ("; now ", "$text-muted"), self.value,
                                          (f" ({self.origin})", "$text-muted")),
                         id="setting-now")
            yield Input(self.value, id="setting-value", select_on_focus=False)
            yield Label("Write it to", classes="setting--label")
            with RadioSet(id="setting-scope"):
                yield RadioButton("my config (every project)", value=self.scope == "global",
                                  id="scope-global")
                yield RadioButton("this project's config", value=self.scope == "project",
                                  id="scope-project")
            yield Static("", id="setting-message")
            with Horizontal(id="setting-buttons"):
                yield Button("Save (Enter)", id="setting-save", variant="primary", compact=True)
                yield Button("Cancel (Esc)", id="setting-cancel", compact=True)

    @property
    def chosen_scope(self) -> str:
        pressed = self.query_one(RadioSet).pressed_button
        return "project" if pressed is not None and pressed.id == "scope-project" else "global"

    def say(self, text: str) -> None:
        message = self.query_one("#setting-message", Static)
        message.update(Content(text))
        message.set_class(bool(text), "-error")

    def action_save(self) -> None:
        """Write the value through the core."""
        if self.saving:
            return
        self.saving = True
        self.say("")
        self._save(SettingChange(self.setting.key, self.query_one(Input).value, self.chosen_scope))

    @on(Input.Submitted, "#setting-value")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    @work(thread=True, group="setting-form")
    def _save(self, change: SettingChange) -> None:
        try:
            result = self.save(change)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._refused, exc)
            return
        self.app.call_from_thread(self.dismiss, result)

    def _refused(self, error: WorkbenchError) -> None:
        self.saving = False
        if self.is_attached:
            self.say(f"Not saved: {error}")

    @on(Button.Pressed, "#setting-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, "#setting-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()

    def action_cancel(self) -> None:
        """Close without writing anything."""
        self.dismiss(None)
