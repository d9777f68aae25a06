"""The plugins screen: every installed plugin (``host.plugins.rows``) with its
capabilities, whether this project enables it, notes on its settings, its running
instances; and its pane, the card document the plugin serves (``host.plugin_ui.pane``),
drawn by ``CardView``.

``x`` stops the selected plugin's instances (``host.plugins.stop``); ``r`` reads the
pane again, as a card the plugin posts or a run of its task that ends does. The
plugin's last agent runs are listed, read-only, beside its pane. A button of the pane runs its verb as the person
(``host.plugin_ui.pane_action``: a tool or an action of the same plugin), then the pane
is read again. Installing is ``workbench plugin install PATH`` (it shows the
capabilities asked for); enabling is the project's config, applied once trusted
(Settings: t). Every text a plugin gave is outside text: drawn as plain content after
``workbench.text.strip``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench.cards import Card
from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.events import NotificationPosted, ScheduleRunEnded
from workbench.text import strip
from workbench.tui.core_event import CoreEvent
from workbench.tui.widgets.card_view import CardView

RUNS_SHOWN = 5


def _plain(text: Any) -> Content:
    return Content(strip(str(text)))


def _prompt(row: Any) -> Content:
    state = "enabled here" if row.enabled else "not enabled here"
    if row.instances:
        state += f" · {len(row.instances)} running"
    return Content.assemble((strip(row.name), "bold"), (f"  {row.version}", "$text-muted"), "\n",
                            (state, "$text-success" if row.enabled else "$text-muted"))


class PluginsScreen(Screen):
    """The installed plugins, and the selected one's pane.

    | Key | Action |
    | --- | --- |
    | up, down | Move between plugins |
    | x | Stop its running instances |
    | r | Read its pane again |
    | escape, f6 | Back |
    """

    DEFAULT_CSS = """
    PluginsScreen #plugins-body { height: 1fr; }
    PluginsScreen #plugins-list { width: 36; height: 1fr; }
    PluginsScreen #plugins-detail { width: 1fr; height: 1fr; padding: 0 1; }
    PluginsScreen .plugins--line { height: auto; }
    PluginsScreen .plugins--muted { height: auto; color: $text-muted; }
    PluginsScreen .plugins--heading { height: auto; margin-top: 1; text-style: bold; color: $text-primary; }
    PluginsScreen #plugins-message { height: auto; padding: 0 1; }
    PluginsScreen #plugins-message.-error { color: $text-error; }
    PluginsScreen #plugins-message.-success { color: $text-success; }
    PluginsScreen #plugins-header { height: 1; }
    """
    shell_name = "plugins"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("f6", "close", "Back", show=False),
        Binding("x", "stop", "Stop"),
        Binding("r", "reload", "Read the pane again"),
    ]

    def __init__(self, host: Host) -> None:
        super().__init__(id="plugins")
        self.host = host
        self.rows: list[Any] = []
        self.runs_of: dict[str, list[dict[str, Any]]] = {}
        """The last agent runs of each plugin, read with the rows."""
        self._drawing = asyncio.Lock()
        self.pane: tuple[str, str, Card | str] | None = None
        """The selected plugin's pane: plugin, pane id, and its card or why it has none."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="plugins-header"):
            yield Label(Content.assemble(("workbench", "bold"), "  ·  Plugins"))
        with Horizontal(id="plugins-body"):
            yield OptionList(id="plugins-list")
            yield VerticalScroll(id="plugins-detail")
        yield Static("", id="plugins-message")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.refresh_rows()

    @property
    def selected(self) -> Any | None:
        lists = self.query(OptionList)
        if not lists:
            return None
        index = lists.first().highlighted
        return self.rows[index] if index is not None and 0 <= index < len(self.rows) else None

    def say(self, text: str, level: str = "info") -> None:
        message = self.query_one("#plugins-message", Static)
        message.update(_plain(text))
        message.set_classes(f"-{level}" if text else "")

    @work(thread=True, exclusive=True, group="plugins-read")
    def refresh_rows(self) -> None:
        try:
            rows = self.host.plugins.rows()
            runs = self.host.plugins.runs
            self.runs_of = {row.id: runs.rows(row.id)[-RUNS_SHOWN:] for row in rows} if runs is not None else {}
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self.call_later, self._show, rows)

    async def _show(self, rows: Any) -> None:
        if not self.is_attached:
            return
        keep = getattr(self.selected, "id", None)
        self.rows = rows
        listed = self.query_one(OptionList)
        with self.prevent(OptionList.OptionHighlighted):
            listed.set_options(Option(_prompt(row), id=row.id) for row in rows)
            ids = [row.id for row in rows]
            listed.highlighted = ids.index(keep) if keep in ids else (0 if ids else None)
        await self._selected_changed()

    @on(OptionList.OptionHighlighted, "#plugins-list")
    async def _selected_changed(self) -> None:
        self.pane = None
        await self._draw()
        self.action_reload()

    async def _draw(self) -> None:
        async with self._drawing:  # one redraw at a time: the pane and the rows arrive apart
            box = self.query_one("#plugins-detail", VerticalScroll)
            with self.app.batch_update():
                await box.remove_children()
                await box.mount_all(self._detail(self.selected))
        self.refresh_bindings()

    def _detail(self, row: Any | None) -> Iterable[Widget]:
        if row is None:
            yield Static("No plugins. `workbench plugin install PATH` installs one (it shows what the "
                         "plugin asks for); a trusted project enables it in .workbench/config.toml.",
                         classes="plugins--muted")
            return
        yield Static(Content.assemble((strip(row.name), "bold"), (f"  {row.id} {row.version}", "$text-muted")),
                     classes="plugins--line")
        yield Static(_plain("capabilities: " + (", ".join(row.capabilities) or "none")), classes="plugins--muted")
        yield Static(_plain("tools: " + (", ".join(f"plugin_{t}" for t in row.tools) or "none")),
                     classes="plugins--muted")
        if row.runnable:
            yield Static(_plain(f"cannot run here: {row.runnable}"), classes="plugins--line")
        if not row.enabled:
            yield Static("Not enabled in this project: [plugins.%s] enabled = true in .workbench/config.toml, "
                         "then trust it." % row.id, classes="plugins--muted")
        for note in row.notes:
            yield Static(_plain(note), classes="plugins--muted")
        yield Static("Running", classes="plugins--heading")
        if not row.instances:
            yield Static("nothing: it starts at its first call", classes="plugins--muted")
        for instance in row.instances:
            yield Static(_plain(f"{instance.state} · pid {instance.pid} · {instance.project}"),
                         classes="plugins--line")
        runs = self.runs_of.get(row.id) or []
        if runs:
            yield Static("Agent runs (read-only: only the plugin starts them)", classes="plugins--heading")
            for run in runs:
                result = " ".join(strip(str(run.get("result") or "")).split())[:160]
                yield Static(_plain(f"{run['status']} · {run['agent']} · {result or 'going on'}"),
                             classes="plugins--line")
        if self.pane is not None and self.pane[0] == row.id:
            yield Static(_plain(f"Pane {self.pane[1]}"), classes="plugins--heading")
            card = self.pane[2]
            if isinstance(card, Card):
                yield CardView(card, classes="plugins--pane")
            else:
                yield Static(_plain(card), classes="plugins--muted")

    # --- the pane ------------------------------------------------------------------------

    def action_reload(self) -> None:
        row = self.selected
        if row is None or not row.enabled:
            return
        panes = [p for p in self.host.plugin_ui.panes() if p.plugin == row.id]
        if panes:
            self.app.run_worker(self._read_pane(row.id, panes[0].id), group="plugins-pane", exclusive=True,
                                exit_on_error=False)

    async def _read_pane(self, plugin: str, pane: str) -> None:
        try:
            card: Card | str = await self.host.plugin_ui.pane(plugin, pane)
        except WorkbenchError as exc:
            card = str(exc)
        if self.is_attached and getattr(self.selected, "id", None) == plugin:
            self.pane = (plugin, pane, card)
            await self._draw()

    def on_card_view_action_pressed(self, message: CardView.ActionPressed) -> None:
        if self.pane is None:
            return
        plugin = self.pane[0]
        self.say(f"{message.verb}…", "working")
        self.app.run_worker(self._act(plugin, message.verb, message.data), group="plugins-act",
                            exit_on_error=False)

    async def _act(self, plugin: str, verb: str, data: dict[str, Any]) -> None:
        try:
            said = await self.host.plugin_ui.pane_action(plugin, verb, data)
        except WorkbenchError as exc:
            if self.is_attached:
                self.say(str(exc), "error")
            return
        if self.is_attached:
            self.say(said or f"{verb}: done", "success")
            self.refresh_rows()  # its instances (it may have started) and the pane again

    # --- actions -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            row = self.selected
            return None if row is None or not row.instances else True
        return True

    def action_stop(self) -> None:
        row = self.selected
        if row is None:
            return
        self.app.run_worker(self._stop(row.id), group="plugins-stop", exit_on_error=False)

    async def _stop(self, plugin: str) -> None:
        stopped = await self.host.plugins.stop(plugin)
        if self.is_attached:
            self.say(f"Stopped {stopped} instance{'s' if stopped != 1 else ''} of {plugin}.", "success")
            self.refresh_rows()

    def on_core_event(self, message: CoreEvent) -> None:
        """Live updates: a card the plugin posted, or a run of its task that ended, reads
        its rows and pane again."""
        event = message.event
        selected = getattr(self.selected, "id", None)
        if isinstance(event, NotificationPosted) and selected and event.source == f"plugin:{selected}":
            self.refresh_rows()
        elif isinstance(event, ScheduleRunEnded):
            self.refresh_rows()

    def action_close(self) -> None:
        self.app.pop_screen()
