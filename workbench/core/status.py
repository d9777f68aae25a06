"""The extension status report: what loaded, what did not and why, which tool,
provider and hook names clash.

The report is built from what the last (re)load found — the extensions loaded, the
registry, the memories they ship and the states the ``ExtensionManager`` reported
(kept by :class:`~workbench.core.load_record.LoadRecord`) — never by checking the files again, so it is cheap
enough to build at every reload. Providers are reported as ``provider_registration``
(registered, conflicts, totals): a provider that loses its name to a built-in or to an
extension first by name is a conflict, as a tool is; so is a hook name given twice
(``hook_conflicts``, from the sources' conflicts). ``host.tools.status_report()`` builds it;
``workbench ext status`` prints it (:meth:`StatusReport.to_json`,
:meth:`StatusReport.to_text`), the ``extensions_status`` tool returns
:meth:`StatusReport.to_markdown`, and ``ExtensionStatusChanged`` carries its JSON.

This module imports only the ext, tools and capabilities packages of ours and the
provider registry; never a front-end.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.capabilities.memories import ShippedMemory
from workbench.core.load_record import LoadRecord
from workbench.core.provider_registry import ProviderRegistry
from workbench.ext.consent import permission_items
from workbench.ext.plan import read_version
from workbench.tools.disclosure import DisclosureSummary, catalog_for, is_on_demand, summarize
from workbench.precedence import Conflict
from workbench.tools.registry import HOST_RUNTIME, SOURCE_ORDER, Tool, ToolRegistry
from workbench.tools.source import SourceRow

SOURCE_LABELS = {"builtin": "Built-in", "extension": "From extensions", "mcp": "From MCP",
                 "plugin": "From plugins"}
"""How the markdown report names each source's count, in ``SOURCE_ORDER``."""


@dataclass(frozen=True)
class ExtensionEntry:
    """One loaded extension.

    Attributes:
        name: Its name.
        version: Its version (empty when it names none).
        source: ``builtin`` or ``extension`` (its place in the tool precedence).
        scope: ``global`` (installed), ``project`` (``.workbench/extensions``) or
            ``development`` (the samples).
        source_path: Its folder.
        tools: ``{"name", "description", "available"}`` per tool; ``available`` is
            whether the tool wins its name and runs on this system.
        hooks: The hooks it registers (none exist yet).
        knowledge: ``{"title", "path"}`` per knowledge file it ships.
        skills: ``{"title", "path"}`` per skill folder it ships.
        database: Whether it has a private database.
        permissions: ``{"tool", "kind", "value", "reason", "optional"}`` per declared
            permission, as the manifest has it.
        config_schema: The JSON Schema of its settings (extensions have none yet).
        switched_off: Whether the chat the report was built for switched it off.
        providers: ``{"type", "name", "function", "registered", "permissions"}`` per
            provider it declares; ``registered`` is whether it wins its name.
    """

    name: str
    version: str
    source: str
    scope: str
    source_path: str
    tools: tuple[dict[str, Any], ...] = ()
    hooks: tuple[str, ...] = ()
    knowledge: tuple[dict[str, Any], ...] = ()
    skills: tuple[dict[str, Any], ...] = ()
    database: bool = False
    permissions: tuple[dict[str, Any], ...] = ()
    config_schema: dict[str, Any] | None = None
    switched_off: bool = False
    providers: tuple[dict[str, Any], ...] = ()

    def capabilities(self) -> list[str]:
        """The kinds of things it brings: ``tools``, ``hooks``, ``knowledge``, ``skills``,
        ``database``, ``providers``."""
        present = {"tools": self.tools, "hooks": self.hooks, "knowledge": self.knowledge,
                   "skills": self.skills, "database": self.database, "providers": self.providers}
        return [name for name, value in present.items() if value]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "source": self.source,
                "scope": self.scope, "source_path": self.source_path,
                "capabilities": {"tools": list(self.tools), "hooks": list(self.hooks),
                                 "knowledge": list(self.knowledge), "skills": list(self.skills),
                                 "database": self.database,
                                 "permissions": list(self.permissions),
                                 "providers": list(self.providers)},
                "config_schema": self.config_schema, "switched_off": self.switched_off}


