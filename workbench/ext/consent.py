"""What a person approves when they install an extension, and how two approvals differ.

The approval (the *consent*) is plain JSON: the extension's hooks, whether it gets a
private database, and each tool's declared permissions exactly as the manifest has
them (with their reasons). It is recorded bound to the digest of the files it was
given for. :func:`diff_consent` compares a recorded consent with a new one: tools
added and removed, and permissions added, removed, widened (a path that covers more,
a host that became ``"*"``, more ports, write where read was, required where optional
was) or narrowed, each with its reason.

:func:`changed_since_approved` tells, cheaply enough to run at every worker start,
which files of an extension differ from the approved ones.

This module imports nothing of ours but the permission kinds (``ctx_spec``), the
manifest models, the fingerprint, and the sandbox's lookup of a ``run`` binary (an
entry for another system is shown as not applicable here).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench import ctx_spec
from workbench.ext.fingerprint import RUNTIME_DIRS, RUNTIME_FILES, file_digest
from workbench.ctx_spec import net_text
from workbench.sandbox.policy import resolve_binary

if TYPE_CHECKING:
    from workbench.manifest.models import Manifest  # annotations only: the models load with a validation

CONSENT_FORMAT = 1
"""The version of the consent JSON's layout."""

ChangeKind = Literal["added", "removed", "widened", "narrowed"]

HOOK_POWERS = {
    "on_tool_call": ("sees the arguments of every tool call, can block any call, and can "
                     "rewrite the arguments of its own extension's tools; rewriting any other "
                     "tool's arguments needs the hooks.rewrite grant (off unless you allow it)"),
    "on_tool_result": ("sees the result of every tool call and can replace the result the "
                       "model gets"),
    "on_session_start": "can add text the model reads at the start of every chat",
    "on_session_shutdown": "is told when a chat's host closes (observe only)",
    "on_message_start": "sees every assistant message (observe only)",
    "on_message_end": "sees every assistant message (observe only)",
    "on_tool_execution_start": "sees the arguments of every tool call (observe only)",
    "on_tool_execution_end": "sees the result of every tool call (observe only)",
}
"""What each hook can do, in plain words, for consent screens."""

OBSERVE_POWER = ("is told when turns start and end, with the last assistant message and the "
                 "tools' outcomes (observe only)")


def hook_power(event: str) -> str:
    """What a hook on ``event`` can do, as a person reads it."""
    return HOOK_POWERS.get(event, OBSERVE_POWER)


def hook_line(hook: str) -> str:
    """A plan's hook (``event → function``) with what it can do."""
    event = hook.split(" ", 1)[0]
    return f"{hook}: {hook_power(event)}"


def consent_of(manifest: Manifest, *, version: str, hooks: tuple[str, ...] = ()) -> dict[str, Any]:
    """The consent JSON for a manifest: what approving it grants.

    Args:
        manifest: The extension's manifest.
        version: Its version, recorded for the person's information.
        hooks: The hooks it registers.
    """
    tools: dict[str, dict[str, Any]] = {}
    for tool in manifest.tools:
        dumped = tool.permissions.model_dump(by_alias=True, exclude_none=True)
        tools[tool.name] = {kind: value for kind, value in dumped.items() if value}
    consent = {"format": CONSENT_FORMAT, "name": manifest.name, "version": version,
               "database": manifest.database, "hooks": list(hooks), "tools": tools,
               "roles": {tool.name: role for tool in manifest.tools if (role := _role(tool))}}
    if manifest.providers:
        # Only when there are some, so that the consent of an extension without
        # providers stays what it was.
        consent["providers"] = {
            provider_label(provider.type, provider.name): {
                kind: value for kind, value in provider.permissions.model_dump(
                    by_alias=True, exclude_none=True).items() if value}
            for provider in manifest.providers}
    return consent


def _role(tool: Any) -> dict[str, Any]:
    """What a tool's ``audience`` and ``action`` say, when not the defaults (who may
    call it, whether it changes what the person keeps)."""
    role: dict[str, Any] = {}
    if tool.audience != "everyone":
        role["audience"] = tool.audience
    if tool.action:
        role["action"] = True
    return role


