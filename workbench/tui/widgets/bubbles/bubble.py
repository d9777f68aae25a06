"""The bubbles a tool's ``ctx.display`` pushes into the chat, one class per kind.

Every bubble can be reached with Tab and used from the keyboard; what its keys do is
in its class docstring and in the footer while it has focus. The core checks only
that a payload is an object, so each bubble copes with missing or odd fields.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Markdown, Static

from workbench.tui.widgets.bubbles.diff_view import DiffView, unified_text
from workbench.tui.widgets.bubbles.image_view import ImageView, image_view
from workbench.tui.widgets.bubbles.sortable_table import SortableTable, table_cells

ICONS = {"markdown": "¶", "image": "▣", "table": "▦", "diff": "±"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


class Bubble(Vertical, can_focus=True):
    """The frame all bubbles share: a header line, the content, a focus mark.

    | Key | Does |
    | --- | --- |
    | c | Copy the bubble's content as text |

    Args:
        payload: The bubble's data as the tool sent it.
    """

    DEFAULT_CSS = """
    Bubble {
        height: auto;
        padding: 0 1;
        background: $boost;
        border-left: outer $primary 30%;
        &:focus-within {
            border-left: outer $primary;
            background: $primary 8%;
        }
        & > .bubble--header {
            height: 1;
            color: $text-muted;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
    }
    """

    BINDINGS = [Binding("c", "copy", "Copy")]
    KIND = ""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(classes=f"-{self.KIND}")
        self.payload = payload

    def header(self) -> Content | None:
        """The line above the content; None for none."""
        return None

    def _header_line(self) -> Content | None:
        header = self.header()
        return None if header is None else Content.assemble((f"{ICONS[self.KIND]} ", "$text-primary"), header)

    def compose_header(self) -> ComposeResult:
        line = self._header_line()
        if line is not None:
            yield Static(line, classes="bubble--header")

    def refresh_header(self) -> None:
        """Draw the header line again (what it says has changed)."""
        line = self._header_line()
        if line is not None:
            self.query_one(".bubble--header", Static).update(line)

    def copy_text(self) -> str:
        """What ``c`` copies."""
        return ""

    def action_copy(self) -> None:
        """Copy the content to the clipboard."""
        self.app.copy_to_clipboard(self.copy_text())
        self.notify("Copied to the clipboard.", timeout=2)


class MarkdownBubble(Bubble):
    """Markdown text. Tab reaches it; ``c`` copies its source."""

    KIND = "markdown"
    DEFAULT_CSS = """
    MarkdownBubble > Markdown {
        margin: 0;
        padding: 0;
        background: transparent;
        & > *:first-child { margin-top: 0; }
        & > *:last-child { margin-bottom: 0; }
    }
    """

    @property
    def source(self) -> str:
        return _text(self.payload.get("text"))

    def compose(self) -> ComposeResult:
        yield Markdown(self.source)

    def copy_text(self) -> str:
        return self.source


class ImageBubble(Bubble):
    """An image drawn with terminal graphics where the terminal draws them, otherwise
    with half blocks, with its alt text always beneath.

    | Key | Does |
    | --- | --- |
    | z | Zoom: as wide as the chat, or back to the small size |
    | c | Copy the alt text |
    """

    KIND = "image"
    BINDINGS = [Binding("z", "zoom", "Zoom")]
    DEFAULT_CSS = """
    ImageBubble {
        & > ImageView { margin: 0 0 0 0; }
        & > .image-bubble--alt {
            height: auto;
            color: $text-muted;
            text-style: italic;
        }
    }
    """

    def header(self) -> Content:
        return Content(_text(self.payload.get("mime")) or "image")

    @property
    def alt(self) -> str:
        return _text(self.payload.get("alt")).strip()

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield image_view(_text(self.payload.get("dataB64")))
        yield Static(Content(self.alt or "(no description)"), classes="image-bubble--alt")

    def on_mount(self) -> None:
        self.query_one(ImageView).tooltip = self.alt or None

    @property
    def zoomed(self) -> bool:
        return self.query_one(ImageView).max_width is None

    def action_zoom(self) -> None:
        """Draw the image as wide as the chat, or back at its small size."""
        view = self.query_one(ImageView)
        if self.zoomed:
            view.max_width, view.max_height = 48, 10
        else:
            view.max_width, view.max_height = None, None

    def copy_text(self) -> str:
        return self.alt


class TableBubble(Bubble, can_focus=False):
    """A table whose rows sort: ``s`` or a click on a header sorts by that column,
    again reverses; wide tables scroll sideways. ``c`` copies it as tab-separated text."""

    KIND = "table"

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload)
        self.columns, self.rows = table_cells(payload.get("columns"), payload.get("rows"))

    def header(self) -> Content:
        rows = len(self.rows)
        return Content(f"{rows} row{'s' if rows != 1 else ''} × {len(self.columns)} "
                       f"column{'s' if len(self.columns) != 1 else ''}")

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield SortableTable(self.columns, self.rows)

    def copy_text(self) -> str:
        table = self.query_one(SortableTable)
        return "\n".join("\t".join(line) for line in [table.names, *table.rows_shown])


class DiffBubble(Bubble):
    """A change, highlighted: ``v`` switches between unified and side by side; ``c``
    copies it as a unified diff."""

    KIND = "diff"
    BINDINGS = [Binding("v", "toggle_layout", "Unified / side by side")]

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload)
        self.before = _text(payload.get("before"))
        self.after = _text(payload.get("after"))
        self.title = _text(payload.get("title")).strip()
        self.view = DiffView(self.before, self.after, self.title or None)

    def header(self) -> Content:
        view = self.view
        name = (self.title, "bold") if self.title else "change"
        if view.change is None:
            return Content.assemble(name, ("  comparing…", "$text-muted"))
        counts = Content.assemble((f"+{view.added}", "$text-success"), " ",
                                  (f"−{view.removed}", "$text-error"))
        return Content.assemble(name, "  ", counts)

    @on(DiffView.Compared)
    def _compared(self, event: DiffView.Compared) -> None:
        event.stop()
        self.refresh_header()

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield self.view

    def action_toggle_layout(self) -> None:
        """Show the change side by side, or unified again."""
        self.view.split = not self.view.split

    def copy_text(self) -> str:
        return unified_text(self.before, self.after)


BUBBLES: dict[str, type[Bubble]] = {
    "markdown": MarkdownBubble, "image": ImageBubble, "table": TableBubble, "diff": DiffBubble}


def bubble_for(display: str, payload: dict[str, Any]) -> Bubble:
    """The bubble for a ``DisplayBubble``'s ``display`` kind (markdown for an unknown one)."""
    payload = payload if isinstance(payload, dict) else {}
    return BUBBLES.get(display, MarkdownBubble)(payload)
