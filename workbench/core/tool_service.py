"""The host's tools as a whole: a direct call, the status report, a name resolved.

``ToolService`` is reached as ``host.tools``. ``call`` is how a person, a schedule or
another agent calls a tool (``workbench call``, the TUI, ``mcp serve``): through the
gateway, and in a chat as that chat sees its tools. ``status_report`` is what
``ext status`` prints and the ``extensions_status`` tool returns. It must not import a
front-end.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from workbench.core.gateway import CallOptions, ToolOutcome
from workbench.errors import ToolError

if TYPE_CHECKING:
    from workbench.core.gateway import ToolGateway
    from workbench.core.loading import Loading
    from workbench.core.mcp_servers import McpServers
    from workbench.core.runner import SandboxRunner
    from workbench.core.status import StatusReport
    from workbench.core.switches import Switches
    from workbench.store import Store
    from workbench.tools.registry import ToolRegistry


class ToolService:
    """Calls and reports over every tool source; see the module docstring.

    Args:
        loading: Loads the tool sources first when they are not yet.
        switches: A chat's calls and what it switched.
        gateway: Where a call outside a chat goes.
        mcp: Which MCP servers a call needs started, and what their refusals mean.
        registry: The tools loaded.
        sandbox: Its warm workers.
        store: The sessions a report is for.
    """

    def __init__(self, *, loading: Loading, switches: Switches, gateway: ToolGateway,
                 mcp: McpServers, registry: ToolRegistry, sandbox: SandboxRunner,
                 store: Store) -> None:
        self.loading = loading
        self.switches = switches
        self.gateway = gateway
        self.mcp = mcp
        self.registry = registry
        self.sandbox = sandbox
        self.store = store

    async def call(self, name: str, arguments: Any,
                   options: CallOptions = CallOptions()) -> ToolOutcome:
        """Call a tool directly (a person, a schedule or another agent), through the
        gateway; in a chat (``options.session_id``), as that chat sees its tools."""
        if not self.loading.ready():
            if options.session_id is None and not self.loading.loaded and self.mcp.needed is None:
                self.mcp.only_for(name)
            try:
                await asyncio.to_thread(self.loading.ensure)
            finally:
                self.mcp.needed = None
        if options.session_id is not None:
            return await self.switches.call(name, arguments, options)
        outcome = await self.gateway.call(name, arguments, options)
        return self.mcp.explained(name, outcome)

    def status_report(self, session_id: str | None = None) -> StatusReport:
        """The extension status report: loaded extensions, load errors, conflicts, counts.

        Args:
            session_id: The chat it is for (its switched-off extensions are marked);
                None for the host as a whole.
        """
        from workbench.core.status import SessionContext

        self.loading.ensure()
        context = None
        if session_id is not None:
            found = self.store.get_session(session_id)
            if found is None:
                context = SessionContext(id=session_id, found=False)
            else:
                switches = self.switches.of(found["id"])
                context = SessionContext(
                    id=found["id"], found=True, switched_off=tuple(sorted(switches.extensions_off)),
                    tools_off=tuple(sorted(f"{extension}.{name}" for (extension, name), on
                                           in switches.tools.items() if not on)),
                    tools=tuple(self.switches.tools(found["id"], on_demand=True)))
        return self.loading.report(context)

    def resolve_name(self, name: str) -> str:
        """The ``EXTENSION.TOOL`` a tool name means here (the sources loaded first).

        Raises:
            ToolError: No such tool.
        """
        self.loading.ensure()
        return self.registry.resolve(name).qualified_name

    def forget_workers(self, tool_name: str | None = None) -> None:
        """Drop the workers started ahead (of one tool, by its name, or all)."""
        if tool_name is None:
            self.sandbox.forget()
            return
        try:
            self.sandbox.forget(self.registry.resolve(tool_name).grant_key)
        except ToolError:
            return  # no such tool: none of its workers is kept