ROLE_WORDS = {("audience", "person"): "run by you only", ("audience", "everyone"): "offered to models",
              ("action", True): "an action tool (changes what it keeps for you)",
              ("action", False): "no longer an action tool"}
"""How a change of a tool's role reads in a review."""


@dataclass(frozen=True)
class RoleChange:
    """A tool present in both consents whose ``audience`` or ``action`` changed.

    Attributes:
        tool: The tool.
        field: ``audience`` or ``action``.
        value: What it is now (``everyone``/``person``, True/False).
        previous: What it was; None when the earlier consent did not record roles
            (it was given before they were part of a consent).
    """

    tool: str
    field: str
    value: Any
    previous: Any = None

    @property
    def widens(self) -> bool:
        """A tool that a model may now call, or that now changes what the person keeps."""
        return self.previous is not None and (
            (self.field == "audience" and self.value == "everyone")
            or (self.field == "action" and self.value is True))

    def describe(self) -> str:
        now = ROLE_WORDS.get((self.field, self.value), f"{self.field} {self.value}")
        if self.previous is None:
            return f"{self.tool}: {now} (not recorded at the earlier approval)"
        return f"{self.tool}: now {now}"

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "field": self.field, "value": self.value,
                "previous": self.previous}


def _role_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[RoleChange, ...]:
    """The role changes of tools both consents have. An earlier consent without
    ``roles`` (given before they were recorded) says nothing: each tool's role that is
    not the default is shown as not recorded then."""
    old_tools, new_tools = old.get("tools") or {}, new.get("tools") or {}
    both = [name for name in new_tools if name in old_tools]
    new_roles: Mapping[str, Any] = new.get("roles") or {}
    if "roles" not in old:
        return tuple(RoleChange(name, field, value) for name in both
                     for field, value in (new_roles.get(name) or {}).items())
    old_roles: Mapping[str, Any] = old.get("roles") or {}
    changes = []
    for name in both:
        before, after = old_roles.get(name) or {}, new_roles.get(name) or {}
        for field, default in (("audience", "everyone"), ("action", False)):
            was, now = before.get(field, default), after.get(field, default)
            if was != now:
                changes.append(RoleChange(name, field, now, was))
    return tuple(changes)


def provider_label(kind: str, name: str) -> str:
    """How a provider is named in a consent and to people: ``model provider house``."""
    return f"{kind} provider {name}"


def _entries(permissions: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    value = permissions.get(kind)
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [entry for entry in value if isinstance(entry, dict)]
    return []


def describe_entry(kind: str, entry: Mapping[str, Any]) -> str:
    """What one permission entry names: a path, ``host:443,80``, a binary, an access."""
    if kind == "net":
        ports = entry.get("ports") or []
        ports = "*" if ports == "*" else ",".join(str(port) for port in ports)
        return f"{entry.get('host', '')}:{ports}" if ports else str(entry.get("host", ""))
    spec = ctx_spec.permission(kind)
    return spec.value_of(entry) if spec is not None else ""


@dataclass(frozen=True)
class PermissionItem:
    """One declared permission, as a person reads it.

    Attributes:
        kind: ``read``, ``net``, ``llm``…
        value: What it names (empty for all-or-nothing kinds).
        reason: The author's reason.
        optional: Whether the tool works without it.
    """

    kind: str
    value: str
    reason: str
    optional: bool = False

    def describe(self) -> str:
        value = net_text(self.value) if self.kind == "net" else self.value
        text = f"{self.kind} {value}".strip()
        if self.kind == "run" and resolve_binary(self.value) is None:
            return text + " (not on this system: skipped)"
        return text + (" (optional)" if self.optional else "")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "reason": self.reason,
                "optional": self.optional}


