"""The Host: the composition root both front-ends drive.

``Host.open`` opens the home, its config and its store; ``__init__`` makes the bus, the
broker, the sandbox runner, the gateway and the tool sources, and builds one service per
area, each handed what it needs: ``host.chats``, ``host.extensions``, ``host.providers``,
``host.mcp``, ``host.schedules``, ``host.memories``, ``host.grants``, ``host.switches``
(docs/architecture.md, "Host and its services"). What spans every area stays here:
opening and closing, a config or folder change handed to every service
(``follow_config``, ``enter_folder``), loading the tool sources and the status report,
a direct call, the responder and the setup notices. It never draws anything.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.agent.providers import ModelProvider
from workbench.config.files import Config
from workbench.config.home import Home
from workbench.core.bus import EventBus
from workbench.core.chat_models import ChatModels
from workbench.core.chats import Chats
from workbench.core.extension_service import ExtensionService
from workbench.core.mcp_servers import McpServers
from workbench.core.memory_service import MemoryService
from workbench.core.providers import Providers, reads_files
from workbench.core.grants import Grants
from workbench.core.gateway import CallOptions, ToolGateway, ToolOutcome
from workbench.core.requests import DenyAll, Responder
from workbench.core.schedules import Schedules
from workbench.shell.changes import Changes
from workbench.errors import StoreError, ToolError, WorkbenchError
from workbench.events import ExtensionStatusChanged, Notice
from workbench.permissions.broker import Broker
from workbench.permissions.requirements import TemplateRoots
from workbench.config.locale import user_locale
from workbench.core.call_log import CallLog
from workbench.store import Store
from workbench.capabilities.database import ExtensionDatabases
from workbench.capabilities.memories import Memories
from workbench.core.hook_runtime import HookRuntime
from workbench.core.runner import Dispatcher, ExtensionFiles, SandboxRunner
from workbench.hooks.registry import HookRegistry
from workbench.core.services import HostServices
from workbench.core.switches import Switches
from workbench.sandbox.policy import Limits
from workbench.sandbox.pool import PoolLimits
from workbench.tools.registry import ToolRegistry
from workbench.tools.source import ToolSources

if TYPE_CHECKING:
    from workbench.core.load_record import LoadRecord
    from workbench.core.status import StatusReport

log = logging.getLogger(__name__)


PUTS_AT_EXIT_S = 5.0
"""How long closing waits for memories still being handed to memory providers."""


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
        self.config = config
        self.store = store
        self.registry = registry
        self.responder = responder
        self.model = model
        self.model_chosen = model_chosen
        """Whether ``model`` was chosen for this host (``--model``) rather than read from
        the ``model`` setting: the chats it starts then keep it as their own."""
        self.cwd = cwd
        self.bus = EventBus()
        self.broker = Broker(store)
        self.env: Mapping[str, str] = env
        """Where API keys and the like are read from."""
        library = Memories(store, skills_dir=home.root / "skills")
        self.memories = MemoryService(
            store=store, library=library,
            context_budget_chars=config.settings.memories.context_budget_chars,
            ensure_extensions=self.ensure_extensions,
            put_to_providers=lambda *put: self.providers.put(*put))
        """The person's memories and what a turn is shown of all (``core/memory_service.py``)."""
        self.databases = ExtensionDatabases(home.root / "databases")
        self.services = HostServices(store=store, config=config, databases=self.databases,
                                     memories=library, provider=self._chat_provider,
                                     responder=lambda: self.responder)
        self.services.on_scheduled = lambda prompt_id: self.schedules.freeze_card({"id": prompt_id})
        self.changes = Changes(store=store, settings=lambda: self.config.settings.shell)
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
        self.sandbox.files = ExtensionFiles(
            store=store, installed=lambda name: home.extensions_dir / name,
            reason=lambda name: self.extensions.held_reason(name), on_held=lambda name: self.reload_extensions())
        self.gateway.call_log = CallLog(store, home.logs_dir)
        self.gateway.locale = user_locale(config.settings.locale, os.environ)
        self.gateway.review_writes = config.settings.tools.review_writes
        self.providers = Providers(
            home=home, store=store, bus=self.bus, broker=self.broker, sandbox=self.sandbox,
            gateway=self.gateway, config=config, env=env, cwd=lambda: self.cwd,
            responder=lambda: self.responder, ensure_extensions=self.ensure_extensions)
        """The providers extensions register and the models specs name (``core/providers.py``)."""
        self._loading = threading.RLock()
        self._extensions_loaded = False
        self.extensions = ExtensionService(
            home=home, config=config, store=store, databases=self.databases,
            cwd=lambda: self.cwd, loading=self._loading, busy=lambda: self.chats.busy,
            loaded=lambda: self._extensions_loaded, reload=self.reload_extensions)
        """Installing, updating, removing, trusting extensions (``core/extension_service.py``)."""
        self.extensions_loaded_at = 0
        """When the extensions were last (re)loaded, in unix milliseconds."""
        self._provider: ModelProvider | None = provider
        self.mcp = McpServers(
            home=home, store=store, bus=self.bus, registry=registry, sources=self.sources,
            gateway=self.gateway, config=config, cwd=lambda: self.cwd,
            responder=lambda: self.responder, session=lambda session_id: self.chats.get(session_id),
            loading=self._loading,
            extensions_loaded=lambda: self._extensions_loaded,
            status_report=lambda: self.status_report().to_json(),
            ensure_extensions=self.ensure_extensions)
        """The MCP servers: their tools, state, prompts and resources (``core/mcp_servers.py``)."""
        from workbench.core.extension_source import ExtensionSource
        from workbench.core.sources import BUILTIN_SOURCES

        for make in BUILTIN_SOURCES:
            self.sources.register(make(self))
        found = self.sources.get("extensions")
        assert isinstance(found, ExtensionSource)
        self.extension_source: ExtensionSource = found
        """The extensions' source: what the last load found (``loaded``, ``record``)."""
        self.switches = Switches(store=store, registry=registry, providers=self.providers.registry,
                                 gateway=self.gateway, sources=self.sources,
                                 extensions=self.extension_source,
                                 session=lambda session_id: self.chats.get(session_id),
                                 ensure_extensions=self.ensure_extensions)
        """Each chat's extension and tool switches, the tools it is offered (``core/switches.py``)."""
        self.grants = Grants(store=store, broker=self.broker, registry=registry,
                             providers=self.providers.registry, hooks=self.hooks,
                             gateway=self.gateway, sandbox=self.sandbox,
                             ensure_extensions=self.ensure_extensions)
        """The grants of tools, providers and hooks: explained, revoked (``core/grants.py``)."""
        self.chats = Chats(
            store=store, bus=self.bus, registry=registry, gateway=self.gateway,
            hook_runtime=self.hook_runtime, switches=self.switches, memories=self.memories,
            providers=self.providers, config=config, host_model=model,
            model_chosen=model_chosen, host_provider=lambda: self.provider(), cwd=lambda: self.cwd,
            enter_folder=lambda folder, why: self.enter_folder(folder, why=why),
            ensure_extensions=self.ensure_extensions)
        """Sessions, their turns, each chat's model and folder (``core/chats.py``)."""
        self.chat_models = ChatModels(self)
        """Which model a chat talks to, as ``/model``, the header and Settings ask
        (``core/chat_models.py``)."""
        self.schedules = Schedules(home=home, store=store, bus=self.bus, host=self)
        """Scheduled prompts, their cards and runs, the supervisor (``core/schedules.py``)."""

    @property
    def loaded_extensions(self) -> list[dict]:
        """The extensions the last (re)load loaded: ``{name, version, path, source, scope,
        identity, tools}`` each."""
        return self.extension_source.extensions

    @property
    def extension_notices(self) -> list[str]:
        """What the last (re)load found the person should know, from every source."""
        return self.sources.notices()

    @property
    def _load_record(self) -> LoadRecord | None:
        return self.extension_source.record

    def follow_config(self) -> None:
        """Apply ``self.config``'s limits to the parts built from it: each worker's
        resources, whether workers are kept warm, the tool and hook time limits, the
        output cap, MCP servers started from now on (``enter_folder`` calls this when
        another folder's config takes over)."""
        config = self.config
        self.sandbox.follow(limits=worker_limits(config), keep_warm=config.settings.sandbox.keep_warm,
                            pool=pool_limits(config))
        self.hook_runtime.budget_ms = config.settings.hooks.budget_ms
        self.memories.context_budget_chars = config.settings.memories.context_budget_chars
        self.gateway.default_timeout_ms = config.settings.tools.timeout_ms
        self.gateway.max_output_bytes = config.settings.tools.max_output_bytes
        self.gateway.locale = user_locale(config.settings.locale, os.environ)
        self.gateway.review_writes = config.settings.tools.review_writes
        self.providers.follow_config(config)
        self.extensions.follow_config(config)
        self.chats.follow_config(config)
        self.sources.follow_config(config)

    @classmethod
    def open(cls, *, cwd: Path | None = None, model: str | None = None,
             responder: Responder | None = None, env: Mapping[str, str] | None = None,
             defer_extensions: bool = False, provider: ModelProvider | None = None) -> Host:
        """Open the home (creating it on first start), its config and store.

        With ``defer_extensions`` the extensions are loaded on first need (or by
        ``ensure_extensions`` from a background thread), so a front-end can draw
        its first frame before that work. A ``provider`` given is the host's model
        (what ``model`` would have built), for a caller that brings its own.

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
        host.settle_after_crash()
        host.sandbox.start()
        host.sources.start()
        if not defer_extensions:
            host.ensure_extensions()
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

    def ensure_extensions(self) -> None:
        """Load the extensions once; safe to call from a background thread."""
        with self._loading:
            if not self._extensions_loaded:
                self.reload_extensions()

    def _extensions_ready(self) -> bool:
        """Whether the extensions are loaded and no (re)load is under way: then a call
        need not hand ``ensure_extensions`` to a thread to wait for it."""
        if not self._loading.acquire(blocking=False):
            return False
        try:
            return self._extensions_loaded
        finally:
            self._loading.release()

    def reload_extensions(self) -> None:
        """(Re)build the tool registry from every tool source (the extensions that may
        run here, the host's own tools, the MCP servers: ``ToolSources.rebuild``), and
        publish ``ExtensionStatusChanged`` with the new report."""
        with self._loading:
            self.sources.rebuild()
            self.extensions_loaded_at = time.time_ns() // 1_000_000
            reloaded = self._extensions_loaded
            if reloaded:
                self.sandbox.forget()
            if self.sandbox.files is not None:
                self.sandbox.files.reset()
            self._extensions_loaded = True
        self.bus.publish(ExtensionStatusChanged(report=self.status_report().to_json(),
                                                reloaded=reloaded))

    def status_report(self, session_id: str | None = None) -> StatusReport:
        """The extension status report: loaded extensions, load errors, conflicts, counts.

        Args:
            session_id: The chat it is for (its switched-off extensions are marked);
                None for the host as a whole.
        """
        from workbench.core.status import SessionContext, build_status_report

        self.ensure_extensions()
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
        return build_status_report(loaded=self.loaded_extensions, registry=self.registry,
                                   shipped=self.memories.library.shipped.values(),
                                   record=self._load_record, notices=self.extension_notices,
                                   built_at=self.extensions_loaded_at, session=context,
                                   schema_budget=self.config.settings.tools.schema_token_budget,
                                   providers=self.providers.registry,
                                   memory_conflicts=self.memories.library.conflicts(),
                                   sources=self.sources.status_rows(),
                                   conflicts=self.sources.conflicts())

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
        await self.sandbox.aclose()

    async def aclose(self) -> None:
        """``close`` from inside the event loop: ``ashutdown``, then ``close``."""
        await self.ashutdown()
        self.close()

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def model_label(self) -> str:
        """What the person is chatting with: the provider's name once it is built
        (``auto`` resolves to a real one), else the configured spec."""
        if self.model == "auto" and self._provider is not None:
            return getattr(self._provider, "name", None) or self.model
        return self.model

    def close(self) -> None:
        closer = getattr(self._provider, "close", None)
        if callable(closer):
            closer()
        self.providers.close()
        self.sources.close()
        self.sandbox.close()
        self.databases.close()
        self.store.close()
        if self.gateway.call_log is not None:
            self.gateway.call_log.close()

    def own_setting(self, key: str) -> bool:
        """Whether the value of setting ``key`` in force comes from the person's own
        (global) config or its default: a project's config cannot set it."""
        return str(self.config.origin(key)).startswith(("global", "default"))

    def shell_network(self, session_id: str | None) -> dict[str, Any]:
        """What the shell may reach in a chat: ``level`` (its choice or the setting,
        within the ceiling), ``chosen``, ``setting``, ``ceiling``, ``levels``,
        ``allowed_hosts`` (allowed for the chat from a network card)."""
        return self._shell().network(session_id)

    def set_shell_network(self, session_id: str, level: str | None) -> dict[str, Any]:
        """Choose the shell's network for a chat (``off``, ``registries``, ``all``; None
        follows the setting); capped by ``shell.network_ceiling`` from the person's config.

        Raises:
            WorkbenchError: No such session, or not a level.
        """
        session = self.chats.get(session_id)
        try:
            return self._shell().set_network(session["id"], level)
        except ToolError as exc:
            raise WorkbenchError(exc.message) from None

    def _shell(self) -> Any:
        from workbench.shell.source import ShellSource

        found = self.sources.get("shell")
        assert isinstance(found, ShellSource)
        return found

    def session_folder(self, session_id: str | None) -> Path:
        """The project folder of the chat ``session_id`` (the host's folder without one)."""
        found = self.store.get_session(session_id) if session_id else None
        return Path(found["folder"]) if found and found.get("folder") else self.cwd

    def unsandboxed_tools(self) -> set[str]:
        """Tools the person allowed to run without a sandbox — from their own (global)
        config only: a project's config cannot opt a tool out of the sandbox."""
        if not str(self.config.origin("sandbox.unsandboxed_tools")).startswith(("global", "default")):
            return set()
        return set(self.config.settings.sandbox.unsandboxed_tools)

    def enter_folder(self, folder: Path, *, why: str = "") -> bool:
        """Make ``folder`` the host's working folder: its config (a trusted project's
        included) with the limits it sets (``follow_config``), its project extensions, the folder tools start in and hooks are told
        of, and where relative model paths are read from. A folder that is gone is not
        entered: a warning says so and the host stays where it is.

        Returns:
            Whether the host moved.

        Raises:
            WorkbenchError: A turn is running.
        """
        folder = Path(folder)
        if folder == self.cwd:
            return False
        if self.chats.busy:
            raise WorkbenchError(f"cannot move to {folder} while a turn is running; wait for it "
                                 "or cancel it")
        if not folder.is_dir():
            self.bus.publish(Notice(level="warning", message=(
                f"the folder of {why or 'this chat'}, {folder}, is gone; working in {self.cwd}")))
            return False
        config = Config.load(self.home, folder)
        with self._loading:
            self.cwd = folder
            self.config = config
            self.services.config = config
            self.follow_config()
            self.sandbox.cwd = folder
            self.gateway.cwd = str(folder)
            self.gateway.roots = self.gateway.roots.with_project(folder)
            self.providers.follow_roots(self.gateway.roots)
            self.hook_runtime.cwd = str(folder)
            self.mcp.follow_folder(folder)  # stdio servers start in the chat's folder
            if reads_files(self.model):
                closer = getattr(self._provider, "close", None)
                if callable(closer):
                    closer()
                self._provider = None
            loaded = self._extensions_loaded
        if loaded:
            self.reload_extensions()
        return True

    # --- requests ----------------------------------------------------------

    def set_responder(self, responder: Responder) -> None:
        """Give the host the front-end that answers its requests."""
        self.responder = responder
        self.gateway.responder = responder

    def notices(self) -> list[str]:
        """What the person should know about the setup (e.g. an untrusted project config)."""
        return list(self.config.notices) + list(self.extension_notices)

    def announce(self, model: bool = True) -> None:
        """Publish the setup notices as events (with ``model``, the model's own notice
        too, once it is built)."""
        for message in self.notices():
            self.bus.publish(Notice(level="warning", message=message))
        notice = getattr(self._provider, "notice", None) if model else None
        if notice:
            self.bus.publish(Notice(level="info", message=notice))

    # --- the model ---------------------------------------------------------

    def provider(self) -> ModelProvider:
        """The model this host talks to, built on first use (an extension's model
        provider too: ``ext:EXTENSION/NAME``)."""
        if self._provider is None:
            self._provider = self.providers.build(self.model)
        return self._provider

    def _chat_provider(self, session_id: str | None) -> ModelProvider:
        """The model a tool's ``llm.complete`` reaches: its chat's, else the host's."""
        return self.chats.provider(session_id) if session_id else self.provider()

    # --- tools -------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Any, options: CallOptions = CallOptions()) -> ToolOutcome:
        """Call a tool directly (a person, a schedule or another agent), through the gateway;
        in a chat (``options.session_id``), as that chat sees its tools."""
        if not self._extensions_ready():
            if options.session_id is None and not self._extensions_loaded and self.mcp.needed is None:
                from workbench.mcp.naming import servers_named_by

                self.mcp.needed = servers_named_by(name)
            try:
                await asyncio.to_thread(self.ensure_extensions)
            finally:
                self.mcp.needed = None
        if options.session_id is not None:
            return await self.switches.call(name, arguments, options)
        outcome = await self.gateway.call(name, arguments, options)
        return self.mcp.explained(name, outcome)

    # --- what the schedules ask of the host (``ScheduleHost``) ----------------------

    def resolve_tool_name(self, name: str) -> str:
        """The ``EXTENSION.TOOL`` a tool name means here (extensions loaded first).

        Raises:
            ToolError: No such tool.
        """
        self.ensure_extensions()
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
