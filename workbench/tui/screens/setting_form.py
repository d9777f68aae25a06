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

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from workbench.core.settings_service import Setting
from workbench.tui.forms.form_screen import FormScreen


@dataclass(frozen=True)
class SettingChange:
    """A value to write: the setting, the text typed, and which file."""

    key: str
    text: str
    scope: str
    """``global`` or ``project``."""


class SettingFormScreen(FormScreen):
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

    def __init__(self, setting: Setting, value: str, origin: str, scope: str,
                 save: Callable[[SettingChange], Any]) -> None:
        super().__init__(save)
        self.setting = setting
        self.value = value
        self.origin = origin
        self.scope = scope

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
            yield Static("", id="setting-message", classes="form--message")
            with Horizontal(id="setting-buttons"):
                yield Button("Save (Enter)", id="setting-save", classes="form--save",
                             variant="primary", compact=True)
                yield Button("Cancel (Esc)", id="setting-cancel", classes="form--cancel",
                             compact=True)

    @property
    def chosen_scope(self) -> str:
        pressed = self.query_one(RadioSet).pressed_button
        return "project" if pressed is not None and pressed.id == "scope-project" else "global"

    def checked(self) -> SettingChange:
        """The value as typed, for the file chosen; the core checks it when it writes."""
        return SettingChange(self.setting.key, self.query_one(Input).value, self.chosen_scope)

    @on(Input.Submitted, "#setting-value")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()
