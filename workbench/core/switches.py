"""Per-chat switches: what a chat that switched extensions or single tools off is offered.

A chat (its Tools menu, or ``workbench sessions``) can switch extensions off, and single
tools off or on; the store keeps its choices (``session_extensions``, ``session_tools``).
A tool's own switch wins over its extension's: a chat may keep one tool of an extension
it switched off, or switch off one tool of an extension it keeps. For that chat what is
off is as if it were not loaded: it is not offered (to the model, to ``tool_search`` and
``tool_invoke``, to a direct call in the chat), and a name it won goes to the next tool by
precedence. A call to a tool only switched-off ones provide is refused as ``not_found``,
saying why. The hooks of a switched-off extension do not run in that chat.

Where an extension was installed from sets its switch in a chat that did not choose:
a first-party add-on (installed from its ``addon:`` source, its tools offered as
``addon__<id>__<tool>``) is off until the person switches it on in that chat; every
other extension is on. A person's own call (``workbench call``, a page's action, an
undo) does not wait for that switch.

A first-party add-on's tool may declare ``"replaces": ["fetch_url"]`` (a Workbench
addition to ``loca.json``): in a chat that has it on, the built-in tools of those names
(the ``builtin`` extension's, the host's own) are not offered and a model's call to them
is refused, naming the tool in their place. Elsewhere the built-ins stay; a third-party
extension's ``replaces`` hides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from workbench.agent.messages import new_call_id
from workbench.bundles.offer import offered_beside
from workbench.errors import ToolError, WorkbenchError
from workbench.ext.addons import addon_of
from workbench.tools.disclosure import is_on_demand
from workbench.tools.registry import HOST_RUNTIME, Tool, ToolRegistry

from workbench.core.sessions import find_session

if TYPE_CHECKING:
    from workbench.core.loading import Loading
    from workbench.core.gateway import CallOptions, ToolGateway, ToolOutcome
    from workbench.core.provider_registry import ProviderRegistry
    from workbench.store import Store
    from workbench.tools.source import ToolSources

WEB_SEARCH = "web_search"
"""The host tool that asks the search providers (``core/providers.py`` adds it)."""

BUILTIN_EXTENSION = "builtin"
"""The signed built-in extension, whose tools a first-party add-on may replace."""


def replaceable(tool: Tool) -> bool:
    """Whether ``tool`` is a built-in one a first-party add-on's ``replaces`` may hide:
    the built-in extension's, or the host's own."""
    return tool.runtime == HOST_RUNTIME or (tool.extension == BUILTIN_EXTENSION
                                            and tool.source == "builtin")


@dataclass(frozen=True)
class ChatSwitches:
    """What one chat chose: extensions by name, single tools by ``(extension, tool)``;
    True on, False off. What it did not choose follows the level above."""

    extensions: Mapping[str, bool] = field(default_factory=dict)
    tools: Mapping[tuple[str, str], bool] = field(default_factory=dict)
    defaults_off: frozenset[str] = frozenset()
    """The extensions off where the chat did not choose (the first-party add-ons)."""

    @property
    def extensions_off(self) -> frozenset[str]:
        """The extensions off in the chat, by its choice or by default (their hooks do
        not run in it)."""
        chosen_on = {name for name, on in self.extensions.items() if on}
        return frozenset({name for name, on in self.extensions.items() if not on}
                         | (self.defaults_off - chosen_on))

    def extension_on(self, name: str) -> bool:
        """Whether the chat has the extension ``name`` on: its choice, else the default."""
        return self.extensions.get(name, name not in self.defaults_off)

    def own(self, tool: Tool) -> bool | None:
        """The chat's own switch of ``tool``, or None when it follows its extension."""
        return self.tools.get((tool.extension, tool.name))

    def is_on(self, tool: Tool) -> bool:
        """Whether the chat has ``tool`` on: its own switch, else its extension's."""
        own = self.own(tool)
        return self.extension_on(tool.extension) if own is None else own

    def exclusions(self, registry: ToolRegistry) -> tuple[frozenset[str], frozenset[str]]:
        """What ``ToolRegistry.available`` and ``resolve`` leave out for this chat:
        ``(extensions, tools by EXTENSION.TOOL)``."""
        off = self.extensions_off
        kept = {extension for (extension, _), on in self.tools.items() if on and extension in off}
        skip = {f"{extension}.{name}" for (extension, name), on in self.tools.items() if not on}
        if kept:
            skip |= {t.qualified_name for t in registry.all_tools()
                     if t.extension in kept and not self.is_on(t)}
        return off - kept, frozenset(skip)

    def route(self, registry: ToolRegistry, name: str) -> tuple[str, ToolError | None]:
        """The name to call for ``name`` in this chat, or why it is refused there.

        Returns:
            ``(name, None)`` when the chat offers the same tool as everywhere (or nothing
            by that name is known: the gateway says so); ``(EXTENSION.TOOL, None)`` when
            the winner is switched off and another tool takes the name;
            ``(name, error)`` when only switched-off tools provide it.
        """
        exclude, skip = self.exclusions(registry)
        if not exclude and not skip:
            return name, None
        try:
            winner = registry.resolve(name)
        except ToolError:
            return name, None
        try:
            chosen = registry.resolve(name, exclude=exclude, skip=skip)
        except ToolError:
            if self.own(winner) is False:
                return name, ToolError("not_found", f"{name!r} is switched off in this chat")
            return name, ToolError("not_found", f"{name!r} belongs to the extension "
                                   f"{winner.extension}, which is switched off in this chat")
        return (name if chosen is winner else chosen.qualified_name), None


