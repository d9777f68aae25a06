"""The Host: the composition root both front-ends drive.

``Host.open`` opens the home, its config and its store; ``__init__`` makes the bus, the
broker, the sandbox runner, the gateway and the tool sources, and builds one service per
area, each handed what it needs, typed (docs/architecture.md, "Host and its services").
What stays here is the wiring, opening and closing. It never draws anything.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from workbench.agent.providers import ModelProvider
from workbench.capabilities.database import ExtensionDatabases
from workbench.capabilities.memories import Memories
from workbench.config.files import Config
from workbench.config.home import Home
from workbench.config.locale import user_locale
from workbench.core.bus import EventBus
from workbench.core.call_log import CallLog
from workbench.core.chat_models import ChatModels
from workbench.core.chats import Chats, RunningTurn
from workbench.core.default_model import DefaultModel
from workbench.core.extension_service import ExtensionService
from workbench.core.folder_service import FolderService, pool_limits, worker_limits
from workbench.core.gateway import ToolGateway
from workbench.core.grants import Grants
from workbench.core.hook_runtime import HookRuntime
from workbench.core.loading import Loading
from workbench.core.mcp_servers import McpServers
from workbench.core.memory_service import MemoryService
from workbench.core.provider_registry import ProviderRegistry
from workbench.core.providers import Providers
from workbench.core.requests import DenyAll, Responder
from workbench.core.runner import Dispatcher, ExtensionFiles, SandboxRunner
from workbench.core.schedules import Schedules
from workbench.core.services import HostServices
from workbench.core.settings_service import SettingsService
from workbench.core.shell_service import ShellService
from workbench.core.page_service import PageService
from workbench.core.plugin_events import PluginEvents
from workbench.core.plugin_runs import PluginRuns
from workbench.core.plugin_service import PluginService
from workbench.core.plugin_tasks import PluginTasks
from workbench.core.plugin_ui import PluginUI
from workbench.core.sources import (bundle_source, extension_source, host_source, mcp_source, plugin_source,
                                    shell_source)
from workbench.core.switches import Switches
from workbench.core.tool_service import ToolService
from workbench.core.workspace import Workspace
from workbench.errors import StoreError, WorkbenchError
from workbench.hooks.registry import HookRegistry
from workbench.permissions.broker import Broker
from workbench.permissions.requirements import TemplateRoots
from workbench.shell.changes import Changes
from workbench.core.outside_changes import OutsideChanges
from workbench.store import Store
from workbench.tools.registry import ToolRegistry
from workbench.tools.source import ToolSources

log = logging.getLogger(__name__)


PUTS_AT_EXIT_S = 5.0
"""How long closing waits for memories still being handed to memory providers."""


class Host:
    """Owns everything below the front-ends; see the module docstring.

    Build one with ``Host.open``; close it with ``close`` (or use it as a context
    manager).
    """

    def __init__(self, *, home: Home, config: Config, store: Store, registry: ToolRegistry,
                 responder: Responder, model: str, cwd: Path,
                 env: Mapping[str, str] = os.environ, provider: ModelProvider | None = None,
                 model_chosen: bool = False) -> None:
        self.home = home
        self.store = store
        self.registry = registry
        self.workspace = Workspace(home=home, config=config, folder=cwd, env=env)
        """The host's folder and the config in force there (``core/workspace.py``)."""
        self.bus = EventBus()
        self.broker = Broker(store)
        library = Memories(store, skills_dir=home.root / "skills")
        self.databases = ExtensionDatabases(home.root / "databases")
        self.services = HostServices(store=store, workspace=self.workspace,
                                     databases=self.databases, memories=library)
        self.changes = Changes(store=store, settings=lambda: self.workspace.config.settings.shell)
        """The shell's change sets: apply, list, show, undo (``shell/changes.py``)."""
        self.sandbox = SandboxRunner(
            services=self.services, cwd=cwd, deno_cache=home.cache_dir / "deno",
            limits=worker_limits(config), keep_warm=config.settings.sandbox.keep_warm,
            pool=pool_limits(config))
        self.hooks = HookRegistry()
        self.hook_runtime = HookRuntime(registry=self.hooks, runner=self.sandbox,
                                        budget_ms=config.settings.hooks.budget_ms, cwd=str(cwd))
        self.bus.subscribe(self.hook_runtime.on_event)
        self.sources = ToolSources(registry, fallback="extensions")
        """Every source of tools, in the order they load (``workbench.tools.source``)."""
        self.gateway = ToolGateway(
            registry=registry, store=store, broker=self.broker, publish=self.bus.publish,
            responder=responder, runner=Dispatcher(self.sources),
            roots=TemplateRoots.for_host(home.root, project=cwd),
            default_timeout_ms=config.settings.tools.timeout_ms,
            max_output_bytes=config.settings.tools.max_output_bytes,
            hooks=self.hooks, run_hook=self.hook_runtime.run, observe=self.hook_runtime.observe,
            cwd=str(cwd))
        """Every call goes through it; its ``responder`` answers the host's requests."""
        self.gateway.call_log = CallLog(store, home.logs_dir)
        self.gateway.locale = user_locale(config.settings.locale, os.environ)
        self.gateway.review_writes = config.settings.tools.review_writes
        provider_registry = ProviderRegistry()
        self.loading = Loading(sources=self.sources, sandbox=self.sandbox, bus=self.bus,
                               registry=registry, library=library, providers=provider_registry,
                               workspace=self.workspace)
        """Loading the tool sources and what the last load found (``core/loading.py``)."""
        self.providers = Providers(
            home=home, store=store, bus=self.bus, broker=self.broker, sandbox=self.sandbox,
            gateway=self.gateway, config=config, workspace=self.workspace,
            registry=provider_registry, loading=self.loading)
        """The providers extensions register and the models specs name (``core/providers.py``)."""
        self.default_model = DefaultModel(spec=model, chosen=model_chosen,
                                          providers=self.providers, provider=provider)
        """The model of a chat that keeps none (``core/default_model.py``)."""
        self.memories = MemoryService(
            store=store, library=library,
            context_budget_chars=config.settings.memories.context_budget_chars,
            loading=self.loading, providers=self.providers)
        """The person's memories and what a turn is shown of all (``core/memory_service.py``)."""
        turn = RunningTurn()
        self.extensions = ExtensionService(home=home, store=store, databases=self.databases,
                                           workspace=self.workspace, loading=self.loading,
                                           turn=turn)
        """Installing, updating, removing, trusting extensions (``core/extension_service.py``)."""
        self.sandbox.files = ExtensionFiles(
            store=store, installed=lambda name: home.extensions_dir / name,
            reason=self.extensions.held_reason, on_held=lambda name: self.loading.reload())
        self.mcp = McpServers(home=home, store=store, bus=self.bus, registry=registry,
                              sources=self.sources, gateway=self.gateway,
                              workspace=self.workspace, loading=self.loading)
        """The MCP servers: their tools, state, prompts and resources (``core/mcp_servers.py``)."""
        self.switches = Switches(store=store, registry=registry, providers=provider_registry,
                                 gateway=self.gateway, sources=self.sources,
                                 loading=self.loading)
        """Each chat's extension and tool switches, the tools it is offered (``core/switches.py``)."""
        self.tools = ToolService(loading=self.loading, switches=self.switches,
                                 gateway=self.gateway, mcp=self.mcp, registry=registry,
                                 sandbox=self.sandbox, store=store)
        """A direct call, the status report (``core/tool_service.py``)."""
        self.outside_changes = OutsideChanges(registry=registry, changes=self.changes,
                                              call=self.tools.call, ensure=self.loading.ensure)
        """Changes extensions' tools report outside the project's files, recorded in and
        undone through ``host.changes`` (``core/outside_changes.py``)."""
        self.gateway.outside = self.outside_changes
        self.changes.run_undo = self.outside_changes.run_undo
        self.grants = Grants(store=store, broker=self.broker, registry=registry,
                             providers=provider_registry, hooks=self.hooks,
                             gateway=self.gateway, sandbox=self.sandbox, loading=self.loading)
        """The grants of tools, providers and hooks: explained, revoked (``core/grants.py``)."""
        self.folder = FolderService(
            workspace=self.workspace, turn=turn, bus=self.bus, loading=self.loading,
            sandbox=self.sandbox, gateway=self.gateway, hook_runtime=self.hook_runtime,
            memories=self.memories, providers=self.providers, mcp=self.mcp,
            sources=self.sources, default_model=self.default_model)
        """Moving to another folder, following a config change (``core/folder_service.py``)."""
        self.chats = Chats(
            store=store, bus=self.bus, registry=registry, gateway=self.gateway,
            hook_runtime=self.hook_runtime, switches=self.switches, memories=self.memories,
            providers=self.providers, workspace=self.workspace,
            default_model=self.default_model, folders=self.folder, loading=self.loading,
            turn=turn)
        """Sessions, their turns, each chat's model and folder (``core/chats.py``)."""
        self.services.models = self.chats
        self.chat_models = ChatModels(chats=self.chats, providers=self.providers,
                                      default_model=self.default_model,
                                      workspace=self.workspace, store=store)
        """Which model a chat talks to, as ``/model``, the header and Settings ask
        (``core/chat_models.py``)."""
        self.schedules = Schedules(home=home, store=store, bus=self.bus,
                                   workspace=self.workspace, default_model=self.default_model,
                                   loading=self.loading, tools=self.tools, grants=self.grants,
                                   switches=self.switches, chats=self.chats)
        """Scheduled prompts, their cards and runs, the supervisor (``core/schedules.py``)."""
        self.services.on_scheduled = lambda prompt_id: self.schedules.freeze_card({"id": prompt_id})
        self.settings = SettingsService(workspace=self.workspace, chat_models=self.chat_models)
        """The settings as the Settings screen shows them (``core/settings_service.py``)."""
        self.shell = ShellService(sources=self.sources, store=store)
        """The shell's network in each chat (``core/shell_service.py``)."""
        self.pages = PageService(extensions=self.extensions, registry=registry, tools=self.tools,
                                 loading=self.loading)
        self.plugins = PluginService(home=home, workspace=self.workspace, limits=self.sandbox.limits)
        """The plugins: installed, enabled here, their instances (``core/plugin_service.py``)."""
        self.plugins.runs = PluginRuns(store=store, chats=self.chats, plugins=self.plugins)
        self.plugins.api.on_run = self.plugins.runs.ask
        self.plugin_tasks = PluginTasks(store=store, plugins=self.plugins, publish=self.bus.publish)
        """Plugins' scheduled actions, tasks of the supervisor (``core/plugin_tasks.py``)."""
        self.schedules.plugin_tasks = self.plugin_tasks
        self.plugin_events = PluginEvents(plugins=self.plugins, store=store)
        """The bus's events sent to the plugins subscribed (``core/plugin_events.py``)."""
        self.bus.subscribe(self.plugin_events.observe)
        self.plugin_ui = PluginUI(plugins=self.plugins, store=store, publish=self.bus.publish)
        """Plugins' panes, cards and composer switches (``core/plugin_ui.py``)."""
        # The built-in sources, registered as any other source is (``core/sources.py``).
        self.sources.register(extension_source(extensions=self.extensions, memories=self.memories, hooks=self.hooks,
                                               providers=self.providers, workspace=self.workspace,
                                               sandbox=self.sandbox, registry=registry))
        self.sources.register(host_source(chats=self.chats, store=store, loading=self.loading, tools=self.tools,
                                          switches=self.switches, registry=registry, memories=self.memories,
                                          providers=self.providers))
        self.sources.register(mcp_source(mcp=self.mcp))
        self.sources.register(shell_source(workspace=self.workspace, chats=self.chats, sandbox=self.sandbox,
                                           store=store, changes=self.changes))
        self.sources.register(bundle_source(workspace=self.workspace, chats=self.chats, sandbox=self.sandbox,
                                            switches=self.switches, shell=self.shell))
        self.sources.register(plugin_source(plugins=self.plugins))

    @property
    def config(self) -> Config:
        """The config in force in the host's folder (``workspace.config``)."""
        return self.workspace.config

    def answer_with(self, responder: Responder) -> None:
        """Have ``responder`` answer the host's requests from now on (permissions, forms,
        reviews): how a face that opened the host puts its own answerer in place."""
        self.gateway.responder = responder

    @property
    def responder(self) -> Responder:
        """What answers the host's requests (``answer_with`` sets it)."""
        return self.gateway.responder

    @property
    def cwd(self) -> Path:
        """The host's working folder (``workspace.folder``)."""
        return self.workspace.folder

    @classmethod
    def open(cls, *, cwd: Path | None = None, model: str | None = None,
             responder: Responder | None = None, env: Mapping[str, str] | None = None,
             defer_extensions: bool = False, provider: ModelProvider | None = None,
             one_call: bool = False) -> Host:
        """Open the home (creating it on first start), its config and store.

        With ``defer_extensions`` the extensions are loaded on first need (or by
        ``host.loading.ensure`` from a background thread), so a front-end can draw
        its first frame before that work. A ``provider`` given is the host's model
        (what ``model`` would have built), for a caller that brings its own. A host
        opened for ``one_call`` (``workbench call``) does no work ahead for what comes
        after it: no tools read for ranking, no next worker started ahead.

        Raises:
            WorkbenchError: A config file or the store cannot be used; nothing of the
                user's is changed.
        """
        env = os.environ if env is None else env
        cwd = Path.cwd() if cwd is None else cwd
        home = Home.resolve(env)
        home.ensure()
        config = Config.load(home, cwd)
        store = Store.open(home.db_path)
        host = cls(home=home, config=config, store=store, registry=ToolRegistry(),
                   responder=responder or DenyAll(), model=model or config.settings.model,
                   cwd=cwd, env=env, provider=provider, model_chosen=model is not None)
        if one_call:
            host.sources.prepare_ranking = False
            host.sandbox.keep_warm = False
        host.settle_after_crash()
        host._sync_plugin_tasks()
        host.sandbox.start()
        host.sources.start()
        if not defer_extensions:
            host.loading.ensure()
        return host

    def settle_after_crash(self) -> None:
        """Settle what processes that died left open (done when the host opens, so
        whoever looks first sees it): their running tool calls ``interrupted`` and the
        sessions they were in answered (``Store.settle_after_crash``), scheduled runs
        of a dead supervisor ``interrupted`` (``settle_runs``). A store too busy to do it
        now is left for the next look."""
        from workbench.supervisor.supervisor import settle_runs

        try:
            self.store.settle_after_crash()
            settle_runs(self.store, self.bus.publish)
        except (StoreError, sqlite3.Error) as exc:
            log.warning("could not settle what a stopped process left open: %s", exc)

    def _sync_plugin_tasks(self) -> None:
        """Make the project's plugin tasks match its (trusted) config; a store too busy
        now is left for the next open."""
        try:
            self.plugin_tasks.sync()
        except (WorkbenchError, StoreError, sqlite3.Error) as exc:
            log.warning("could not apply the plugins' schedules: %s", exc)

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def ashutdown(self) -> None:
        """Stop, on the loop that started them, what runs on it: session-shutdown hooks
        run, MCP servers stop with their process trees, warm workers still starting are
        stopped. A front-end whose loop ends before it closes the host (the TUI) calls
        this as the loop ends; ``close`` then closes the rest."""
        await self.hook_runtime.shutdown()
        await self.providers.puts_settled(PUTS_AT_EXIT_S)
        await self.sources.stop()
        await self.plugin_tasks.aclose()
        self.plugin_ui.web.close()
        await self.sandbox.aclose()

    async def aclose(self) -> None:
        """``close`` from inside the event loop: ``ashutdown``, then ``close``."""
        await self.ashutdown()
        self.close()

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def close(self) -> None:
        self.default_model.close()
        self.providers.close()
        self.sources.close()
        self.sandbox.close()
        self.databases.close()
        self.store.close()
        if self.gateway.call_log is not None:
            self.gateway.call_log.close()
