"""The Settings screen: every setting with its value and where it comes from, the two
config files, and whether the project's config is trusted.

Values are read from the files in a worker thread (``host.settings.view``, so a file changed
or broken since the start is shown as it is now). Enter opens a dialog that writes the
value through ``Config.set`` (the core keeps the file's comments; a refused value is
said there and nothing is written). ``t`` trusts the project's config after showing
what it sets (``host.mcp.trust_project``, as ``workbench trust`` does); the host
then reads its config again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static

from workbench.core.host import Host
from workbench.core.settings_service import SETTING_KEYS, ConfigView
from workbench.errors import ConfigError, WorkbenchError
from workbench.tui.paths import shown_path
from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.screens.setting_form import SettingChange, SettingFormScreen

KEY_WIDTH = max(len(key) for key in SETTING_KEYS)
VALUE_WIDTH = 30
"""Values longer than this are cut in the table (the dialog shows them whole)."""

TRUST_STATES = {"untrusted": ("not trusted: its settings are ignored", "$text-warning"),
                "changed": ("changed since you trusted it: the trusted version applies",
                            "$text-warning"),
                "trusted": ("trusted", "$text-success")}


CHATS_SHOWN = 3
"""How many chats with a model of their own the model setting's help names."""


def chats_line(chats: dict[str, Any]) -> str:
    """Which chats follow the default model and which have their own, in one line."""
    if not chats:
        return ""
    following, own = chats["following"], chats["own"]
    line = f"{following} chat{'s' if following != 1 else ''} follow{'s' if following == 1 else ''} the default"
    if not own:
        return line + "; none has a model of its own (/model in a chat gives it one)."
    named = ", ".join(f"{chat['id'][:8]} {chat['model']}" for chat in own[:CHATS_SHOWN])
    more = f" and {len(own) - CHATS_SHOWN} more" if len(own) > CHATS_SHOWN else ""
    return f"{line}; {len(own)} {'has' if len(own) == 1 else 'have'} their own: {named}{more}."


def short_origin(origin: str) -> str:
    """``global``, ``project`` or ``default`` from an origin like ``global: /path``."""
    head = origin.split(":", 1)[0]
    if "trusted version" in origin:
        return "project*"
    return head


def shown_origin(origin: str, view: ConfigView) -> str:
    """An origin (``global: /home/me/…/config.toml``) with its file written as on screen."""
    for path in (view.global_file, view.project_file):
        if path is not None:
            origin = origin.replace(str(path), shown_path(path))
    return origin