@dataclass(frozen=True)
class LoadProblem:
    """An extension that did not load.

    Attributes:
        extension: Its name (the folder's name when its manifest is unreadable).
        source_path: Its folder.
        state: ``held`` (its files are not the approved ones), ``broken`` (missing or
            invalid), ``untrusted`` (project-local, in a project not trusted) or
            ``conflict`` (project-local, taking an installed extension's name).
        error_message: Why, for a person.
    """

    extension: str
    source_path: str
    state: str
    error_message: str

    def to_json(self) -> dict[str, Any]:
        return {"extension": self.extension, "source_path": self.source_path,
                "state": self.state, "error_message": self.error_message}


@dataclass(frozen=True)
class SessionContext:
    """The chat a report was built for.

    Attributes:
        id: The session's id as asked for.
        found: Whether the session exists.
        switched_off: The extensions that chat switched off.
        tools_off: The tools (``EXTENSION.TOOL``) it switched off one by one.
        tools: The tools the chat offers, after every switch (None: the report counts
            what is left once ``switched_off`` is taken out).
    """

    id: str
    found: bool
    switched_off: tuple[str, ...] = ()
    tools_off: tuple[str, ...] = ()
    tools: tuple[Tool, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "found": self.found, "switched_off": list(self.switched_off),
                "tools_off": list(self.tools_off)}


