"""What an extension brings, shown to a person before they approve it: the ``InstallPlan``.

A plan is built from a validated manifest and the fingerprint of the files it
describes: the extension's name and version, its tools with each permission and
the reason for it, its hooks, the knowledge and skills it ships, whether it gets a
private database, and, when an earlier version was approved, the difference between
the two consents, and the dependencies resolved for it (see
:mod:`workbench.ext.dependencies`). :meth:`InstallPlan.describe` renders it as lines for a terminal;
:meth:`InstallPlan.to_json` for scripts and the TUI.

This module imports nothing of ours but the manifest models and ``workbench.ext``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.ext.consent import (ConsentDiff, PermissionItem, consent_of, hook_line,
                                   permission_items, provider_label)
from workbench.ext.dependencies import Dependency
from workbench.manifest.front_matter import FrontMatterError, parse_front_matter
from workbench.manifest.models import Manifest

DEFAULT_VERSION = "0.0.0"

PROVIDER_ROLES = {
    "model": "a model chats can talk to; it sees their messages",
    "memory": "answers memory search alongside your memories",
    "search": "answers web searches the agent makes",
}
"""What each kind of provider does, as a plan says it."""
"""The version of an extension whose package files name none."""

VERSION_FILES: tuple[str, ...] = ("package.json", "deno.json", "jsr.json")
"""Files whose ``version`` field gives an extension's version, in the order read."""

PlanAction = Literal["install", "update", "trust", "builtin"]


def read_version(folder: Path, fallback: str = DEFAULT_VERSION) -> str:
    """The extension's version from its ``package.json`` (or ``deno.json``), else ``fallback``."""
    for name in VERSION_FILES:
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        version = data.get("version") if isinstance(data, dict) else None
        if isinstance(version, str) and version.strip():
            return version.strip()
    return fallback


def _front_matter(skill_md: Path) -> dict[str, str]:
    """The text values of a SKILL.md's YAML front matter; empty when it cannot be read."""
    try:
        found = parse_front_matter(skill_md.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, FrontMatterError):
        return {}
    return {key: value for key in found.data if (value := found.text(key)) is not None}