def permission_items(permissions: Mapping[str, Any]) -> tuple[PermissionItem, ...]:
    """Every entry of a tool's permissions (consent JSON shape), in kind order."""
    return tuple(PermissionItem(kind, describe_entry(kind, entry), str(entry.get("reason", "")),
                                bool(entry.get("optional", False)))
                 for kind in ctx_spec.permission_kinds() for entry in _entries(permissions, kind))


@dataclass(frozen=True)
class PermissionChange:
    """One permission that differs between two consents.

    Attributes:
        tool: The tool it belongs to.
        change: ``added``, ``removed``, ``widened`` or ``narrowed``.
        kind: The permission kind.
        value: What it names now (for ``removed``: what it named).
        reason: The author's reason (the new one; for ``removed`` the old one).
        previous: What it named before, for ``widened`` and ``narrowed``.
    """

    tool: str
    change: ChangeKind
    kind: str
    value: str
    reason: str
    previous: str = ""

    def describe(self) -> str:
        what = f"{self.kind} {self.value}".strip()
        if self.change in ("widened", "narrowed"):
            return f"{self.change}: {self.tool}: {self.kind} {self.previous} -> {self.value}"
        return f"{self.change}: {self.tool}: {what}"

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "change": self.change, "kind": self.kind,
                "value": self.value, "previous": self.previous, "reason": self.reason}


@dataclass(frozen=True)
class ConsentDiff:
    """How a new consent differs from the recorded one.

    Attributes:
        tools_added: Tools the new version brings.
        tools_removed: Tools it no longer has.
        permissions: Permission changes of tools present in both, and every
            permission of an added tool (as ``added``) or a removed one (``removed``).
        hooks_added: Hooks it now registers.
        hooks_removed: Hooks it no longer registers.
        database: ``added`` or ``removed`` when the private database changes.
    """

    tools_added: tuple[str, ...] = ()
    tools_removed: tuple[str, ...] = ()
    permissions: tuple[PermissionChange, ...] = ()
    hooks_added: tuple[str, ...] = ()
    hooks_removed: tuple[str, ...] = ()
    database: str | None = None
    providers_added: tuple[str, ...] = ()
    providers_removed: tuple[str, ...] = ()
    roles: tuple[RoleChange, ...] = ()
    """Tools whose ``audience`` or ``action`` changed (a tool a model may now call, an
    action tool)."""

    @property
    def empty(self) -> bool:
        """True when the two consents grant the same."""
        return not (self.tools_added or self.tools_removed or self.permissions
                    or self.hooks_added or self.hooks_removed or self.database
                    or self.providers_added or self.providers_removed or self.roles)

    @property
    def widens(self) -> bool:
        """True when the new consent grants anything the old one did not."""
        return bool(self.tools_added or self.hooks_added or self.database == "added"
                    or self.providers_added or any(r.widens for r in self.roles)
                    or any(c.change in ("added", "widened") for c in self.permissions))

    def describe(self) -> list[str]:
        """One line per difference, for a person."""
        lines = [f"tool added: {name}" for name in self.tools_added]
        lines += [f"tool removed: {name}" for name in self.tools_removed]
        lines += [f"added: {name}" for name in self.providers_added]
        lines += [f"removed: {name}" for name in self.providers_removed]
        lines += [f"hook added: {name}" for name in self.hooks_added]
        lines += [f"hook removed: {name}" for name in self.hooks_removed]
        if self.database:
            lines.append(f"private database {self.database}")
        lines += [f"tool role: {change.describe()}" for change in self.roles]
        for change in self.permissions:
            line = f"permission {change.describe()}"
            lines.append(line + (f" — {change.reason}" if change.reason else ""))
        return lines

    def to_json(self) -> dict[str, Any]:
        return {"tools_added": list(self.tools_added), "tools_removed": list(self.tools_removed),
                "permissions": [change.to_json() for change in self.permissions],
                "hooks_added": list(self.hooks_added), "hooks_removed": list(self.hooks_removed),
                "database": self.database, "providers_added": list(self.providers_added),
                "providers_removed": list(self.providers_removed),
                "roles": [change.to_json() for change in self.roles],
                "empty": self.empty, "widens": self.widens}