class SettingsScreen(Screen):
    """The settings, the config files and the project's trust.

    | Key | Action |
    | --- | --- |
    | up, down | Move between settings |
    | enter | Change the setting under the cursor |
    | t | Trust the project's config (shows what it sets first) |
    | escape, f4 | Back |
    """

    CSS_PATH = "settings.tcss"
    shell_name = "settings"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("f4", "close", "Back", show=False),
        Binding("enter", "edit", "Change"),
        Binding("t", "trust", "Trust project"),
    ]

    def __init__(self, host: Host) -> None:
        super().__init__(id="settings")
        self.host = host
        self.view: ConfigView | None = None
        """What is shown, from the last read."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="settings-header"):
            yield Label(Content.assemble(("workbench", "bold"), "  ·  Settings"),
                        id="settings-title")
            yield Label("Enter changes a value", id="settings-keys")
        with Vertical(id="settings-files"):
            yield Static("", id="settings-global")
            yield Static("", id="settings-project")
        yield DataTable(id="settings-table", cursor_type="row", zebra_stripes=False)
        yield Static("", id="settings-help")
        yield Static("", id="settings-message")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("Setting", key="key", width=KEY_WIDTH)
        table.add_column("Value", key="value", width=VALUE_WIDTH)
        table.add_column("From", key="from", width=8)
        table.focus()
        self.refresh_settings()

    # --- reading ---------------------------------------------------------------------

    @property
    def selected_key(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def say(self, text: str, level: str = "info") -> None:
        message = self.query_one("#settings-message", Static)
        message.update(Content(text))
        message.set_classes(f"-{level}" if text else "")

    @work(thread=True, exclusive=True, group="settings-read")
    def refresh_settings(self, select: str | None = None) -> None:
        """Read the config files again."""
        view = self.host.settings.view()
        self.app.call_from_thread(self._show, view, select)

    def _show(self, view: ConfigView, select: str | None) -> None:
        if not self.is_attached:
            return
        self.view = view
        exists = "" if view.global_file.exists() else "  (not made yet)"
        self.query_one("#settings-global", Static).update(Content.assemble(
            ("my config  ", "$text-muted"), shown_path(view.global_file), (exists, "$text-muted")))
        self.query_one("#settings-project", Static).update(self._project_line(view))
        table = self.query_one(DataTable)
        keep = select or self.selected_key
        table.clear()
        for key, value, origin in view.rows:
            shown = "••••••" if self.host.settings.declared(key).secret else self.host.settings.shown(value)
            if len(shown) > VALUE_WIDTH:
                shown = shown[: VALUE_WIDTH - 1] + "…"
            style = "" if origin == "default" else "bold"
            table.add_row(Content.styled(key, style), shown, short_origin(origin), key=key)
        keys = [key for key, _, _ in view.rows]
        if keep in keys:
            table.move_cursor(row=keys.index(keep))
        self._show_help()
        if view.problem:
            self.say(f"A config file cannot be read now, so the values in force are shown: "
                     f"{view.problem}", "error")
        self.refresh_bindings()

    def _project_line(self, view: ConfigView) -> Content:
        if view.project_file is None:
            return Content.assemble(("project    ", "$text-muted"),
                                    ("none here (changing a value for this project makes "
                                     f"{shown_path(self.host.cwd)}/.workbench/config.toml)",
                                     "$text-muted"))
        state, style = TRUST_STATES.get(view.project_state, (view.project_state, ""))
        line = Content.assemble(("project    ", "$text-muted"), shown_path(view.project_file),
                                "  ", (state, style))
        if view.project_state != "trusted":
            line = Content.assemble(line, ("  (t trusts it)", "$text-muted"))
        return line

    @on(DataTable.RowHighlighted, "#settings-table")
    def _show_help(self) -> None:
        key, view = self.selected_key, self.view
        if key is None or view is None:
            return
        origin = next((where for found, _, where in view.rows if found == key), "default")
        chats = chats_line(view.chats) if key == "model" else ""
        self.query_one("#settings-help", Static).update(Content.assemble(
            self.host.settings.declared(key).help, "\n", *((chats, "\n") if chats else ()),
            (f"from {shown_origin(origin, view)}", "$text-muted")))

    # --- changing --------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "trust":
            view = self.view
            if view is None or view.project_file is None:
                return False
            return view.project_state != "trusted" or None
        return True

    @on(DataTable.RowSelected, "#settings-table")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_edit()

    def action_edit(self) -> None:
        """Change the setting under the cursor."""
        key, view = self.selected_key, self.view
        if key is None or view is None:
            return
        value, origin = next((v, o) for k, v, o in view.rows if k == key)
        scope = "project" if origin.startswith("project") else "global"
        themes = set(self.app.available_themes)

        def save(change: SettingChange) -> tuple[str, str | None]:
            if change.key == "theme" and change.text.strip() not in themes:
                raise ConfigError(f"unknown theme {change.text.strip()!r}; known: "
                                  f"{', '.join(sorted(themes))}")
            notice = self.host.config.set(change.key, change.text, change.scope)  # type: ignore[arg-type]
            return change.key, notice

        dialog = SettingFormScreen(self.host.settings.declared(key), self.host.settings.shown(value), shown_origin(origin, view),
                                   scope, save)
        self.app.push_screen(dialog, self._saved)

    def _saved(self, result: tuple[str, str | None] | None) -> None:
        if result is None:
            return
        key, notice = result
        value = self.host.settings.shown(self.host.config.get(key))
        if key == "theme":
            self.app.theme = self.host.config.settings.theme
        if notice:
            self.say(f"Saved {key}. {notice}", "warning")
        else:
            self.say(f"Saved {key} = {value}. Settings read at start (limits, the model) "
                     "apply from the next start.", "success")
        self.refresh_settings(select=key)

    def action_trust(self) -> None:
        """Show what the project's config sets, then trust it."""
        view = self.view
        if view is None or view.project_file is None:
            return
        self._ask_trust(view.project_file)

    @work(thread=True, group="settings-trust")
    def _ask_trust(self, path: Path) -> None:
        try:
            keys = self.host.settings.project_keys(path)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, f"It cannot be trusted: {exc}", "error")
            return
        sets = f"It sets {', '.join(keys)}." if keys else "It sets nothing yet."
        question = ConfirmScreen("Trust project config", f"Trust {shown_path(path)}?",
                                 f"{sets} Once trusted, this version applies in this project "
                                 "(its MCP servers may start). A later change needs trust again.",
                                 yes="trust")
        self.app.call_from_thread(self.app.push_screen, question,
                                  lambda yes: self._trust(path) if yes else None)

    @work(thread=True, group="settings-trust")
    def _trust(self, path: Path) -> None:
        try:
            record = self.host.mcp.trust_project(path.parent.parent)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, f"Not trusted: {exc}", "error")
            return
        self.app.call_from_thread(self._trusted, record.file)

    def _trusted(self, file: str) -> None:
        if self.is_attached:
            self.say(f"Trusted {shown_path(file)}: its settings apply.", "success")
            self.refresh_settings()

    def action_close(self) -> None:
        """Back to the chat."""
        self.app.pop_screen()