@dataclass(frozen=True)
class ToolSummary:
    """One tool as a plan shows it."""

    name: str
    description: str
    permissions: tuple[PermissionItem, ...]
    notes: tuple[str, ...] = ()
    """What else a person should know of it: run by the person only, an action tool."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "description": self.description,
                                "permissions": [item.to_json() for item in self.permissions]}
        if self.notes:
            data["notes"] = list(self.notes)
        return data


PERSON_ONLY_NOTE = "run by you only: never offered to a model, refused if one names it"
ACTION_NOTE = ("changes what it keeps for you: at once in a chat; an unattended run "
               "(headless, a schedule) needs the act grant")


def _tool_notes(tool: Any) -> tuple[str, ...]:
    return ((PERSON_ONLY_NOTE,) if tool.audience == "person" else ()) + (
        (ACTION_NOTE,) if tool.action else ())


@dataclass(frozen=True)
class SkillSummary:
    """One shipped skill: its folder and what its SKILL.md says it is."""

    path: str
    name: str
    description: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "description": self.description}


@dataclass(frozen=True)
class InstallPlan:
    """What installing (updating, trusting) an extension would approve.

    Attributes:
        action: ``install``, ``update``, ``trust`` or ``builtin``.
        name: The extension's name (its folder under the extensions folder).
        display_name: The name shown to people.
        description: What it does.
        version: Its version.
        source: Where it comes from, as recorded.
        folder: Where its files are now (a staging folder until installed).
        digest: The digest of its files, which the consent is bound to.
        files: How many files it has.
        size: Their total size in bytes.
        tools: Its tools with their permissions.
        hooks: The hooks it registers.
        providers: The model, memory and search providers it registers, with their
            permissions (named ``model provider NAME``).
        knowledge: The knowledge files it ships.
        skills: The skills it ships.
        database: Whether it gets a private database.
        dependencies: The packages resolved and locked for it, its own first.
        previous_dependencies: For an update, the packages installed for the version
            installed now (None otherwise).
        previous_version: The version installed now, for an update.
        diff: How its consent differs from the recorded one (None on a first install).
        changed_files: For ``trust``: the files that changed since the last approval.
        warnings: What validation found worth a second look.
        manifest: The validated manifest.
        consent: The consent JSON approving this plan records.
    """

    action: PlanAction
    name: str
    display_name: str
    description: str
    version: str
    source: str
    folder: Path
    digest: str
    files: int
    size: int
    tools: tuple[ToolSummary, ...]
    hooks: tuple[str, ...]
    providers: tuple[ToolSummary, ...]
    knowledge: tuple[str, ...]
    skills: tuple[SkillSummary, ...]
    database: bool
    consent: dict[str, Any] = field(repr=False)
    previous_version: str | None = None
    diff: ConsentDiff | None = None
    changed_files: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    manifest: Manifest | None = field(default=None, repr=False, compare=False)
    dependencies: tuple[Dependency, ...] = ()
    previous_dependencies: tuple[Dependency, ...] | None = None
    carried_over: tuple[str, ...] = ()
    """For a project extension's first consent: what the home kept for it under its bare
    name, which approving moves to its identity."""

    def hook_lines(self) -> list[str]:
        """Each hook with what it can do, in plain words."""
        return [hook_line(hook) for hook in self.hooks]

    @property
    def rewrites_calls(self) -> bool:
        """Whether it has an ``on_tool_call`` hook, which the ``hooks.rewrite`` grant
        (asked apart, off by default) would let rewrite other extensions' calls."""
        return any(hook.split(" ", 1)[0] == "on_tool_call" for hook in self.hooks)

    def dependency_lines(self) -> list[str]:
        """The dependencies as lines: the extension's own, what they need, what changed."""
        if not self.dependencies:
            lines = ["Dependencies: none"]
        else:
            own = [d for d in self.dependencies if d.direct] or list(self.dependencies)
            needed = [d for d in self.dependencies if d not in own]
            lines = ["Dependencies: " + ", ".join(d.describe() for d in own)]
            if needed:
                lines.append("  which need: " + ", ".join(d.describe() for d in needed))
        if self.previous_dependencies is not None:
            before = {(d.source, d.name): d for d in self.previous_dependencies}
            after = {(d.source, d.name): d for d in self.dependencies}
            changes = [f"added {after[key].describe()}" for key in sorted(after.keys() - before.keys())]
            changes += [f"removed {before[key].describe()}"
                        for key in sorted(before.keys() - after.keys())]
            changes += [f"{after[key].name} {before[key].version} -> {after[key].version} "
                        f"({after[key].source})" for key in sorted(before.keys() & after.keys())
                        if before[key].version != after[key].version]
            if changes:
                lines.append("  changed since the installed version: " + ", ".join(changes))
        return lines

    def describe(self) -> list[str]:
        """The plan as lines for a terminal: what the extension brings, then what changed."""
        verb = {"install": "Install", "update": "Update", "trust": "Trust",
                "builtin": "Install"}[self.action]
        version = (f"{self.previous_version} -> {self.version}"
                   if self.previous_version and self.previous_version != self.version
                   else self.version)
        lines = [f"{verb} {self.display_name} ({self.name} {version})",
                 f"  from {self.source}", f"  {self.description}"]
        if self.changed_files:
            lines.append("Files changed since you approved it: " + ", ".join(self.changed_files))
        if self.tools:
            lines.append("Tools:")
            for tool in self.tools:
                lines.append(f"  {tool.name} — {tool.description}")
                lines += [f"    {note}" for note in tool.notes]
                if not tool.permissions:
                    lines.append("    needs no permissions")
                for item in tool.permissions:
                    lines.append(f"    {item.describe()}: {item.reason}")
        else:
            lines.append("Tools: none")
        if self.hooks:
            lines.append("Hooks:")
            lines += [f"  {line}" for line in self.hook_lines()]
        else:
            lines.append("Hooks: none")
        if self.providers:
            lines.append("Providers:")
            for provider in self.providers:
                lines.append(f"  {provider.name} — {provider.description}")
                if not provider.permissions:
                    lines.append("    needs no permissions")
                for item in provider.permissions:
                    lines.append(f"    {item.describe()}: {item.reason}")
        if self.database:
            lines.append("Private database: yes (dropped when the extension is removed)")
        lines.append("Knowledge: " + (", ".join(self.knowledge) if self.knowledge else "none"))
        if self.skills:
            lines.append("Skills:")
            lines += [f"  {skill.name} ({skill.path})"
                      + (f" — {skill.description}" if skill.description else "")
                      for skill in self.skills]
        else:
            lines.append("Skills: none")
        lines += self.dependency_lines()
        if self.diff is not None:
            if self.diff.empty:
                lines.append("Compared with what you approved before: no change in tools, "
                             "permissions or hooks")
            else:
                lines.append("Compared with what you approved before:")
                lines += [f"  {line}" for line in self.diff.describe()]
        if self.carried_over:
            lines.append("Carried over to this folder's extension when you trust it:")
            lines += [f"  {item}" for item in self.carried_over]
        lines += [f"warning: {warning}" for warning in self.warnings]
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action, "name": self.name, "display_name": self.display_name,
            "description": self.description, "version": self.version, "source": self.source,
            "digest": self.digest, "files": self.files, "size": self.size,
            "tools": [tool.to_json() for tool in self.tools], "hooks": list(self.hooks),
            "hook_powers": self.hook_lines(),
            "providers": [provider.to_json() for provider in self.providers],
            "knowledge": list(self.knowledge),
            "skills": [skill.to_json() for skill in self.skills], "database": self.database,
            "previous_version": self.previous_version,
            "diff": None if self.diff is None else self.diff.to_json(),
            "changed_files": list(self.changed_files), "warnings": list(self.warnings),
            "carried_over": list(self.carried_over),
            "dependencies": [dependency.to_json() for dependency in self.dependencies],
            "previous_dependencies": None if self.previous_dependencies is None else
            [dependency.to_json() for dependency in self.previous_dependencies],
        }