@dataclass(frozen=True)
class StatusReport:
    """The status of the extensions at ``built_at``; see the module docstring.

    Attributes:
        extensions: The loaded extensions, in load order.
        load_errors: The extensions that did not load, with why.
        conflicts: ``{"tool_name", "winner", "shadowed"}`` per name provided more
            than once; the winner and each shadowed one are ``{"source", "extension"}``.
        counts: ``total_tools``, ``builtin_count``, ``extension_count``, ``mcp_count``,
            ``plugin_count`` (tools offered, after shadowing and platforms) and
            ``shadowed_count``.
        schema_tokens: The estimated tokens the schemas of the enabled tools take
            (``workbench.tools.disclosure.schema_tokens``), in the chat the report is
            for (without its switched-off extensions).
        notices: What the person should know about loading (e.g. loading is off).
        built_at: When the extensions were last (re)loaded, in unix milliseconds.
        session: The chat the report was built for; None without one.
        host_tools: The host's own tools (``extensions_status``), counted as built-in.
        disabled: Installed extensions the person switched off (``ext disable``).
    """

    extensions: tuple[ExtensionEntry, ...]
    load_errors: tuple[LoadProblem, ...]
    conflicts: tuple[dict[str, Any], ...]
    counts: dict[str, int]
    schema_tokens: int
    notices: tuple[str, ...] = ()
    built_at: int = 0
    session: SessionContext | None = None
    host_tools: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()
    disclosure_active: bool = False
    """Whether tool disclosure is on: ``schema_tokens`` exceed the budget, so the model is
    offered the always-available tools, the most relevant ones for each message that
    fit, and ``tool_search``/``tool_invoke`` for the rest."""
    disclosure: DisclosureSummary | None = None
    """The budget and the tokens per extension and source; None when the report was
    built without a budget."""
    provider_registration: dict[str, Any] | None = None
    """``registered`` (the providers that win their names), ``conflicts`` (``{"type",
    "name", "winner", "shadowed"}``, each party ``{"source", "extension"}``),
    ``total_registered`` and ``total_conflicts``; None when built without providers."""

    sources: tuple[dict[str, Any], ...] = ()
    """One row per thing a tool source offers (``ToolSource.status_rows``): ``{"source",
    "name", "title", "kind", "tools", "state", "note"}``, sources in load order."""

    memory_conflicts: tuple[dict[str, Any], ...] = ()
    """``{"title", "kind", "winner", "shadowed"}`` per memory title (a skill's name) that
    more than one source gives; each party ``{"source", "extension"?, "path"?}``, the
    source ``user`` for the person's own (see ``Memories.conflicts``)."""

    hook_conflicts: tuple[dict[str, Any], ...] = ()
    """``{"hook_name", "winner", "shadowed"}`` per hook name (``EXTENSION.EVENT``) given
    more than once: the winner's hook runs, the shadowed ones do not (``HookRegistry``)."""

    @property
    def provider_conflicts(self) -> list[dict[str, Any]]:
        return list((self.provider_registration or {}).get("conflicts", []))

    # --- summaries ---------------------------------------------------------

    @property
    def total_loaded(self) -> int:
        return len(self.extensions)

    @property
    def total_errors(self) -> int:
        return len(self.load_errors)

    def title(self, *, reloaded: bool = False) -> str:
        """One line: ``2 loaded, 1 errors, 1 conflicts``, and ``(no session context)`` or
        ``(session not found)`` when the report is not a chat's."""
        parts = [f"{self.total_loaded} loaded"]
        if self.load_errors:
            parts.append(f"{self.total_errors} errors")
        conflicts = (len(self.conflicts) + len(self.provider_conflicts) + len(self.memory_conflicts)
                     + len(self.hook_conflicts))
        if conflicts:
            parts.append(f"{conflicts} conflicts")
        text = ("Reloaded: " if reloaded else "") + ", ".join(parts)
        if self.session is None:
            text += " (no session context)"
        elif not self.session.found:
            text += " (session not found)"
        return text

    def source_counts(self) -> list[tuple[str, int]]:
        """The tools offered per source, in ``SOURCE_ORDER``: ``[("builtin", 3), ...]``."""
        return [(source, self.counts[f"{source}_count"]) for source in SOURCE_ORDER]

    def built_at_text(self) -> str:
        when = dt.datetime.fromtimestamp(self.built_at / 1000, tz=dt.timezone.utc)
        return when.strftime("%Y-%m-%d %H:%M:%S UTC")

    # --- renderings --------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (``ext status --json`` and ``ExtensionStatusChanged``)."""
        return {
            "extensions": [entry.to_json() for entry in self.extensions],
            "load_errors": [problem.to_json() for problem in self.load_errors],
            "tool_conflicts": {"conflicts": [dict(c) for c in self.conflicts], **self.counts},
            "tool_disclosure": {
                "active": self.disclosure_active,
                "exposed": (self.disclosure.every_turn if self.disclosure_active and self.disclosure
                            else self.counts["total_tools"]),
                "estimated_schema_tokens": self.schema_tokens,
                **(self.disclosure.to_json() if self.disclosure else {})},
            "provider_registration": self.provider_registration or _NO_PROVIDERS,
            "memory_conflicts": [dict(c) for c in self.memory_conflicts],
            "hook_conflicts": [dict(c) for c in self.hook_conflicts],
            "sources": [dict(row) for row in self.sources],
            "total_loaded": self.total_loaded,
            "total_errors": self.total_errors,
            "built_at": self.built_at,
            "disabled": list(self.disabled),
            "host_tools": list(self.host_tools),
            "notices": list(self.notices),
            "session": self.session.to_json() if self.session else None,
        }

    def to_markdown(self, *, details: bool = False, reloaded: bool = False) -> str:
        """The report as the ``extensions_status`` tool returns it.

        Args:
            details: Also give each extension's folder, tools and config schema.
            reloaded: Head it ``# Extensions Reloaded`` with a ``Reloaded at`` line.
        """
        lines = ["# Extensions Reloaded" if reloaded else "# Extension Status Report", "",
                 f"- **Extensions loaded:** {self.total_loaded}",
                 f"- **Load errors:** {self.total_errors}",
                 f"- **{'Reloaded' if reloaded else 'Loaded'} at:** {self.built_at_text()}"]
        if self.disabled:
            lines.append(f"- **Disabled:** {', '.join(self.disabled)}")
        if self.session is not None and self.session.switched_off:
            lines.append(f"- **Switched off in this chat:** {', '.join(self.session.switched_off)}")
        if self.session is not None and self.session.tools_off:
            lines.append(f"- **Tools switched off in this chat:** {', '.join(self.session.tools_off)}")
        lines += ["", "## Loaded Extensions"]
        if not self.extensions:
            lines.append("- none")
        for entry in self.extensions:
            head = f"- **{entry.name}**" + (f" v{entry.version}" if entry.version else "")
            capabilities = entry.capabilities()
            if capabilities:
                head += f" ({', '.join(capabilities)})"
            if entry.switched_off:
                head += " — switched off in this chat"
            lines.append(head)
            if details:
                lines.append(f"  - Source: `{entry.source_path}` ({entry.source}, {entry.scope})")
                tools = ", ".join(t["name"] for t in entry.tools) or "none"
                lines.append(f"  - Tools: {tools}")
                lines.append("  - Config schema: " + ("yes" if entry.config_schema else "none"))
        if self.load_errors:
            lines += ["", "## Load Errors"]
            for problem in self.load_errors:
                lines.append(f"- `{problem.source_path}`")
                lines.append(f"  - {problem.state}: {_indented(problem.error_message, '    ')}")
        lines += ["", "## Tool Registry", f"- **Total tools:** {self.counts['total_tools']}"]
        lines += [f"- **{SOURCE_LABELS[source]}:** {self.counts[f'{source}_count']}"
                  for source in SOURCE_ORDER]
        lines.append(f"- **Shadowed:** {self.counts['shadowed_count']}")
        if self.conflicts:
            lines += ["", "### Conflicts"]
            lines += [f"- `{c['tool_name']}`: {_party(c['winner'], strong=True)} wins; shadowed: "
                      + ", ".join(_party(s) for s in c["shadowed"]) for c in self.conflicts]
        lines += self._provider_markdown(details)
        if self.hook_conflicts:
            lines += ["", "### Hook Conflicts"]
            lines += [f"- `{c['hook_name']}`: {_party(c['winner'], strong=True)} runs; shadowed: "
                      + ", ".join(_party(s) for s in c["shadowed"]) for c in self.hook_conflicts]
        if self.memory_conflicts:
            lines += ["", "### Memory Conflicts"]
            lines += [f"- {line}" for line in _memory_conflict_lines(self.memory_conflicts)]
        if self.notices:
            lines += ["", "## Notices"] + [f"- {notice}" for notice in self.notices]
        lines += ["", "## Tool Disclosure",
                  f"- **Active:** {'true (active)' if self.disclosure_active else 'false (inactive)'}",
                  f"- **Estimated schema tokens:** {self.schema_tokens}{self._budget_text()}"]
        if self.disclosure:
            lines += self.disclosure.markdown_lines()
        return "\n".join(lines) + "\n"

    def _provider_markdown(self, details: bool) -> list[str]:
        registration = self.provider_registration
        if not registration or not (registration["registered"] or registration["conflicts"]):
            return []
        lines = ["", "## Providers", f"- **Registered:** {registration['total_registered']}",
                 f"- **Conflicts:** {registration['total_conflicts']}"]
        for item in registration["registered"]:
            line = f"- {item['type']} **{item['name']}** ({item['extension']})"
            if item.get("label"):
                line += f" — {item['label']}"
            if not item["enabled"]:
                line += " — disabled"
            lines.append(line)
            if details:
                lines.append(f"  - Function: `{item['function']}` ({item['source']})")
        if registration["conflicts"]:
            lines += ["", "### Provider Conflicts"]
            lines += [f"- {c['type']} `{c['name']}`: {_party(c['winner'], strong=True)} wins; "
                      "shadowed: " + ", ".join(_party(s) for s in c["shadowed"])
                      for c in registration["conflicts"]]
        return lines

    def _budget_text(self) -> str:
        return f" (budget {self.disclosure.budget})" if self.disclosure else ""

    def to_text(self, *, details: bool = False) -> str:
        """The report for a terminal (``workbench ext status``): the loaded extensions with
        versions and tool counts, then the errors, the conflicts and the counts.

        Args:
            details: Also give each extension's folder, tools, permissions with their
                reasons, knowledge, skills and database.
        """
        lines = [f"Extensions loaded: {self.total_loaded}"]
        width = max((len(e.name) for e in self.extensions), default=0)
        for entry in self.extensions:
            count = len(entry.tools)
            line = (f"  {entry.name:<{width}}  {entry.version or '-':<10}  "
                    f"{count} tool{'' if count == 1 else 's'}")
            if entry.providers:
                line += f", {len(entry.providers)} provider{'' if len(entry.providers) == 1 else 's'}"
            if entry.scope != "global":
                line += f"  ({entry.scope})"
            lines.append(line)
            if details:
                lines += _details(entry)
        if self.disabled:
            lines.append(f"Disabled (`workbench ext enable NAME`): {', '.join(self.disabled)}")
        lines.append(f"\nLoad errors: {self.total_errors}")
        for problem in self.load_errors:
            lines.append(f"  {problem.extension}  {problem.state}  {problem.source_path}")
            lines.append(f"    {_indented(problem.error_message, '    ')}")
        lines.append(f"\nConflicts: {len(self.conflicts)}")
        for conflict in self.conflicts:
            lines.append(f"  {conflict['tool_name']}: {_party(conflict['winner'])} wins; "
                         f"shadowed: {', '.join(_party(s) for s in conflict['shadowed'])}")
        if self.hook_conflicts:
            lines.append(f"Hook conflicts: {len(self.hook_conflicts)}")
            lines += [f"  {c['hook_name']}: {_party(c['winner'])} runs; "
                      f"shadowed: {', '.join(_party(s) for s in c['shadowed'])}" for c in self.hook_conflicts]
        if self.memory_conflicts:
            lines.append(f"Memory conflicts: {len(self.memory_conflicts)}")
            lines += [f"  {line}" for line in _memory_conflict_lines(self.memory_conflicts)]
        registration = self.provider_registration or _NO_PROVIDERS
        if registration["registered"] or registration["conflicts"]:
            lines.append(f"\nProviders: {registration['total_registered']}")
            for item in registration["registered"]:
                label = f" — {item['label']}" if item.get("label") else ""
                state = "" if item["enabled"] else "  (disabled)"
                scopes = f"  scopes: {', '.join(item['scopes'])}" if item.get("scopes") else ""
                lines.append(f"  {item['type']:<6}  {item['name']}{label}  from "
                             f"{item['extension']}{state}{scopes}")
            lines.append(f"Provider conflicts: {registration['total_conflicts']}")
            for conflict in registration["conflicts"]:
                lines.append(f"  {conflict['type']} {conflict['name']}: {_party(conflict['winner'])} "
                             f"wins; shadowed: {', '.join(_party(s) for s in conflict['shadowed'])}")
        counts = ", ".join(f"{source} {count}" for source, count in self.source_counts())
        lines.append(f"\nTools offered: {self.counts['total_tools']} ({counts}); "
                     f"shadowed: {self.counts['shadowed_count']}")
        if self.host_tools:
            lines.append(f"Host tools (built-in): {', '.join(self.host_tools)}")
        state = "active" if self.disclosure_active else "inactive"
        lines.append(f"Tool disclosure: {state}; estimated schema tokens {self.schema_tokens}"
                     f"{self._budget_text()}")
        if self.disclosure and self.disclosure.by_extension:
            lines.append("  by extension or server: " + ", ".join(
                f"{name} {tokens}" for name, tokens in self.disclosure.by_extension))
        lines += [f"notice: {notice}" for notice in self.notices]
        lines.append(f"Loaded at {self.built_at_text()}")
        return "\n".join(lines) + "\n"


