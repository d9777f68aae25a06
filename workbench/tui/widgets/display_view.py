"""A display bubble a tool pushed: markdown, a table, a diff, or an image's description."""

from __future__ import annotations

import difflib
from typing import Any

from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static


class DisplayView(Vertical):
    """One display bubble.

    Args:
        display: ``markdown``, ``table``, ``diff`` or ``image``.
        payload: The bubble's data, as the toolkit sends it.
    """

    DEFAULT_CSS = """
    DisplayView {
        height: auto;
        margin: 0 0 1 2;
        padding: 0 1;
        background: $boost;
        & > Markdown {
            margin: 0;
            padding: 0;
            background: transparent;
        }
        & > Static {
            height: auto;
        }
    }
    """

    def __init__(self, display: str, payload: dict[str, Any]) -> None:
        super().__init__(classes=f"-{display}")
        self.kind = display
        self.payload = payload

    def compose(self) -> ComposeResult:
        payload = self.payload
        if self.kind == "markdown":
            yield Markdown(str(payload.get("text", "")))
        elif self.kind == "table":
            table = Table(expand=False, show_edge=False)
            for column in payload.get("columns", []):
                table.add_column(str(column))
            for row in payload.get("rows", []):
                table.add_row(*(str(cell) for cell in row))
            yield Static(table)
        elif self.kind == "diff":
            lines = difflib.unified_diff(
                str(payload.get("before", "")).splitlines(),
                str(payload.get("after", "")).splitlines(),
                fromfile="before", tofile="after", lineterm="")
            if payload.get("title"):
                yield Static(Text(str(payload["title"]), style="bold"))
            yield Static(Syntax("\n".join(lines) or "(no changes)", "diff",
                                theme="ansi_dark", background_color="default"))
        else:
            alt = payload.get("alt") or "no description"
            yield Static(Text(f"[image {payload.get('mime', '')}: {alt}]", style="italic"))
