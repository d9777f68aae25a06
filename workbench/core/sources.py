"""The tool sources every host has, each built from what it needs and registered as
any other source is.

Each factory takes, typed, the services its source draws on (never the host), and
``Host`` registers them in one line each, in this order (the extensions first: the
host's ``web_search`` follows the search providers they register). A source of one's own
needs no entry here: ``host.sources.register(MySource(...))`` before the extensions load
(see ``workbench.tools.source``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.tools.source import ToolSource

if TYPE_CHECKING:
    from workbench.core.chats import Chats
    from workbench.core.extension_service import ExtensionService
    from workbench.hooks.registry import HookRegistry
    from workbench.core.loading import Loading
    from workbench.core.mcp_servers import McpServers
    from workbench.core.plugin_service import PluginService
    from workbench.core.memory_service import MemoryService
    from workbench.core.providers import Providers
    from workbench.core.runner import SandboxRunner
    from workbench.core.shell_service import ShellService
    from workbench.core.switches import Switches
    from workbench.core.tool_service import ToolService
    from workbench.core.workspace import Workspace
    from workbench.shell.changes import Changes
    from workbench.store import Store
    from workbench.tools.registry import ToolRegistry


def extension_source(*, extensions: ExtensionService, memories: MemoryService, hooks: HookRegistry,
                     providers: Providers, workspace: Workspace, sandbox: SandboxRunner,
                     registry: ToolRegistry) -> ToolSource:
    """The extensions: built-in, installed, a trusted project's, the samples."""
    from workbench.core.extension_source import ExtensionSource

    return ExtensionSource(manager=extensions.manager, memories=memories.library, hooks=hooks,
                           providers=providers.registry, workspace=workspace, sandbox=sandbox,
                           platforms=registry.platforms)


def host_source(*, chats: Chats, store: Store, loading: Loading, tools: ToolService,
                switches: Switches, registry: ToolRegistry, memories: MemoryService,
                providers: Providers) -> ToolSource:
    """The host's own tools (``extensions_status``, the bridge, the memory tools,
    ``web_search``)."""
    from workbench.core.host_tools import HostToolSource, host_tools, on_demand_tools

    return HostToolSource(lambda: host_tools(chats=chats, store=store, loading=loading, tools=tools)
                          + on_demand_tools(chats=chats, store=store, switches=switches,
                                            registry=registry, memories=memories, providers=providers)
                          + providers.tools())


def mcp_source(*, mcp: McpServers) -> ToolSource:
    """The MCP servers of the person's and a trusted project's config."""
    from workbench.core.mcp_source import McpSource

    return McpSource(load=mcp.load, tools=mcp.tools, servers=mcp.servers_if_any,
                     notices=mcp.notices, stop=mcp.aclose, follow_config=mcp.follow_config)


def shell_source(*, workspace: Workspace, chats: Chats, sandbox: SandboxRunner, store: Store,
                 changes: Changes) -> ToolSource:
    """The ``shell`` tool: a command line in the sandbox on the chat's project folder."""
    from workbench.shell.source import ShellHost, ShellSource

    return ShellSource(ShellHost(settings=lambda: workspace.config.settings,
                                 trusted=workspace.own_setting, folder=chats.folder,
                                 zygote=lambda: sandbox.zygote,
                                 readiness=sandbox.report, limits=lambda: sandbox.limits,
                                 store=store), changes)


def bundle_source(*, workspace: Workspace, chats: Chats, sandbox: SandboxRunner, switches: Switches,
                  shell: ShellService) -> ToolSource:
    """``extension_manage`` and ``extension_call``: the project's content-addressed bundles."""
    from workbench.bundles.runtime import BundleRunner
    from workbench.bundles.service import BundleService
    from workbench.bundles.source import BundleSource
    from workbench.config.settings import DEFAULTS

    def programs() -> tuple[str, ...]:
        own = workspace.own_setting("shell.programs")
        return tuple(workspace.config.settings.shell.programs if own else DEFAULTS.shell.programs)

    runner = BundleRunner(zygote=lambda: sandbox.zygote, scratch=lambda: workspace.home.cache_dir / "bundles",
                          limits=lambda: sandbox.limits, programs=programs,
                          output_bytes=lambda: workspace.config.settings.tools.max_output_bytes,
                          readiness=sandbox.report)
    def network(session_id: str | None) -> str:
        try:
            return str(shell.network(session_id)["level"])
        except (LookupError, AssertionError):  # the shell is not registered: no network at all
            return "off"

    service = BundleService(runner=runner, workbench_home=lambda: workspace.home.root, network=network)
    return BundleSource(service, folder=chats.folder,
                        chat_tools=lambda session_id: switches.tools(session_id))


def plugin_source(*, plugins: PluginService) -> ToolSource:
    """The tools of the installed plugins this project enables (``plugin_<tool>``)."""
    from workbench.plugins.source import PluginSource

    return PluginSource(plugins=plugins.enabled_here, call=plugins.call_tool, rows=plugins.source_rows,
                        stop=plugins.aclose, notices=plugins.notices,
                        follow=plugins.follow_soon, close=plugins.close)