KIND_ORDER = {"built-in": 0, "workbench": 1, "extension": 2, "MCP server": 3}
"""Where each kind of ``SwitchRow`` is listed; a source's own kind comes after these."""


@dataclass(frozen=True)
class SwitchRow:
    """One thing a chat switches as one — an extension, an MCP server, the host's own
    tools: a tool source's row (``SourceRow``) with whether the chat uses it.

    Attributes:
        name: Its name as the core knows it (``mcp:time`` for an MCP server).
        title: How it is shown (``time`` for that server).
        kind: ``built-in``, ``workbench`` (the host's own tools), ``extension``,
            ``MCP server`` or a new source's own word.
        tools: How many tools it brings (those offered only when a turn needs them
            left out).
        on: Whether the chat uses it.
        note: Why it cannot be switched here (switched off everywhere, not trusted);
            empty when it can.
    """

    name: str
    title: str
    kind: str
    tools: int
    on: bool
    note: str = ""


@dataclass(frozen=True)
class ToolRow:
    """One tool a chat can switch, with its state in that chat.

    Attributes:
        name: Its name as the model sees it.
        extension: The extension (or ``mcp:SERVER``) that brings it.
        qualified_name: ``EXTENSION.TOOL``.
        description: What it does.
        on: Whether the chat has it on (its own switch, else its extension's).
        own: Whether the chat chose its switch itself (else it follows its extension).
        offered: Whether the chat offers it by its name (an ``on`` tool is not when
            another tool wins the name, or a first-party add-on's tool replaces it).
        replaces: The built-in tools it is offered in place of (a first-party add-on's
            ``"replaces"``), in a chat that has it on.
        replaced_by: The first-party add-on tool offered in its place in this chat.
    """

    name: str
    extension: str
    qualified_name: str
    description: str
    on: bool = True
    own: bool = False
    offered: bool = True
    replaces: tuple[str, ...] = ()
    replaced_by: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ExtensionSwitch:
    """One extension's switch in a chat: ``own`` when the chat chose it itself."""

    name: str
    on: bool
    own: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SwitchMenu:
    """One chat's switches (``Switches.menu``): every extension with tools here and
    every tool a chat can switch, each with its state in that chat."""

    session: str
    extensions: tuple[ExtensionSwitch, ...]
    tools: tuple[ToolRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "extensions": [e.to_json() for e in self.extensions],
                "tools": [t.to_json() for t in self.tools]}


