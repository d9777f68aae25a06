"""The tool sources every host has, registered as any other source is.

Each entry of ``BUILTIN_SOURCES`` builds one ``ToolSource`` from the host; ``Host``
registers them in this order (the extensions first: the host's ``web_search`` follows
the search providers they register). A source of one's own needs no entry here:
``host.sources.register(MySource(...))`` before the extensions load (see
``workbench.tools.source``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.tools.source import ToolSource

if TYPE_CHECKING:
    from workbench.core.host import Host


def extension_source(host: Host) -> ToolSource:
    """The extensions: built-in, installed, a trusted project's, the samples."""
    from workbench.core.extension_source import ExtensionSource

    return ExtensionSource(manager=host.extensions.manager, memories=host.memories.library,
                           hooks=host.hooks, providers=host.providers.registry,
                           workspace=host.workspace, sandbox=host.sandbox,
                           platforms=host.registry.platforms)


def host_source(host: Host) -> ToolSource:
    """The host's own tools (``extensions_status``, the bridge, the memory tools,
    ``web_search``)."""
    from workbench.core.host_tools import HostToolSource, host_tools, on_demand_tools

    return HostToolSource(lambda: host_tools(host) + on_demand_tools(host) + host.providers.tools())


def mcp_source(host: Host) -> ToolSource:
    """The MCP servers of the person's and a trusted project's config."""
    from workbench.core.mcp_source import McpSource

    return McpSource(load=host.mcp.load, tools=host.mcp.tools,
                     servers=host.mcp.servers_if_any, notices=host.mcp.notices,
                     stop=host.mcp.aclose, follow_config=host.mcp.follow_config)


def shell_source(host: Host) -> ToolSource:
    """The ``shell`` tool: a command line in the sandbox on the chat's project folder."""
    from workbench.shell.source import ShellHost, ShellSource

    workspace = host.workspace
    return ShellSource(ShellHost(settings=lambda: workspace.config.settings,
                                 trusted=workspace.own_setting, folder=host.chats.folder,
                                 zygote=lambda: host.sandbox.zygote,
                                 readiness=host.sandbox.report, limits=lambda: host.sandbox.limits,
                                 store=host.store), host.changes)


BUILTIN_SOURCES: tuple[Callable[[Host], ToolSource], ...] = (
    extension_source,
    host_source,
    mcp_source,
    shell_source,
)
"""Every host's tool sources, in the order they load."""
