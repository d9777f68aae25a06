"""One tool as the Extensions screen shows it: its name, what it does, and each
permission it declares with the author's reason."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from workbench.core.extension_views import PermissionItem


class ToolView(Vertical):
    """A tool with its permissions; optional ones are marked.

    Args:
        name: The tool's name.
        description: What it does.
        permissions: What it declares, with reasons.
        note: A remark after the name (``not offered: shadowed``), if any.
    """

    DEFAULT_CSS = """
    ToolView {
        height: auto;
        margin-bottom: 1;
        & > .tool-view--name { height: auto; }
        & > .tool-view--description { height: auto; padding-left: 2; color: $text-muted; }
        & > .tool-view--permission { height: auto; padding-left: 2; }
        & > .tool-view--reason {
            height: auto; padding-left: 4; color: $text-muted; text-style: italic;
        }
        & > .tool-view--none { height: auto; padding-left: 2; color: $text-muted; }
    }
    """

    def __init__(self, name: str, description: str, permissions: Sequence[PermissionItem],
                 *, note: str = "") -> None:
        super().__init__()
        self.tool_name = name
        self.description = description
        self.permissions = tuple(permissions)
        self.note = note

    def compose(self) -> ComposeResult:
        title = Content.assemble(("⚙ ", "$text-primary"), (self.tool_name, "bold"))
        if self.note:
            title = Content.assemble(title, "  ", (self.note, "$text-warning"))
        yield Static(title, classes="tool-view--name")
        if self.description:
            yield Static(Content(self.description), classes="tool-view--description")
        if not self.permissions:
            yield Static("needs no permissions", classes="tool-view--none")
        for item in self.permissions:
            what = Content.assemble(("• ", "$text-warning"), (f"{item.kind} ", "bold"),
                                    item.value)
            if item.optional:
                what = Content.assemble(what, (" (optional)", "$text-muted"))
            yield Static(what, classes="tool-view--permission")
            if item.reason:
                yield Static(Content(item.reason), classes="tool-view--reason")