def known_extensions(registry: ToolRegistry, loaded: Iterable[dict],
                     installed: Iterable[Any] = ()) -> set[str]:
    """Every extension name a chat may switch: those with tools (the host's own
    included), those loaded, those that failed to load and those installed."""
    return ({tool.extension for tool in registry.all_tools()}
            | {entry["name"] for entry in loaded}
            | {error.extension for error in registry.load_errors}
            | {str(found.name) for found in installed})


class Switches:
    """Each chat's switches, and the tools a chat is offered through them.

    ``Host`` builds one and reaches it as ``host.switches``.

    Args:
        store: Where each chat's choices are kept (and audited).
        registry: The tools loaded.
        providers: The providers loaded (``web_search`` is offered while a search
            provider of an extension on in the chat answers).
        gateway: Where a chat's calls go.
        sources: Every source of tools (their status rows name what a chat may switch).
        loading: Loads the extensions first when they are not yet.
    """

    def __init__(self, *, store: Store, registry: ToolRegistry, providers: ProviderRegistry,
                 gateway: ToolGateway, sources: ToolSources,
                 loading: Loading) -> None:
        self.store = store
        self.registry = registry
        self.providers = providers
        self.gateway = gateway
        self.sources = sources
        self.loading = loading

    def of(self, session_id: str | None) -> ChatSwitches:
        """What the chat ``session_id`` (its full id) switched; nothing without one."""
        if session_id is None:
            return ChatSwitches()
        extensions, tools = self.store.session_switches(session_id)
        return ChatSwitches(extensions, tools, self.defaults_off())

    def defaults_off(self) -> frozenset[str]:
        """The extensions a chat has off until it switches them on: those installed from
        a first-party add-on's source (``addon:<id>``), by their tools or their record."""
        off = {t.extension for t in self.registry.all_tools() if t.first_party}
        record = getattr(self.loading.extension_source, "record", None)
        for found in (record.installed if record is not None else ()):
            if addon_of(str(found.source), str(found.name)):
                off.add(str(found.name))
        return frozenset(off)

    def replacements(self, tools: Iterable[Tool]) -> dict[str, str]:
        """The built-in tool names that ``tools`` (those a chat offers) replace: by
        name, the first-party add-on tool offered in their place."""
        found: dict[str, str] = {}
        for tool in tools:
            if tool.first_party:
                for name in tool.replaces:
                    found.setdefault(name, tool.name)
        return found

    def tools(self, session_id: str | None = None, *, on_demand: bool = False) -> list[Tool]:
        """The tools a chat has enabled (every available tool without ``session_id``): the
        available tools without those it switched off (a name one of them won goes to the
        next tool by precedence), and without the host tools offered only when a turn
        needs them unless ``on_demand`` (``Chats.tool_specs`` says what one model step is
        offered); never a person-only tool (``"audience": "person"``).

        Raises:
            WorkbenchError: No such session.
        """
        switches = self.of(find_session(self.store, session_id)["id"] if session_id else None)
        self.loading.ensure()
        exclude, skip = switches.exclusions(self.registry)
        off = switches.extensions_off
        # A person-only tool is never a chat's: no model is offered it (the person runs it).
        tools = [t for t in self.registry.available(exclude=exclude, skip=skip)
                 if self._provider_tool_on(t, off) and not t.person_only]
        replaced = self.replacements(tools)
        tools = [t for t in tools if not (t.name in replaced and replaceable(t))]
        tools = offered_beside(tools)  # the bundle tools only beside the shell and project writes
        return tools if on_demand else [t for t in tools if not is_on_demand(t)]

    def _provider_tool_on(self, tool: Tool, off: frozenset[str]) -> bool:
        """Whether a chat with ``off`` switched off is offered ``tool``: ``web_search``
        only while a search provider of an extension still on answers."""
        if tool.runtime != HOST_RUNTIME or tool.name != WEB_SEARCH:
            return True
        return any(p.enabled for p in self.providers.winners("search", off))

    def known_extensions(self) -> set[str]:
        """Every extension name a chat may switch (``known_extensions``), once loaded."""
        self.loading.ensure()
        found = self.loading.extension_source
        installed = found.record.installed if found.record else []
        return known_extensions(self.registry, found.extensions, installed)

    async def call(self, name: str, arguments: Any, options: CallOptions,
                   call_id: str | None = None) -> ToolOutcome:
        """Make a call as the chat ``options.session_id`` sees its tools: one only
        switched-off tools provide is refused (audited and published like any refusal),
        a name whose winner is off goes to the next tool, the hooks of its switched-off
        extensions do not run; the rest goes through the gateway."""
        switches = self.of(options.session_id)
        if options.caller == "person":
            # The person's own call does not wait for an add-on's switch in the chat.
            switches = replace(switches, defaults_off=frozenset())
        elif options.session_id is not None:
            refusal = self._replaced(name, options.session_id)
            if refusal is not None:
                return self.gateway.refused(call_id or new_call_id(), name, arguments, options,
                                            refusal)
        if switches.extensions_off:
            options = replace(options,
                              without_hooks_of=options.without_hooks_of | switches.extensions_off)
        routed, refusal = switches.route(self.registry, name)
        if refusal is not None:
            return self.gateway.refused(call_id or new_call_id(), name, arguments, options, refusal)
        return await self.gateway.call(routed, arguments, options, call_id=call_id)

    def _replaced(self, name: str, session_id: str) -> ToolError | None:
        """Why a model's call to the built-in ``name`` is refused in the chat
        ``session_id``: a first-party add-on on there offers a tool in its place."""
        try:
            winner = self.registry.resolve(name)
        except ToolError:
            return None
        if not replaceable(winner):
            return None
        instead = self.replacements(self.tools(session_id, on_demand=True)).get(winner.name)
        if instead is None:
            return None
        return ToolError("not_found", f"{name!r} is replaced by {instead!r} in this chat "
                         "(a first-party add-on switched on here); call that instead")

    def set_extension(self, session_id: str, extension: str, enabled: bool) -> None:
        """Switch an extension off or on in one chat (its Tools menu).

        Raises:
            WorkbenchError: No such session, or no extension of that name is known here.
        """
        session = find_session(self.store, session_id)
        known = self.known_extensions()
        if extension not in known | {row.name for _, row in self.sources.status_rows()}:
            raise WorkbenchError(f"no extension named {extension!r}; `workbench ext status` "
                                 f"lists them")
        self.store.set_session_extension(session["id"], extension, enabled)
        self.store.audit("person", f"session.extension.{'enable' if enabled else 'disable'}",
                         extension, {"session_id": session["id"]})

    def set_tool(self, session_id: str, tool: str, enabled: bool) -> Tool:
        """Switch one tool off or on in one chat, whatever its extension's switch there.

        Args:
            session_id: A session id or a unique prefix.
            tool: The tool's name as the chat knows it, or ``EXTENSION.TOOL``. A plain
                name means the tool the chat offers by it (switching off), or the first
                by precedence the chat has off (switching on).
            enabled: On or off.

        Returns:
            The tool switched.

        Raises:
            WorkbenchError: No such session, or no tool of that name that a chat can
                switch runs here.
        """
        session = find_session(self.store, session_id)["id"]
        self.loading.ensure()
        switches = self.of(session)
        chosen = self._tool_to_switch(tool, switches, enabled)
        self.store.set_session_tool(session, chosen.extension, chosen.name, enabled)
        self.store.audit("person", f"session.tool.{'enable' if enabled else 'disable'}",
                         chosen.qualified_name, {"session_id": session})
        return chosen

    def menu(self, session_id: str) -> SwitchMenu:
        """One chat's switches, for a Tools menu and ``sessions tools --all``: every
        extension with tools here and every tool a chat can switch (``switchable``), each
        with its state in that chat.

        Raises:
            WorkbenchError: No such session.
        """
        session = find_session(self.store, session_id)["id"]
        switches = self.of(session)
        tools = self.tool_rows(session)
        names = sorted({t.extension for t in tools} | set(switches.extensions))
        return SwitchMenu(
            session=session,
            extensions=tuple(ExtensionSwitch(name, switches.extension_on(name),
                                             name in switches.extensions) for name in names),
            tools=tuple(tools))

    def switchable(self) -> list[Tool]:
        """Every tool a chat can switch: those that run here, without the host tools
        offered only when a turn needs them and the person-only ones (never a chat's)."""
        self.loading.ensure()
        return [t for t in self.registry.all_tools()
                if self.registry.runs_here(t) and not is_on_demand(t) and not t.person_only]

    def tool_rows(self, session_id: str | None, extension: str | None = None) -> list[ToolRow]:
        """The tools a chat can switch (of ``extension`` only, when given), each with its
        state in the chat ``session_id``; for a chat not started yet, all on but the
        first-party add-ons (off until switched on).

        Raises:
            WorkbenchError: No such session.
        """
        tools = [t for t in self.switchable() if extension is None or t.extension == extension]
        if session_id is None:
            off = self.defaults_off()
            return [ToolRow(t.name, t.extension, t.qualified_name, t.description,
                            on=t.extension not in off, replaces=t.replaces if t.first_party else ())
                    for t in tools]
        session = find_session(self.store, session_id)["id"]
        switches = self.of(session)
        chat = self.tools(session, on_demand=True)
        offered = {t.qualified_name for t in chat}
        replaced = self.replacements(chat)
        return [ToolRow(t.name, t.extension, t.qualified_name, t.description,
                        on=switches.is_on(t), own=switches.own(t) is not None,
                        offered=t.qualified_name in offered,
                        replaces=t.replaces if t.first_party else (),
                        replaced_by=replaced.get(t.name, "") if replaceable(t) else "")
                for t in tools]

    def rows(self, session_id: str | None) -> list[SwitchRow]:
        """Everything a chat may switch as one — each row of every tool source
        (``ToolSource.status_rows``) — with whether ``session_id`` uses it, in the
        Tools menu's order (by ``KIND_ORDER``, then title).

        Raises:
            WorkbenchError: No such session.
        """
        self.loading.ensure()
        # A chat not started yet has what it would start with: the add-ons off.
        off = (self.of(find_session(self.store, session_id)["id"]).extensions_off if session_id
               else self.defaults_off())
        found = {row.name: SwitchRow(row.name, row.title, row.kind, row.tools,
                                     row.name not in off, row.note)
                 for _, row in self.sources.status_rows()}
        return sorted(found.values(), key=lambda row: (KIND_ORDER.get(row.kind, len(KIND_ORDER)),
                                                        row.title))

    def _tool_to_switch(self, name: str, switches: ChatSwitches, enabled: bool) -> Tool:
        candidates = [t for t in self.registry.all_tools() if self.registry.runs_here(t)]
        exact = [t for t in candidates if t.qualified_name == name]
        named = exact or [t for t in candidates if t.name == name]
        if any(is_on_demand(t) for t in named):
            raise WorkbenchError(f"{name} is offered only when a turn needs it; a chat cannot "
                                 "switch it")
        if not named:
            raise WorkbenchError(f"no tool named {name!r} here; `workbench sessions tools ID "
                                 "--all` lists the tools a chat can switch")
        if enabled:
            return next((t for t in named if not switches.is_on(t)), named[0])
        exclude, skip = switches.exclusions(self.registry)
        offered = {t.qualified_name for t in self.registry.available(exclude=exclude, skip=skip)}
        return next((t for t in named if t.qualified_name in offered), named[0])
