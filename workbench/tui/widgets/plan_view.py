"""What installing, updating or trusting an extension would approve, for review.

Draws an ``InstallPlan``: the extension, where it comes from, the files that changed
(a trust), how its permissions differ from what was approved (an update or a trust),
its tools with each permission and reason, hooks, private database, knowledge,
skills, dependencies when the plan lists them, and validation warnings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from workbench.core.extension_views import InstallPlan
from workbench.tui.paths import shown_path
from workbench.tui.widgets.tool_view import ToolView

VERBS = {"install": "Install", "update": "Update", "trust": "Trust", "builtin": "Install"}

CHANGE_STYLES = {"added": "$text-warning", "widened": "bold $text-warning",
                 "removed": "$text-muted", "narrowed": "$text-muted"}
"""How each kind of permission change is drawn: what grants more stands out."""


def file_size(size: int) -> str:
    """``size`` bytes for a person: ``812 B``, ``4.2 kB``, ``1.3 MB``."""
    if size < 1000:
        return f"{size} B"
    value = size / 1000
    for unit in ("kB", "MB"):
        if value < 1000:
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def heading(text: str) -> Static:
    return Static(Content.styled(text, "bold $text-primary"), classes="plan-view--heading")


def line(content: Content | str, classes: str = "plan-view--item") -> Static:
    return Static(content if isinstance(content, Content) else Content(content), classes=classes)


def _package(entry: dict[str, Any]) -> str:
    """A resolved package as the plan's JSON has it: ``name version (source)``."""
    name, version, source = (str(entry.get(key) or "") for key in ("name", "version", "source"))
    text = f"{name} {version}".strip()
    return f"{text} ({source})" if source else text


