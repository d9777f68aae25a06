"""The scrolling conversation: messages, tool-call cards, display bubbles and notices.

A long chat (thousands of messages) cannot be one widget per message: mounting and
laying out 10,000 widgets takes seconds and gigabytes. The list keeps every item as
a small ``Entry`` and mounts only a window of them: the latest ones while the chat
follows new content, older ones as the person scrolls up (the view does not move
while they are added above it), the first ones when they jump to the start. Lines at
the window's edges say how many items lie beyond it and jump there when clicked.

The chat screen calls the methods here as core events arrive; this widget only keeps
track of which entry belongs to which message or call, and which entries are mounted.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from workbench.tui.widgets.display_view import DisplayView
from workbench.tui.widgets.message_view import MessageView
from workbench.tui.widgets.tool_call_card import ToolCallCard, ToolCallState

if TYPE_CHECKING:
    from textual._arrange import DockArrangeResult

NOTICE_ICONS = {"info": "ℹ", "warning": "⚠", "error": "✗"}

MAX_MOUNTED = 80
"""Entries kept mounted while the chat follows new content; older ones are unmounted."""
MIN_CHUNK = 4
MAX_CHUNK = 40
"""Entries mounted at once when the person scrolls past the window's edge."""


class NoticeLine(Static):
    """A line the workbench says about itself (setup warnings, errors, cancellations).

    Args:
        level: ``info``, ``warning`` or ``error``; becomes the class ``-info`` etc.
        message: What to say.
    """

    DEFAULT_CSS = """
    NoticeLine {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        color: $text-muted;
        &.-warning { color: $text-warning; background: $warning 10%; }
        &.-error { color: $text-error; background: $error 10%; }
    }
    """

    def __init__(self, level: str, message: str) -> None:
        icon = NOTICE_ICONS.get(level, NOTICE_ICONS["info"])
        super().__init__(Text(f"{icon} {message}"), classes=f"-{level}")
        self.level = level
        self.message = message


class WindowEdge(Static):
    """A line fixed at the top (or bottom) of the list while entries lie beyond the mounted
    ones that way: how many, and a click jumps there."""

    DEFAULT_CSS = """
    WindowEdge {
        height: 1;
        width: 1fr;
        color: $text-secondary;
        background: $panel;
        text-align: center;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        &:hover { color: $text-primary; text-style: underline; }
        &#window-top { dock: top; }
        &#window-bottom { dock: bottom; }
    }
    """

    class Pressed(Message):
        """The edge was clicked."""

        def __init__(self, edge: WindowEdge) -> None:
            super().__init__()
            self.edge = edge

        @property
        def control(self) -> WindowEdge:
            return self.edge

    def on_click(self) -> None:
        self.post_message(self.Pressed(self))


@dataclass(eq=False, slots=True)
class Entry:
    """One item of the conversation, kept whether or not its view is mounted."""

    kind: str
    """``message``, ``tool``, ``display`` or ``notice``."""
    role: str = ""
    """A message's role, or a notice's level."""
    text: str = ""
    streaming: bool = False
    call: ToolCallState | None = None
    display: str = ""
    payload: dict[str, Any] | None = None
    view: Widget | None = None
    """The mounted widget, while the entry is in the window."""

    @classmethod
    def message(cls, role: str, text: str, *, streaming: bool = False) -> Entry:
        return cls("message", role=role, text=text, streaming=streaming)

    @classmethod
    def tool(cls, state: ToolCallState) -> Entry:
        return cls("tool", call=state)

    @classmethod
    def bubble(cls, display: str, payload: dict[str, Any]) -> Entry:
        return cls("display", display=display, payload=payload)

    @classmethod
    def notice(cls, level: str, message: str) -> Entry:
        return cls("notice", role=level, text=message)

    @property
    def focusable(self) -> bool:
        return self.kind in ("message", "tool")

    def build(self) -> Widget:
        """A new widget showing the entry."""
        if self.kind == "message":
            return MessageView(self.role, self.text, streaming=self.streaming)
        if self.kind == "tool":
            assert self.call is not None
            return ToolCallCard(self.call.call_id, self.call.tool, self.call.arguments,
                                state=self.call)
        if self.kind == "display":
            return DisplayView(self.display, self.payload or {})
        return NoticeLine(self.role, self.text)

    def lines(self, width: int) -> int:
        """About how many lines the entry takes at ``width`` columns, with its margin."""
        if self.kind == "message":
            width = max(10, width - 4)
            return 1 + sum(max(1, math.ceil(len(line) / width)) for line in self.text.split("\n"))
        if self.kind == "tool":
            return 5 if self.call is not None and self.call.running else 4
        if self.kind == "display":
            return 6
        return 2


