"""The notification drawer: cards, notices and failed background runs, newest first.

A panel at the right of the screen over the chat. It lists ``host.schedules.notifications``
(what the supervisor, extensions and plugins kept for the person), unread ones marked;
a card a plugin posted is drawn under the list by the card widget while it is
highlighted, its buttons calling that plugin (``host.plugin_ui``); Enter
marks the one under the cursor read, ``a`` marks them all. New ones appear while it
is open: the app passes ``NotificationPosted`` events on. Reads and writes happen in
worker threads; after a change the drawer posts ``Changed`` so the app counts the
unread ones again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.events import NotificationPosted
from workbench.tui.core_event import CoreEvent
from workbench.tui.times import when
from workbench.tui.widgets.card_view import CardView

REFRESH_EVERY_S = 15.0
"""How often the drawer reads the notifications again, for those posted elsewhere."""

LIMIT = 200
"""The most notifications the drawer lists."""

LEVEL_MARKS = {"error": ("✖", "$text-error"), "warning": ("▲", "$text-warning"),
               "info": ("●", "$text-primary")}


def notification_prompt(row: dict[str, Any]) -> Content:
    """How one notification is listed: mark, title, when and where from, the body."""
    mark, style = LEVEL_MARKS.get(row["level"], ("●", ""))
    unread = row["read_at"] is None
    title = Content.assemble((f"{mark} ", style),
                             (row["title"], "bold" if unread else "$text-muted"))
    if unread:
        title = Content.assemble(title, ("  new", "bold $text-accent"))
    origin = [when(row["at"])]
    if row.get("source"):
        origin.append(str(row["source"]))
    if row.get("run_id"):
        origin.append(f"run {row['run_id']}")
    return Content.assemble(title, "\n", ("  " + " · ".join(origin), "$text-muted"), "\n",
                            ("  " + row["body"], "" if unread else "$text-muted"))


class NotificationDrawer(ModalScreen[None]):
    """The notifications of this home, in a panel at the right.

    | Key | Action |
    | --- | --- |
    | up, down | Move between notifications |
    | enter | Mark the one under the cursor read |
    | a | Mark every one read |
    | escape, ctrl+n | Close |
    """

    CSS_PATH = "drawer.tcss"
    shell_name = "notifications"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+n", "close", "Close", show=False),
        Binding("enter", "mark_read", "Mark read", show=False),
        Binding("a", "mark_all_read", "Mark all read"),
    ]

    class Changed(Message):
        """Notifications were marked read: the unread count changed."""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.host = host
        self.notifications: list[dict[str, Any]] = []
        """What the drawer lists, newest first."""
        self._drawing = asyncio.Lock()
        self.card_plugin: str | None = None
        """The plugin whose card is drawn under the list (its buttons call it)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="drawer-panel") as panel:
            panel.border_title = "Notifications"
            yield Static("", id="drawer-summary")
            yield OptionList(id="drawer-list")
            yield VerticalScroll(id="drawer-card")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.refresh_list()
        # Notifications posted by another process (a daemon) send no events here.
        self.set_interval(REFRESH_EVERY_S, self.refresh_list)

    @property
    def unread(self) -> int:
        return sum(1 for row in self.notifications if row["read_at"] is None)

    @work(thread=True, exclusive=True, group="drawer-read")
    def refresh_list(self) -> None:
        """Read the notifications again."""
        try:
            rows = self.host.schedules.notifications(limit=LIMIT)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._summary, str(exc), "error")
            return
        self.app.call_from_thread(self._show, rows)

    def _summary(self, text: str, level: str = "info") -> None:
        summary = self.query_one("#drawer-summary", Static)
        summary.update(Content(text))
        summary.set_classes(f"-{level}")

    def _show(self, rows: list[dict[str, Any]]) -> None:
        if not self.is_attached:
            return
        listed = self.query_one(OptionList)
        keep = listed.highlighted
        self.notifications = rows
        listed.set_options(Option(notification_prompt(row), id=str(row["id"])) for row in rows)
        if rows:
            listed.highlighted = min(keep or 0, len(rows) - 1)
        self._highlighted()  # the card of the one highlighted, whether or not it moved
        if not rows:
            self._summary("Nothing yet. Failed and paused scheduled runs, and cards from "
                          "extensions, are kept here.")
        else:
            unread = self.unread
            self._summary(f"{unread} unread of {len(rows)}" if unread else
                          f"All {len(rows)} read")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("mark_read", "mark_all_read"):
            return True if self.unread else None
        return True

    def action_mark_read(self) -> None:
        """Mark the notification under the cursor read."""
        index = self.query_one(OptionList).highlighted
        if index is not None and 0 <= index < len(self.notifications):
            row = self.notifications[index]
            if row["read_at"] is None:
                self.mark_read([row["id"]])

    @on(OptionList.OptionSelected, "#drawer-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_mark_read()

    def action_mark_all_read(self) -> None:
        """Mark every notification read."""
        self.mark_read(None)

    @work(thread=True, group="drawer-write")
    def mark_read(self, ids: list[int] | None) -> None:
        """Mark ``ids`` (every one when None) read, then list them again."""
        try:
            self.host.schedules.mark_notifications_read(ids)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._summary, str(exc), "error")
            return
        self.app.call_from_thread(self._marked)

    def _marked(self) -> None:
        self.post_message(self.Changed())
        if self.is_attached:
            self.refresh_list()

    # --- a plugin's card, drawn ----------------------------------------------------

    @on(OptionList.OptionHighlighted, "#drawer-list")
    def _highlighted(self) -> None:
        index = self.query_one(OptionList).highlighted
        row = self.notifications[index] if index is not None and 0 <= index < len(self.notifications) else None
        self.read_card(row["id"] if row and str(row.get("source") or "").startswith("plugin:") else None)

    @work(thread=True, exclusive=True, group="drawer-card")
    def read_card(self, notification_id: int | None) -> None:
        """The card document of a plugin's notification (``host.plugin_ui.card``)."""
        found = self.host.plugin_ui.card(notification_id) if notification_id is not None else None
        self.app.call_from_thread(self.call_later, self._show_card, found)

    async def _show_card(self, found: Any) -> None:
        if not self.is_attached:
            return
        async with self._drawing:
            box = self.query_one("#drawer-card", VerticalScroll)
            await box.remove_children()
            self.card_plugin = found[0] if found else None
            if found:
                await box.mount(CardView(found[1], classes="drawer--card-view"))
            box.display = bool(found)

    def on_card_view_action_pressed(self, message: CardView.ActionPressed) -> None:
        if self.card_plugin is not None:
            self.app.run_worker(self._act(self.card_plugin, message.verb, message.data), group="drawer-act",
                                exit_on_error=False)

    async def _act(self, plugin: str, verb: str, data: dict[str, Any]) -> None:
        try:
            said = await self.host.plugin_ui.pane_action(plugin, verb, data)
        except WorkbenchError as exc:
            said, level = str(exc), "error"
        else:
            level = "info"
        if self.is_attached:
            self._summary(said or f"{verb}: done", level)

    def on_core_event(self, message: CoreEvent) -> None:
        if isinstance(message.event, NotificationPosted):
            self.refresh_list()

    def action_close(self) -> None:
        """Close the drawer."""
        self.dismiss(None)