def build_plan(action: PlanAction, *, manifest: Manifest, folder: Path, source: str,
               version: str, digest: str, files: int, size: int,
               previous_version: str | None = None, diff: ConsentDiff | None = None,
               changed_files: tuple[str, ...] = (), warnings: tuple[str, ...] = (),
               hooks: tuple[str, ...] = (), dependencies: tuple[Dependency, ...] = (),
               previous_dependencies: tuple[Dependency, ...] | None = None) -> InstallPlan:
    """Describe a validated extension for approval.

    Args:
        action: What approving does.
        manifest: The extension's manifest.
        folder: Where its files are.
        source: Where it came from.
        version: Its version.
        digest: The digest of its files.
        files: How many files.
        size: Their total size.
        previous_version: The installed version, for an update.
        diff: The consent difference, when an earlier consent exists.
        changed_files: For a trust: the files that changed.
        warnings: Validation warnings, as lines.
        hooks: The hooks it registers.
        dependencies: The packages resolved for it.
        previous_dependencies: For an update, those of the installed version.
    """
    hooks = hooks or tuple(f"{event} → {function}" for event, function in manifest.hooks.items())
    consent = consent_of(manifest, version=version, hooks=hooks)
    tools = tuple(ToolSummary(tool.name, tool.description,
                              permission_items(consent["tools"].get(tool.name, {})),
                              _tool_notes(tool))
                  for tool in manifest.tools)
    providers = tuple(
        ToolSummary(label, PROVIDER_ROLES[provider.type],
                    permission_items(consent.get("providers", {}).get(label, {})))
        for provider in manifest.providers
        for label in [provider_label(provider.type, provider.name)])
    knowledge = tuple(memory.path for memory in manifest.memories if memory.kind == "knowledge")
    skills = []
    for memory in manifest.memories:
        if memory.kind != "skill":
            continue
        meta = _front_matter(folder / memory.path / "SKILL.md")
        skills.append(SkillSummary(memory.path, meta.get("name") or Path(memory.path).name,
                                   meta.get("description", "")))
    return InstallPlan(
        action=action, name=manifest.name, display_name=manifest.display_name,
        description=manifest.description, version=version, source=source, folder=folder,
        digest=digest, files=files, size=size, tools=tools, hooks=hooks, providers=providers,
        knowledge=knowledge,
        skills=tuple(skills), database=manifest.database, consent=consent,
        previous_version=previous_version, diff=diff, changed_files=changed_files,
        warnings=warnings, manifest=manifest, dependencies=dependencies,
        previous_dependencies=previous_dependencies)