class MessageList(VerticalScroll, can_focus=False):
    """The conversation, newest at the bottom; it follows new content until scrolled up.

    | Key (on a message or card) | Does |
    | --- | --- |
    | up, k / down, j | Focus the previous / next message or card. |
    | home / end | Jump to the first / the latest item. |
    | pageup / pagedown | Scroll a page. |

    Args:
        placeholder: What to show while the conversation is empty.
    """

    BINDINGS = [
        Binding("up,k", "focus_item(-1)", "Previous", show=False),
        Binding("down,j", "focus_item(1)", "Next", show=False),
        Binding("home", "jump_to_start", "First", show=False),
        Binding("end", "jump_to_end", "Latest", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
    ]

    DEFAULT_CSS = """
    MessageList {
        height: 1fr;
        padding: 1 1 0 1;
        & > .message-list--empty {
            width: 100%;
            height: 1fr;
            color: $text-muted;
            text-align: center;
            content-align: center middle;
            padding: 0 4;
        }
    }
    """

    class FocusLeft(Message):
        """Focus moved past the latest item (down from the last one)."""

    def __init__(self, placeholder: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.placeholder = placeholder
        self._entries: list[Entry] = []
        self._first = 0
        """The index of the first mounted entry."""
        self._last = 0
        """One past the index of the last mounted entry."""
        self._streams: dict[str, Entry] = {}
        """Assistant messages still streaming, by message id."""
        self._calls: dict[str, Entry] = {}
        """Tool calls, by call id."""
        self._lock = asyncio.Lock()
        self._keep: tuple[Widget, int] | None = None
        """A mounted widget and its distance from the top of the view, held while
        entries are added or removed above it."""
        self._arranged = Size(0, 0)
        self._loading = False
        self._empty = Static(Text(placeholder), classes="message-list--empty")
        self._top = WindowEdge(id="window-top")
        self._bottom = WindowEdge(id="window-bottom")

    def compose(self):
        yield self._empty
        yield self._top
        yield self._bottom

    def on_mount(self) -> None:
        self._empty.display = bool(self.placeholder)
        self._top.display = self._bottom.display = False

    # --- what is there ---------------------------------------------------------

    @property
    def entry_count(self) -> int:
        """How many items the conversation holds, mounted or not."""
        return len(self._entries)

    @property
    def window(self) -> tuple[int, int]:
        """The mounted entries: the first one's index and one past the last one's."""
        return self._first, self._last

    @property
    def entries(self) -> list[Entry]:
        """Every item, oldest first (do not change it)."""
        return self._entries

    @property
    def views(self) -> list[Widget]:
        """The mounted views, in order."""
        return [entry.view for entry in self._entries[self._first:self._last]
                if entry.view is not None]

    @property
    def pinned(self) -> bool:
        """Whether the view stays at the bottom as content is added (anchored, not
        scrolled up)."""
        return self.is_anchored and self.scroll_y >= self.max_scroll_y

    @property
    def following(self) -> bool:
        """Whether the window holds the latest entry and the view stays at the bottom."""
        return self._last == len(self._entries) and self.pinned

    # --- messages ----------------------------------------------------------------

    async def add_message(self, role: str, text: str) -> Widget | None:
        """Add a complete message; returns its view if it is mounted."""
        return await self._add(Entry.message(role, text))

    async def append_text(self, message_id: str, text: str) -> Widget | None:
        """Add a streamed piece to the assistant message ``message_id``, starting it if new."""
        entry = self._streams.get(message_id)
        if entry is None:
            entry = self._streams[message_id] = Entry.message("assistant", text, streaming=True)
            return await self._add(entry)
        entry.text += text
        if isinstance(entry.view, MessageView):
            entry.view.append(text)
        return entry.view

    async def end_message(self, message_id: str, role: str, text: str) -> Widget | None:
        """End a message: draw a streamed one's final text, or add it whole.

        An assistant message with no text (a step that only called tools) adds nothing.
        """
        entry = self._streams.pop(message_id, None)
        if entry is not None:
            entry.text = text or entry.text
            entry.streaming = False
            if isinstance(entry.view, MessageView):
                await entry.view.finish(entry.text)
            return entry.view
        if not text.strip():
            return None
        return await self.add_message(role, text)

    # --- tool calls ----------------------------------------------------------------

    async def start_tool_call(self, call_id: str, tool: str, arguments: Any) -> Widget | None:
        """Add a card for a call that started."""
        entry = self._calls[call_id] = Entry.tool(ToolCallState(call_id, tool, arguments))
        return await self._add(entry)

    def tool_card(self, call_id: str) -> ToolCallCard | None:
        """The card of ``call_id``, if it is mounted."""
        entry = self._calls.get(call_id)
        view = entry.view if entry is not None else None
        return view if isinstance(view, ToolCallCard) else None

    def tool_state(self, call_id: str) -> ToolCallState | None:
        """What the card of ``call_id`` shows, mounted or not."""
        entry = self._calls.get(call_id)
        return entry.call if entry is not None else None

    def tool_progress(self, call_id: str, progress: float, label: str | None = None,
                      description: str | None = None) -> None:
        """Show a call's progress (in its state while its card is not mounted)."""
        card = self.tool_card(call_id)
        if card is not None:
            card.set_progress(progress, label, description)
        elif (state := self.tool_state(call_id)) is not None:
            state.set_progress(progress, label, description)

    def tool_log(self, call_id: str, line: str) -> None:
        """Add a line to a call's log."""
        card = self.tool_card(call_id)
        if card is not None:
            card.add_log(line)
        elif (state := self.tool_state(call_id)) is not None:
            state.add_log(line)

    async def end_tool_call(self, call_id: str, tool: str, ok: bool, result: Any = None,
                            error: dict[str, Any] | None = None) -> Widget | None:
        """Show how a call ended; a call refused before it started gets its card now."""
        if call_id not in self._calls:
            await self.start_tool_call(call_id, tool, None)
        card = self.tool_card(call_id)
        if card is not None:
            card.finish(ok, result, error)
        else:
            self._calls[call_id].call.finish(ok, result, error)
        return card

    # --- the rest --------------------------------------------------------------------

    async def add_display(self, display: str, payload: dict[str, Any]) -> Widget | None:
        """Add a display bubble a tool pushed."""
        return await self._add(Entry.bubble(display, payload))

    async def add_notice(self, level: str, message: str) -> Widget | None:
        """Add a notice line."""
        return await self._add(Entry.notice(level, message))

    async def show_history(self, entries: Iterable[Entry]) -> None:
        """Show another conversation: ``entries`` replace everything, the latest in view."""
        async with self._lock:
            await self._unmount(self._first, self._last)
            self._entries = list(entries)
            self._streams.clear()
            self._calls = {entry.call.call_id: entry for entry in self._entries
                           if entry.call is not None}
            self._first = self._last = len(self._entries)
            self._keep = None
            if self._entries:
                self._empty.display = False
                await self._mount_before(self._chunk(len(self._entries), -1, screens=2))
            else:
                self._empty.display = bool(self.placeholder)
            self.anchor()
            self._update_edges()

    async def clear(self) -> None:
        """Empty the conversation (a new chat)."""
        await self.show_history([])

    # --- adding ------------------------------------------------------------------------

    async def _add(self, entry: Entry) -> Widget | None:
        async with self._lock:
            self._entries.append(entry)
            if self._empty.display:
                # From the first item on, the conversation sits at the bottom, next to
                # the prompt, and follows new content until the person scrolls up.
                self._empty.display = False
                self.anchor()
            at_end = self._last == len(self._entries) - 1
            pinned = self.pinned
            if at_end and (pinned or self._last - self._first < 2 * MAX_MOUNTED):
                view = entry.build()
                entry.view = view
                await self.mount(view, before=self._bottom)
                self._last += 1
                if pinned and self._last - self._first > MAX_MOUNTED:
                    await self._unmount(self._first, self._last - MAX_MOUNTED)
            self._update_edges()
            return entry.view

    # --- the window ----------------------------------------------------------------------

    def _chunk(self, start: int, step: int, *, screens: float = 1.0) -> int:
        """The other end of a chunk of entries from ``start`` going ``step`` (-1 or 1):
        about enough to fill ``screens`` screens, between ``MIN_CHUNK`` and ``MAX_CHUNK``.

        Returns:
            The first index of the chunk going back, one past its last going forward.
        """
        height = (self.size.height or 24) * screens
        width = self.size.width or 80
        lines = count = 0
        index = start
        while count < MAX_CHUNK and (index > 0 if step < 0 else index < len(self._entries)):
            if step < 0:
                index -= 1
                lines += self._entries[index].lines(width)
            else:
                lines += self._entries[index].lines(width)
                index += 1
            count += 1
            if lines >= height and count >= MIN_CHUNK:
                break
        return index

    async def _mount_before(self, start: int) -> None:
        """Mount entries ``start`` up to the window's first, above it."""
        if start >= self._first:
            return
        views = []
        for entry in self._entries[start:self._first]:
            entry.view = entry.build()
            views.append(entry.view)
        self._first = start
        await self.mount_all(views, after=self._top)

    async def _mount_after(self, end: int) -> None:
        """Mount entries from the window's last up to ``end``, below it."""
        if end <= self._last:
            return
        views = []
        for entry in self._entries[self._last:end]:
            entry.view = entry.build()
            views.append(entry.view)
        self._last = end
        await self.mount_all(views, before=self._bottom)

    async def _unmount(self, start: int, end: int) -> None:
        """Unmount entries ``start`` to ``end`` (one end of the window, or all of it)."""
        start, end = max(start, self._first), min(end, self._last)
        if start >= end:
            return
        views = []
        for entry in self._entries[start:end]:
            if entry.view is not None:
                views.append(entry.view)
                entry.view = None
        if start == self._first and end == self._last:
            self._first = self._last = start
        elif start == self._first:
            self._first = end
        elif end == self._last:
            self._last = start
        else:
            raise ValueError("only one end of the window, or all of it, is unmounted")
        await self.remove_children(views)

    def _hold_view(self, widget: Widget | None) -> None:
        """Keep ``widget`` where it is on screen while entries change above it."""
        if widget is None or self.pinned:
            self._keep = None
            return
        y = self._placement_y(widget)
        self._keep = None if y is None else (widget, y - round(self.scroll_y))

    def _placement_y(self, widget: Widget) -> int | None:
        if not self._arranged:
            return None
        for placement in super().arrange(self._arranged).placements:
            if placement.widget is widget:
                return placement.region.y
        return None

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        result = super().arrange(size, optimal)
        if optimal:
            return result
        self._arranged = size
        if self._keep is not None:
            widget, offset = self._keep
            for placement in result.placements:
                if placement.widget is widget:
                    # As the compositor does for an anchored widget: the scroll offset
                    # is set before this frame is drawn, so the view does not jump.
                    scroll_y = max(0, placement.region.y - offset)
                    self.set_reactive(Widget.scroll_y, scroll_y)
                    self.set_reactive(Widget.scroll_target_y, scroll_y)
                    self.vertical_scrollbar.position = scroll_y
                    break
        return result

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Only the person (or a scroll we asked for) runs this watcher: the offsets
        # ``arrange`` sets do not. Either way, the held view is let go.
        self._keep = None
        if not self._loading:
            self._check_edges()

    def _check_edges(self) -> None:
        """Mount more entries when the view nears an edge of the window."""
        if self._loading or not self.is_mounted:
            return
        margin = max(4, self.size.height)
        if self._first > 0 and self.scroll_y < margin:
            self._loading = True
            self.call_later(self._load, -1)
        elif self._last < len(self._entries) and self.scroll_y > self.max_scroll_y - margin:
            self._loading = True
            self.call_later(self._load, 1)
        elif (self._last == len(self._entries) and not self.is_anchored
              and self.scroll_y >= self.max_scroll_y):
            self.anchor()

    async def _load(self, step: int) -> None:
        """Mount a chunk of entries past one edge of the window; unmount at the other
        end what goes past ``MAX_MOUNTED``."""
        try:
            async with self._lock:
                if step < 0 and self._first > 0:
                    views = self.views
                    self._hold_view(views[0] if views else None)
                    await self._mount_before(self._chunk(self._first, -1))
                    if self._last - self._first > MAX_MOUNTED:
                        self.anchor(False)
                        await self._unmount(self._first + MAX_MOUNTED, self._last)
                elif step > 0 and self._last < len(self._entries):
                    await self._mount_after(self._chunk(self._last, 1))
                    if self._last - self._first > MAX_MOUNTED:
                        keep = self._first + (self._last - self._first - MAX_MOUNTED)
                        self._hold_view(self._entries[keep].view)
                        await self._unmount(self._first, keep)
                self._update_edges()
        finally:
            self._loading = False
        # Short entries may still leave the view near the edge.
        self.call_after_refresh(self._check_edges)

    def _update_edges(self) -> None:
        before, after = self._first, len(self._entries) - self._last
        self._top.display = before > 0
        if before:
            self._top.update(f"↑ {before:,} earlier item{'s' if before != 1 else ''} · "
                             "click or Home for the first")
        self._bottom.display = after > 0
        if after:
            self._bottom.update(f"↓ {after:,} newer item{'s' if after != 1 else ''} · "
                                "click or End for the latest")

    def on_window_edge_pressed(self, message: WindowEdge.Pressed) -> None:
        message.stop()
        if message.edge is self._top:
            self.run_worker(self.jump_to_start(), group="message-list-jump", exclusive=True)
        else:
            self.run_worker(self.jump_to_end(), group="message-list-jump", exclusive=True)

    # --- jumping -------------------------------------------------------------------------

    async def jump_to_start(self) -> None:
        """Show the first entries, at the top."""
        async with self._lock:
            self.anchor(False)
            self._keep = None
            if self._first > 0:
                with self.app.batch_update():
                    await self._unmount(self._first, self._last)
                    self._first = self._last = 0
                    await self._mount_after(self._chunk(0, 1, screens=2))
                    self._update_edges()
            self.scroll_to(y=0, animate=False, immediate=True)

    async def jump_to_end(self) -> None:
        """Show the latest entries and follow new ones."""
        async with self._lock:
            self._keep = None
            if self._last < len(self._entries):
                with self.app.batch_update():
                    await self._unmount(self._first, self._last)
                    self._first = self._last = len(self._entries)
                    await self._mount_before(self._chunk(len(self._entries), -1, screens=2))
                    self._update_edges()
            self.anchor()

    async def action_jump_to_start(self) -> None:
        had_focus = self.screen.focused in self.views
        await self.jump_to_start()
        if had_focus:
            self._focus(next((v for v in self.views if v.can_focus), None))

    async def action_jump_to_end(self) -> None:
        had_focus = self.screen.focused in self.views
        await self.jump_to_end()
        if had_focus:
            self._focus(next((v for v in reversed(self.views) if v.can_focus), None))

    # --- focus -----------------------------------------------------------------------------

    async def action_focus_item(self, step: int) -> None:
        """Focus the message or card ``step`` items away from the focused one."""
        await self.focus_item(step)

    async def focus_item(self, step: int) -> Widget | None:
        """Focus the previous (``step`` -1) or next (1) message or card.

        From outside the list, -1 focuses the latest one. Past the latest one the
        list posts ``FocusLeft`` (the chat gives the prompt its focus back).

        Returns:
            The focused view, or None when there was nowhere to go.
        """
        focused = self.screen.focused
        index = next((i for i in range(self._first, self._last)
                      if self._entries[i].view is focused), None)
        if index is None:
            if step > 0:
                return None
            if self._last < len(self._entries):
                await self.jump_to_end()
            index = len(self._entries)
        target = index + step
        while 0 <= target < len(self._entries) and not self._entries[target].focusable:
            target += step
        if target >= len(self._entries):
            self.post_message(self.FocusLeft())
            return None
        if target < 0:
            return None
        async with self._lock:
            if target < self._first:
                self._hold_view(focused)
                await self._mount_before(min(target, self._chunk(self._first, -1)))
                if self._last - self._first > MAX_MOUNTED:
                    self.anchor(False)
                    await self._unmount(self._first + MAX_MOUNTED, self._last)
                self._update_edges()
            elif target >= self._last:
                await self._mount_after(max(target + 1, self._chunk(self._last, 1)))
                if self._last - self._first > MAX_MOUNTED:
                    keep = self._last - MAX_MOUNTED
                    self._hold_view(self._entries[keep].view)
                    await self._unmount(self._first, keep)
                self._update_edges()
        view = self._entries[target].view
        self._focus(view)
        return view

    def _focus(self, view: Widget | None) -> None:
        if view is None:
            return
        view.focus(scroll_visible=False)
        self.call_after_refresh(self.scroll_to_widget, view, animate=False, top=False)


def history_entries(rows: Iterable[dict[str, Any]]) -> list[Entry]:
    """The entries for a stored conversation (``host.chats.messages``): the person's and the
    model's messages, and a finished card per tool call with its stored result.
    System messages (hooks' context) are not shown, but for the mark of a turn the
    disk cut short (``turn_failed``), shown as an error notice."""
    entries: list[Entry] = []
    calls: dict[str, ToolCallState] = {}
    for row in rows:
        role, content = row.get("role"), row.get("content") or ""
        if role == "user":
            entries.append(Entry.message("user", content))
        elif role == "assistant":
            if content.strip():
                entries.append(Entry.message("assistant", content))
            for call in row.get("tool_calls") or ():
                # Cards are keyed by our id of the call (the model's, for older chats).
                call_id = str(call.get("call_id") or call.get("id", ""))
                state = calls[call_id] = ToolCallState(call_id, str(call.get("name", "")),
                                                       call.get("arguments") or {})
                entries.append(Entry.tool(state))
        elif role == "system" and row.get("name") == "turn_failed":
            entries.append(Entry.notice("error", content))
        elif role == "tool":
            state = calls.get(str(row.get("call_id") or row.get("tool_call_id") or ""))
            if state is None:
                continue
            try:
                outcome = json.loads(content)
            except ValueError:
                outcome = {"ok": True, "result": content}
            if not isinstance(outcome, dict):
                outcome = {"ok": True, "result": outcome}
            state.finish(bool(outcome.get("ok")), outcome.get("result"), outcome.get("error"))
    for state in calls.values():
        if state.running:
            state.finish(False, error={"message": "no result was stored"})
    return entries