def _path_covers(outer: str, inner: str) -> bool:
    outer, inner = outer.rstrip("/") or "/", inner.rstrip("/") or "/"
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def _ports_cover(outer: Mapping[str, Any], inner: Mapping[str, Any]) -> bool:
    """Whether ``outer``'s ports include ``inner``'s (``"*"`` is every port)."""
    if outer.get("ports") == "*":
        return True
    if inner.get("ports") == "*":
        return False
    def ports(entry: Mapping[str, Any]) -> set[int]:
        return {port for port in entry.get("ports") or [] if isinstance(port, int)}
    return ports(inner) <= ports(outer)


def _covers(kind: str, outer: Mapping[str, Any], inner: Mapping[str, Any]) -> bool:
    """Whether ``outer`` grants at least what ``inner`` does (same kind)."""
    if kind in ("read", "write"):
        return _path_covers(str(outer.get("path", "")), str(inner.get("path", "")))
    if kind == "net":
        host_ok = outer.get("host") == "*" or outer.get("host") == inner.get("host")
        return host_ok and _ports_cover(outer, inner)
    spec = ctx_spec.permission(kind)
    if spec is not None and spec.access:  # memories: write covers read
        return spec.covers(describe_entry(kind, outer), describe_entry(kind, inner))
    return describe_entry(kind, outer) == describe_entry(kind, inner)