_NO_PROVIDERS: dict[str, Any] = {"registered": [], "conflicts": [], "total_registered": 0,
                                 "total_conflicts": 0}


def _indented(text: str, indent: str) -> str:
    return text.replace("\n", "\n" + indent)


def _memory_conflict_lines(conflicts: Iterable[dict[str, Any]]) -> list[str]:
    def who(party: dict[str, Any]) -> str:
        return "yours" if party["source"] == "user" else f"{party['extension']} ({party['path']})"
    return [f"{c['kind']} {c['title']!r}: {who(c['winner'])} is used; shadowed: "
            + ", ".join(who(s) for s in c["shadowed"]) for c in conflicts]


def _party(who: dict[str, Any], *, strong: bool = False) -> str:
    name = f"**{who['extension']}**" if strong else who["extension"]
    return f"{name} ({who['source']})"


def _details(entry: ExtensionEntry) -> list[str]:
    lines = [f"      source: {entry.source_path} ({entry.source})"]
    for tool in entry.tools:
        note = "" if tool["available"] else "  [not offered: shadowed or not for this system]"
        lines.append(f"      tool {tool['name']} — {tool['description']}{note}")
        for item in entry.permissions:
            if item["tool"] == tool["name"]:
                what = f"{item['kind']} {item['value']}".strip()
                optional = " (optional)" if item["optional"] else ""
                lines.append(f"        {what}{optional}: {item['reason']}")
    for kind, shipped in (("knowledge", entry.knowledge), ("skill", entry.skills)):
        for memory in shipped:
            lines.append(f"      {kind} {memory['title']} ({memory['path']})")
    for provider in entry.providers:
        note = "" if provider["registered"] else "  [not registered: its name is taken]"
        lines.append(f"      {provider['type']} provider {provider['name']} "
                     f"({provider['function']}){note}")
        for item in provider["permissions"]:
            what = f"{item['kind']} {item['value']}".strip()
            optional = " (optional)" if item["optional"] else ""
            lines.append(f"        {what}{optional}: {item['reason']}")
    if entry.database:
        lines.append("      database: a private database")
    lines.append(f"      hooks: {', '.join(entry.hooks) or 'none'}; config schema: "
                 f"{'yes' if entry.config_schema else 'none'}")
    return lines


