"""Per-chat switches: what a chat that switched extensions or single tools off is offered.

A chat (its Tools menu, or ``workbench sessions``) can switch extensions off, and single
tools off or on; the store keeps its choices (``session_extensions``, ``session_tools``).
A tool's own switch wins over its extension's: a chat may keep one tool of an extension
it switched off, or switch off one tool of an extension it keeps. For that chat what is
off is as if it were not loaded: it is not offered (to the model, to ``tool_search`` and
``tool_invoke``, to a direct call in the chat), and a name it won goes to the next tool by
precedence. A call to a tool only switched-off ones provide is refused as ``not_found``,
saying why. The hooks of a switched-off extension do not run in that chat.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from workbench.agent.messages import new_call_id
from workbench.errors import ToolError, WorkbenchError
from workbench.tools.disclosure import is_on_demand
from workbench.tools.registry import Tool, ToolRegistry

if TYPE_CHECKING:
    from workbench.core.gateway import CallOptions, ToolOutcome
    from workbench.core.host import Host


@dataclass(frozen=True)
class ChatSwitches:
    """What one chat chose: extensions by name, single tools by ``(extension, tool)``;
    True on, False off. What it did not choose follows the level above."""

    extensions: Mapping[str, bool] = field(default_factory=dict)
    tools: Mapping[tuple[str, str], bool] = field(default_factory=dict)

    @property
    def extensions_off(self) -> frozenset[str]:
        """The extensions the chat switched off (their hooks do not run in it)."""
        return frozenset(name for name, on in self.extensions.items() if not on)

    def own(self, tool: Tool) -> bool | None:
        """The chat's own switch of ``tool``, or None when it follows its extension."""
        return self.tools.get((tool.extension, tool.name))

    def is_on(self, tool: Tool) -> bool:
        """Whether the chat has ``tool`` on: its own switch, else its extension's."""
        own = self.own(tool)
        return self.extensions.get(tool.extension, True) if own is None else own

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


def known_extensions(registry: ToolRegistry, loaded: Iterable[dict],
                     installed: Iterable[object] = ()) -> set[str]:
    """Every extension name a chat may switch: those with tools (the host's own
    included), those loaded, those that failed to load and those installed."""
    return ({tool.extension for tool in registry.all_tools()}
            | {entry["name"] for entry in loaded}
            | {error.extension for error in registry.load_errors}
            | {str(found.name) for found in installed})


class SwitchOps:
    """The host's per-chat tool switches (``Host`` mixes this in)."""

    def chat_switches(self: Host, session_id: str | None) -> ChatSwitches:
        """What the chat ``session_id`` (its full id) switched; nothing without one."""
        if session_id is None:
            return ChatSwitches()
        extensions, tools = self.store.session_switches(session_id)
        return ChatSwitches(extensions, tools)

    async def call_in_chat(self: Host, name: str, arguments: Any, options: CallOptions,
                           call_id: str | None = None) -> ToolOutcome:
        """Make a call as the chat ``options.session_id`` sees its tools: one only
        switched-off tools provide is refused (audited and published like any refusal),
        a name whose winner is off goes to the next tool, the hooks of its switched-off
        extensions do not run; the rest goes through the gateway."""
        switches = self.chat_switches(options.session_id)
        if switches.extensions_off:
            options = replace(options,
                              without_hooks_of=options.without_hooks_of | switches.extensions_off)
        routed, refusal = switches.route(self.registry, name)
        if refusal is not None:
            return self.gateway._refused(call_id or new_call_id(), name,
                                         arguments, options, refusal)
        return await self.gateway.call(routed, arguments, options, call_id=call_id)

    def set_tool_enabled(self: Host, session_id: str, tool: str, enabled: bool) -> Tool:
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
        session = self.session(session_id)["id"]
        self.ensure_extensions()
        switches = self.chat_switches(session)
        chosen = self._tool_to_switch(tool, switches, enabled)
        self.store.set_session_tool(session, chosen.extension, chosen.name, enabled)
        self.store.audit("person", f"session.tool.{'enable' if enabled else 'disable'}",
                         chosen.qualified_name, {"session_id": session})
        return chosen

    def session_switches(self: Host, session_id: str) -> dict[str, Any]:
        """One chat's switches, for a Tools menu: every extension with tools here and
        every tool a chat can switch, each with its state in that chat.

        Returns:
            ``{"session", "extensions": [{"name", "on", "own"}], "tools": [{"name",
            "extension", "qualified_name", "description", "on", "own", "offered"}]}``:
            ``own`` is whether the chat chose that switch itself (else it follows the
            level above), ``offered`` whether the chat offers the tool by its name (an
            ``on`` tool is not when another one wins its name).

        Raises:
            WorkbenchError: No such session.
        """
        session = self.session(session_id)["id"]
        self.ensure_extensions()
        switches = self.chat_switches(session)
        offered = {t.qualified_name for t in self._enabled(session)}
        tools = [t for t in self.registry.all_tools()
                 if self.registry.runs_here(t) and not is_on_demand(t)]
        names = sorted({t.extension for t in tools} | set(switches.extensions))
        return {
            "session": session,
            "extensions": [{"name": name, "on": switches.extensions.get(name, True),
                            "own": name in switches.extensions} for name in names],
            "tools": [{"name": t.name, "extension": t.extension,
                       "qualified_name": t.qualified_name, "description": t.description,
                       "on": switches.is_on(t), "own": switches.own(t) is not None,
                       "offered": t.qualified_name in offered} for t in tools],
        }

    def _tool_to_switch(self: Host, name: str, switches: ChatSwitches, enabled: bool) -> Tool:
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
