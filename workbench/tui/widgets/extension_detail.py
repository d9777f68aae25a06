"""One installed extension in full: its state and why, where it came from, its tools
with each permission and reason, hooks, knowledge, skills and private database."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from workbench.core.extension_views import InstalledExtension, tool_permissions
from workbench.tui.paths import shown_path
from workbench.tui.widgets.extension_list import state_badge
from workbench.tui.widgets.plan_view import heading, line
from workbench.tui.widgets.tool_view import ToolView

EMPTY = "No extension selected."


def _hint(extension: InstalledExtension) -> str:
    """What the person can do about an extension that is not ``ok``, by key."""
    if extension.builtin:
        return ""
    if extension.state == "held":
        return "Press t to review what changed and trust it, or r to remove it."
    if extension.state == "broken":
        return "Press r to remove it."
    return ""


class ExtensionDetail(VerticalScroll):
    """The extension under the list's cursor; scrolls with the arrow and page keys."""

    DEFAULT_CSS = """
    ExtensionDetail {
        height: 1fr;
        padding: 0 1;
        & > .extension-detail--title { height: auto; text-style: bold; }
        & > .extension-detail--meta { height: auto; color: $text-muted; }
        & > .extension-detail--description { height: auto; margin: 1 0; }
        & > .extension-detail--alert { height: auto; padding: 0 1; margin-bottom: 1; }
        & > .-held { color: $text-warning; background: $warning 10%; }
        & > .-broken { color: $text-error; background: $error 10%; }
        & > .-off { color: $text-muted; background: $boost; }
        & > .extension-detail--empty { height: auto; color: $text-muted; }
        & > .plan-view--heading { height: auto; margin-top: 1; }
        & > .plan-view--item { height: auto; padding-left: 2; }
        & > .plan-view--muted { height: auto; padding-left: 2; color: $text-muted; }
        & > ToolView { padding-left: 2; }
    }
    """

    extension: reactive[InstalledExtension | None] = reactive(None, recompose=True)
    """The extension shown; None shows that nothing is selected."""

    empty_text: reactive[str] = reactive(EMPTY, recompose=True)
    """What is shown when no extension is."""

    def compose(self) -> ComposeResult:
        extension = self.extension
        if extension is None:
            yield Static(self.empty_text, classes="extension-detail--empty")
            return
        yield from self._head(extension)
        manifest = extension.manifest
        if manifest is None:
            return
        permissions = tool_permissions(extension)
        yield heading("Tools")
        if not manifest.tools:
            yield line("none", "plan-view--muted")
        for tool in manifest.tools:
            yield ToolView(tool.name, tool.description, permissions.get(tool.name, ()))
        yield from self._contents(extension)

    def _head(self, extension: InstalledExtension) -> Iterable[Widget]:
        yield Static(Content(extension.display_name), classes="extension-detail--title")
        yield Static(Content.assemble(f"{extension.name} {extension.version or '-'} · ",
                                      state_badge(extension)), classes="extension-detail--meta")
        if extension.manifest is not None:
            yield Static(Content(extension.manifest.description),
                         classes="extension-detail--description")
        if not extension.ok:
            hint = _hint(extension)
            text = Content.assemble((f"{extension.state}: ", "bold"), extension.reason)
            if hint:
                text = Content.assemble(text, "\n", (hint, "italic"))
            yield Static(text, classes=f"extension-detail--alert -{extension.state}")
        if not extension.enabled:
            yield Static(f"Switched off: its tools are not offered "
                         f"(`workbench ext enable {extension.name}` turns it on).",
                         classes="extension-detail--alert -off")
        yield Static(f"from {shown_path(extension.source)}", classes="extension-detail--meta")
        yield Static(f"in {shown_path(extension.path)}", classes="extension-detail--meta")

    def _contents(self, extension: InstalledExtension) -> Iterable[Widget]:
        manifest = extension.manifest
        assert manifest is not None
        if manifest.hooks:
            yield heading("Hooks")
            yield line(", ".join(manifest.hooks))
        if manifest.database:
            yield heading("Private database")
            yield line("yes, dropped when the extension is removed")
        knowledge = [m.path for m in manifest.memories if m.kind == "knowledge"]
        skills = [m.path for m in manifest.memories if m.kind == "skill"]
        yield heading("Knowledge")
        if not knowledge:
            yield line("none", "plan-view--muted")
        for path in knowledge:
            yield line(path)
        yield heading("Skills")
        if not skills:
            yield line("none", "plan-view--muted")
        for path in skills:
            yield line(path)