def _dependency_changes(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[str]:
    """How an update's packages differ from the installed version's."""
    old = {(d.get("source"), d.get("name")): d for d in before}
    new = {(d.get("source"), d.get("name")): d for d in after}
    changes = [f"+ {_package(new[key])}" for key in new if key not in old]
    changes += [f"- {_package(old[key])}" for key in old if key not in new]
    changes += [f"~ {new[key].get('name')} {old[key].get('version')} → {new[key].get('version')}"
                for key in new if key in old and old[key].get("version") != new[key].get("version")]
    return changes


def dependency_widgets(data: dict[str, Any]) -> Iterable[Widget]:
    """The packages resolved for a plan (its JSON), with what an update changes in them;
    nothing when the plan does not list them."""
    if data.get("dependencies") is None:
        return
    packages: list[dict[str, Any]] = data["dependencies"]
    yield heading("Dependencies")
    if not packages:
        yield line("none", "plan-view--muted")
    for entry in packages:
        text = Content(_package(entry))
        if not entry.get("direct", True):
            text = Content.assemble(text, (" — needed by another package", "$text-muted"))
        yield line(text)
    previous = data.get("previous_dependencies")
    if previous is not None:
        changes = _dependency_changes(previous, packages)
        if changes:
            yield line(Content.styled("changed since the installed version:", "$text-muted"))
            for change in changes:
                yield line(Content.styled(f"  {change}", "$text-warning"))


class PlanView(VerticalScroll):
    """A plan to review; scrolls with the arrow and page keys.

    Args:
        plan: The plan.
    """

    DEFAULT_CSS = """
    PlanView {
        height: auto;
        & > .plan-view--title { height: auto; text-style: bold; }
        & > .plan-view--meta { height: auto; color: $text-muted; }
        & > .plan-view--description { height: auto; margin-bottom: 1; }
        & > .plan-view--heading { height: auto; margin-top: 1; }
        & > .plan-view--item { height: auto; padding-left: 2; }
        & > .plan-view--muted { height: auto; padding-left: 2; color: $text-muted; }
        & > .plan-view--alert { height: auto; padding: 0 1; color: $text-warning;
                                background: $warning 10%; }
        & > ToolView { padding-left: 2; }
    }
    """

    def __init__(self, plan: InstallPlan, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.plan = plan

    def compose(self) -> ComposeResult:
        plan = self.plan
        yield from self._head(plan)
        yield from self._changes(plan)
        yield heading("Tools")
        if not plan.tools:
            yield line("none", "plan-view--muted")
        for tool in plan.tools:
            yield ToolView(tool.name, tool.description, tool.permissions)
        if plan.providers:
            yield heading("Providers")
            for provider in plan.providers:
                yield ToolView(provider.name, provider.description, provider.permissions)
        yield from self._contents(plan)
        for warning in plan.warnings:
            yield line(Content.assemble(("warning: ", "bold"), warning), "plan-view--alert")

    def _head(self, plan: InstallPlan) -> Iterable[Widget]:
        version = (f"{plan.previous_version} → {plan.version}"
                   if plan.previous_version and plan.previous_version != plan.version
                   else plan.version)
        yield Static(Content.assemble(f"{VERBS[plan.action]} ", (plan.display_name, "bold")),
                     classes="plan-view--title")
        yield Static(f"{plan.name} {version} · {plan.files} files, {file_size(plan.size)}",
                     classes="plan-view--meta")
        yield Static(f"from {shown_path(plan.source)}", classes="plan-view--meta")
        yield Static(Content(plan.description), classes="plan-view--description")

    def _changes(self, plan: InstallPlan) -> Iterable[Widget]:
        if plan.carried_over:
            yield heading("Carried over to this folder's extension")
            for item in plan.carried_over:
                yield line(item)
        if plan.changed_files:
            yield line(Content.assemble(("Files changed since you approved it: ", "bold"),
                                        ", ".join(plan.changed_files)), "plan-view--alert")
        if plan.diff is None:
            return
        yield heading("Compared with what you approved before")
        if plan.diff.empty:
            yield line("no change in tools, permissions or hooks", "plan-view--muted")
            return
        for name in plan.diff.tools_added:
            yield line(Content.styled(f"+ tool {name}", "$text-warning"))
        for name in plan.diff.tools_removed:
            yield line(Content.styled(f"- tool {name}", "$text-muted"))
        for name in plan.diff.providers_added:
            yield line(Content.styled(f"+ {name}", "$text-warning"))
        for name in plan.diff.providers_removed:
            yield line(Content.styled(f"- {name}", "$text-muted"))
        for name in plan.diff.hooks_added:
            yield line(Content.styled(f"+ hook {name}", "$text-warning"))
        for name in plan.diff.hooks_removed:
            yield line(Content.styled(f"- hook {name}", "$text-muted"))
        if plan.diff.database:
            yield line(Content.styled(f"private database {plan.diff.database}",
                                      CHANGE_STYLES.get(plan.diff.database, "")))
        for change in plan.diff.permissions:
            text = Content.styled(change.describe(), CHANGE_STYLES.get(change.change, ""))
            yield line(text)
            if change.reason:
                yield line(Content.styled(f"  {change.reason}", "italic $text-muted"))

    def _contents(self, plan: InstallPlan) -> Iterable[Widget]:
        yield heading("Hooks")
        if not plan.hooks:
            yield line("none", "plan-view--muted")
        for hook in plan.hook_lines():
            yield line(hook)
        if plan.database:
            yield heading("Private database")
            yield line("yes, dropped when the extension is removed")
        yield heading("Knowledge")
        if not plan.knowledge:
            yield line("none", "plan-view--muted")
        for path in plan.knowledge:
            yield line(path)
        yield heading("Skills")
        if not plan.skills:
            yield line("none", "plan-view--muted")
        for skill in plan.skills:
            text = Content.assemble((skill.name, "bold"), (f" ({skill.path})", "$text-muted"))
            if skill.description:
                text = Content.assemble(text, " — ", skill.description)
            yield line(text)
        yield from dependency_widgets(plan.to_json())