def _memories(folder: Path, manifest: Any, shipped: list[ShippedMemory], kind: str
              ) -> tuple[dict[str, Any], ...]:
    """The knowledge files or skills an extension ships, with their titles."""
    titles = {m.path: m.title for m in shipped}
    if manifest is not None:
        return tuple({"title": titles.get(folder / m.path, Path(m.path).stem), "path": m.path}
                     for m in manifest.memories if m.kind == kind)
    return tuple({"title": m.title, "path": m.path.relative_to(folder).as_posix()}
                 for m in shipped if m.kind == kind and m.path.is_relative_to(folder))


def _entry(loaded: dict[str, Any], tools: list[Tool], offered: set[int],
           shipped: list[ShippedMemory], record: LoadRecord | None,
           switched_off: tuple[str, ...], providers: ProviderRegistry | None) -> ExtensionEntry:
    folder = Path(loaded["path"])
    manifest = record.manifest_at(folder) if record is not None else None
    mine = [t for t in tools if t.folder == folder and t.extension == loaded["name"]]
    permissions = tuple({"tool": tool.name, **item.to_json()}
                        for tool in mine for item in permission_items(tool.permissions))
    database = manifest.database if manifest is not None else any(t.database for t in mine)
    return ExtensionEntry(
        name=loaded["name"], version=loaded.get("version") or read_version(folder, ""),
        source=loaded["source"], scope=loaded["scope"], source_path=str(folder),
        tools=tuple({"name": t.name, "description": t.description, "available": id(t) in offered}
                    for t in mine),
        knowledge=_memories(folder, manifest, shipped, "knowledge"),
        skills=_memories(folder, manifest, shipped, "skill"),
        database=database, permissions=permissions,
        switched_off=loaded["name"] in switched_off,
        providers=_providers_of(loaded["name"], folder, providers))