def _same_key(kind: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    spec = ctx_spec.permission(kind)
    if spec is None or spec.field is None:
        return True  # ffi, llm, tts, stt: all-or-nothing
    # A memories read entry and a write entry may both be listed: each is its own.
    return spec.value_of(a).rstrip("/") == spec.value_of(b).rstrip("/")


def _diff_kind(tool: str, kind: str, old: list[dict[str, Any]],
               new: list[dict[str, Any]]) -> list[PermissionChange]:
    changes: list[PermissionChange] = []
    matched: set[int] = set()
    # An old entry the new list keeps as it was is not also what another new entry widens.
    kept = {i for i, o in enumerate(old) for entry in new if _same_key(kind, o, entry)}
    for entry in new:
        value, reason = describe_entry(kind, entry), str(entry.get("reason", ""))
        required = not entry.get("optional", False)
        exact = [i for i, o in enumerate(old) if _same_key(kind, o, entry)]
        if exact:
            matched.update(exact)
            before = old[exact[0]]
            was_required = not before.get("optional", False)
            wider = not _covers(kind, before, entry) or (required and not was_required)
            narrower = not _covers(kind, entry, before) or (was_required and not required)
            previous = describe_entry(kind, before)
            if required != was_required:
                previous += "" if was_required else " (optional)"
                value += "" if required else " (optional)"
            if wider:
                changes.append(PermissionChange(tool, "widened", kind, value, reason, previous))
            elif narrower:
                changes.append(PermissionChange(tool, "narrowed", kind, value, reason, previous))
            continue
        inside = [i for i, o in enumerate(old) if i not in kept and _covers(kind, entry, o)]
        if inside:
            matched.update(inside)
            previous = ", ".join(describe_entry(kind, old[i]) for i in inside)
            changes.append(PermissionChange(tool, "widened", kind, value, reason, previous))
            continue
        around = [i for i, o in enumerate(old) if i not in kept and _covers(kind, o, entry)]
        if around:
            matched.update(around)
            previous = ", ".join(describe_entry(kind, old[i]) for i in around)
            changes.append(PermissionChange(tool, "narrowed", kind, value, reason, previous))
            continue
        changes.append(PermissionChange(tool, "added", kind, value, reason))
    for index, entry in enumerate(old):
        if index not in matched:
            changes.append(PermissionChange(tool, "removed", kind, describe_entry(kind, entry),
                                            str(entry.get("reason", ""))))
    return changes


def diff_consent(old: Mapping[str, Any], new: Mapping[str, Any]) -> ConsentDiff:
    """Compare a recorded consent with a new one.

    Args:
        old: The consent the person gave before (consent JSON).
        new: The consent a new version asks for.

    Returns:
        The differences; ``empty`` when the new version asks for nothing else.
    """
    old_tools: Mapping[str, Any] = old.get("tools") or {}
    new_tools: Mapping[str, Any] = new.get("tools") or {}
    old_providers: Mapping[str, Any] = old.get("providers") or {}
    new_providers: Mapping[str, Any] = new.get("providers") or {}
    changes = (_permission_changes(old_tools, new_tools)
               + _permission_changes(old_providers, new_providers))
    old_hooks, new_hooks = list(old.get("hooks") or []), list(new.get("hooks") or [])
    database = None
    if bool(new.get("database")) != bool(old.get("database")):
        database = "added" if new.get("database") else "removed"
    return ConsentDiff(
        tools_added=tuple(t for t in new_tools if t not in old_tools),
        tools_removed=tuple(t for t in old_tools if t not in new_tools),
        permissions=tuple(changes),
        hooks_added=tuple(h for h in new_hooks if h not in old_hooks),
        hooks_removed=tuple(h for h in old_hooks if h not in new_hooks),
        database=database,
        providers_added=tuple(p for p in new_providers if p not in old_providers),
        providers_removed=tuple(p for p in old_providers if p not in new_providers),
        roles=_role_changes(old, new))


def _permission_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[PermissionChange]:
    """The permission changes between two maps of holder (a tool, a provider) to its
    permissions; every permission of an added or removed holder counts as such."""
    changes: list[PermissionChange] = []
    for holder, permissions in new.items():
        before = old.get(holder)
        for kind in ctx_spec.permission_kinds():
            changes += _diff_kind(holder, kind, _entries(before or {}, kind),
                                  _entries(permissions, kind))
    for holder, permissions in old.items():
        if holder not in new:
            changes += [PermissionChange(holder, "removed", item.kind, item.value, item.reason)
                        for item in permission_items(permissions)]
    return changes



FileSeen = tuple[int, int, int, int, int]
"""What ``lstat`` said of a file whose digest matched: type and mode, size, mtime and
ctime in ns, inode."""


def changed_since_approved(folder: Path, recorded: Mapping[str, str],
                           seen: dict[str, FileSeen]) -> list[str]:
    """The files of ``folder`` that differ from the approved ones, cheaply.

    Every file is ``lstat``-ed (links are never followed); only one whose type, size,
    mtime, ctime or inode differs from when its digest last matched is hashed again
    (ctime cannot be set back by hand, so a file rewritten with its old mtime is
    hashed too). Files the extension writes while it runs are left out, as in its
    fingerprint.

    Args:
        folder: The extension's folder.
        recorded: The approved files: sha256 by relative path.
        seen: What was found of each file whose digest matched, kept by the caller
            between checks (filled here).

    Returns:
        The changed, added and missing paths, sorted; empty when nothing changed.
    """
    found: set[str] = set()
    changed: list[str] = []
    root = os.fspath(folder)
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        relative_dir = os.path.relpath(directory, root)
        prefix = "" if relative_dir == "." else relative_dir.replace(os.sep, "/") + "/"
        names = list(filenames)
        kept = []
        for name in dirnames:
            if os.path.islink(os.path.join(directory, name)):
                names.append(name)  # a link to a folder counts as a file, as in a fingerprint
            elif name not in RUNTIME_DIRS:
                kept.append(name)
        dirnames[:] = kept
        for name in names:
            if not prefix and name in RUNTIME_FILES:
                continue
            relative = prefix + name
            full = os.path.join(directory, name)
            found.add(relative)
            try:
                info = os.lstat(full)
            except OSError:
                changed.append(relative)
                continue
            now = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
            if relative not in recorded:
                changed.append(relative)
            elif seen.get(relative) != now:
                if file_digest(full, info) == recorded[relative]:
                    seen[relative] = now
                else:
                    seen.pop(relative, None)
                    changed.append(relative)
    changed += [path for path in recorded if path not in found]
    return sorted(set(changed))
