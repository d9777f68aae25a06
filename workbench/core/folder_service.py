"""Moving the host to another folder, and following a config change.

``FolderService`` is reached as ``host.folder``. ``enter`` makes a folder the host's
working folder: its config (a trusted project's included), its project extensions, the
folder tools start in and hooks are told of, and where relative model paths are read
from. ``follow_config`` hands the config in force to every part built from it. It must
not import a front-end.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config.files import Config
from workbench.config.locale import user_locale
from workbench.errors import WorkbenchError
from workbench.events import Notice
from workbench.sandbox.policy import Limits
from workbench.sandbox.pool import PoolLimits

if TYPE_CHECKING:
    from workbench.core.bus import EventBus
    from workbench.core.chats import RunningTurn
    from workbench.core.default_model import DefaultModel
    from workbench.core.gateway import ToolGateway
    from workbench.core.hook_runtime import HookRuntime
    from workbench.core.loading import Loading
    from workbench.core.mcp_servers import McpServers
    from workbench.core.memory_service import MemoryService
    from workbench.core.providers import Providers
    from workbench.core.runner import SandboxRunner
    from workbench.core.workspace import Workspace
    from workbench.tools.source import ToolSources


def pool_limits(config: Config) -> PoolLimits:
    """How many workers, and how much memory, ``config`` lets the host keep started ahead."""
    sandbox = config.settings.sandbox
    return PoolLimits(per_tool=sandbox.pool_size, total=sandbox.pool_total,
                      memory_mb=sandbox.pool_memory_mb, idle_s=sandbox.pool_idle_s)


def worker_limits(config: Config) -> Limits:
    """The resources each tool's worker gets under ``config``."""
    return Limits(memory_mb=config.settings.sandbox.memory_mb,
                  output_bytes=config.settings.tools.max_output_bytes,
                  per_process_memory=config.settings.sandbox.per_process_memory)


class FolderService:
    """The host's moves between folders; see the module docstring.

    Args:
        workspace: The folder and config it changes.
        turn: The turn running (no move during one).
        bus: Where a folder that is gone is told.
        loading: Its lock is held while moving; the tool sources are loaded again after.
        sandbox: Workers start in the folder, with the config's limits.
        gateway: Calls are told the folder; the config's time limit, cap and locale.
        hook_runtime: Hooks are told the folder; the config's time budget.
        memories: The config's budget for what a turn is shown.
        providers: The config's limits for provider calls and built-in models.
        mcp: Stdio servers start in the folder.
        sources: Every tool source follows the config.
        default_model: A model reading files is built again from the folder.
    """

    def __init__(self, *, workspace: Workspace, turn: RunningTurn, bus: EventBus,
                 loading: Loading, sandbox: SandboxRunner, gateway: ToolGateway,
                 hook_runtime: HookRuntime, memories: MemoryService, providers: Providers,
                 mcp: McpServers, sources: ToolSources, default_model: DefaultModel) -> None:
        self.workspace = workspace
        self.turn = turn
        self.bus = bus
        self.loading = loading
        self.sandbox = sandbox
        self.gateway = gateway
        self.hook_runtime = hook_runtime
        self.memories = memories
        self.providers = providers
        self.mcp = mcp
        self.sources = sources
        self.default_model = default_model

    def follow_config(self) -> None:
        """Apply the workspace's config to the parts built from it: each worker's
        resources, whether workers are kept warm, the tool and hook time limits, the
        output cap, the locale, MCP servers started from now on (``enter`` calls this
        when another folder's config takes over)."""
        config = self.workspace.config
        self.sandbox.follow(limits=worker_limits(config), keep_warm=config.settings.sandbox.keep_warm,
                            pool=pool_limits(config))
        self.hook_runtime.budget_ms = config.settings.hooks.budget_ms
        self.memories.context_budget_chars = config.settings.memories.context_budget_chars
        self.gateway.default_timeout_ms = config.settings.tools.timeout_ms
        self.gateway.max_output_bytes = config.settings.tools.max_output_bytes
        self.gateway.locale = user_locale(config.settings.locale, os.environ)
        self.gateway.review_writes = config.settings.tools.review_writes
        self.providers.follow_config(config)
        self.sources.follow_config(config.settings)

    def enter(self, folder: Path, *, why: str = "") -> bool:
        """Make ``folder`` the host's working folder (see the module docstring). A
        folder that is gone is not entered: a warning says so and the host stays.

        Returns:
            Whether the host moved.

        Raises:
            WorkbenchError: A turn is running.
        """
        folder = Path(folder)
        here = self.workspace.folder
        if folder == here:
            return False
        if self.turn.busy:
            raise WorkbenchError(f"cannot move to {folder} while a turn is running; wait for it "
                                 "or cancel it")
        if not folder.is_dir():
            self.bus.publish(Notice(level="warning", message=(
                f"the folder of {why or 'this chat'}, {folder}, is gone; working in {here}")))
            return False
        config = Config.load(self.workspace.home, folder)
        with self.loading.lock:
            self.workspace.folder = folder
            self.workspace.config = config
            self.follow_config()
            self.sandbox.cwd = folder
            self.gateway.cwd = str(folder)
            self.gateway.roots = self.gateway.roots.with_project(folder)
            self.providers.follow_roots(self.gateway.roots)
            self.hook_runtime.cwd = str(folder)
            self.mcp.follow_folder(folder)  # stdio servers start in the chat's folder
            self.default_model.follow_folder()
            loaded = self.loading.loaded
        if loaded:
            self.loading.reload()
        return True