def _providers_of(name: str, folder: Path, providers: ProviderRegistry | None
                  ) -> tuple[dict[str, Any], ...]:
    if providers is None:
        return ()
    return tuple({"type": p.type, "name": p.name, "function": p.function,
                  "registered": providers.resolve(p.type, p.name) is p,
                  "permissions": [item.to_json() for item in permission_items(p.permissions)]}
                 for p in providers.all() if p.extension == name and p.folder == folder)


def _conflicts(conflicts: Iterable[Conflict], kind: str = "tool") -> tuple[dict[str, Any], ...]:
    """The conflicts of ``kind`` as the report gives them: ``{"tool_name"}`` (or
    ``{"hook_name"}``), ``winner``, ``shadowed``, each party ``{"source", "extension"}``."""
    return tuple({f"{kind}_name": c.name, "winner": c.winner.to_json(),
                  "shadowed": [party.to_json() for party in c.shadowed]}
                 for c in conflicts if c.kind == kind)


def build_status_report(*, loaded: Iterable[dict[str, Any]], registry: ToolRegistry,
                        shipped: Iterable[ShippedMemory], record: LoadRecord | None = None,
                        notices: Iterable[str] = (), built_at: int = 0,
                        session: SessionContext | None = None,
                        schema_budget: int | None = None,
                        providers: ProviderRegistry | None = None,
                        memory_conflicts: Iterable[dict[str, Any]] = (),
                        sources: Iterable[tuple[str, SourceRow]] = (),
                        conflicts: Iterable[Conflict] | None = None) -> StatusReport:
    """Put the report together from what loading found.

    Args:
        loaded: The extensions loaded (``host.loading.extensions``).
        registry: The tool registry they were loaded into.
        shipped: The memories loaded extensions ship.
        record: What the manager reported while loading, for the states of load
            errors and the manifests; without it every error counts as ``broken``.
        notices: The loading notices.
        built_at: When the extensions were loaded, in unix milliseconds.
        session: The chat the report is for, if any.
        schema_budget: ``tools.schema_token_budget``, to say whether disclosure is on.
        providers: The providers the extensions registered.
        memory_conflicts: The memory titles more than one source gives.
        sources: Each tool source's rows, with its name (``ToolSources.status_rows``).
        conflicts: The tool conflicts (``ToolSources.conflicts``); the registry's when None.
    """
    tools = registry.all_tools()
    every = registry.available()
    available = [tool for tool in every if not is_on_demand(tool)]
    offered = {id(tool) for tool in available}
    shipped = list(shipped)
    switched_off = session.switched_off if session is not None else ()
    entries = tuple(_entry(item, tools, offered, shipped, record, switched_off, providers)
                    for item in loaded)
    problems = tuple(
        LoadProblem(error.extension, str(error.path),
                    (record.state_of(Path(error.path)) if record is not None else None) or "broken",
                    error.message)
        for error in registry.load_errors)
    every_conflict = list(registry.conflicts() if conflicts is None else conflicts)
    shown = _conflicts(every_conflict)
    counts = {"total_tools": len(available)}
    for source in SOURCE_ORDER:
        counts[f"{source}_count"] = sum(1 for tool in available if tool.source == source)
    counts["shadowed_count"] = sum(len(c["shadowed"]) for c in shown)
    in_chat = (list(session.tools) if session is not None and session.tools is not None
               else registry.available(exclude=switched_off))
    disclosure = summarize(in_chat, schema_budget) if schema_budget is not None else None
    tokens = (disclosure.total_tokens if disclosure
              else catalog_for([t for t in in_chat if not is_on_demand(t)]).total_tokens)
    return StatusReport(extensions=entries, load_errors=problems, conflicts=shown,
                        counts=counts, schema_tokens=tokens, notices=tuple(notices),
                        disclosure_active=bool(disclosure and disclosure.active),
                        disclosure=disclosure,
                        built_at=built_at, session=session,
                        provider_registration=providers.registration() if providers else None,
                        memory_conflicts=tuple(memory_conflicts),
                        hook_conflicts=_conflicts(every_conflict, "hook"),
                        sources=tuple({"source": name, **row.to_json()} for name, row in sources),
                        host_tools=tuple(t.name for t in available if t.runtime == HOST_RUNTIME),
                        disabled=tuple(found.name for found in (record.installed if record else ())
                                       if found.ok and not found.enabled))
