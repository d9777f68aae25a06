"""The Host: the one object both front-ends drive.

It owns the config, the store, the tool registry and the gateway; it runs turns and
tool calls, publishes events on its bus and raises requests through the responder
its front-end gave it. It never draws anything.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.agent.loop import TurnLoop, TurnResult
from workbench.agent.messages import ToolCall, ToolSpec
from workbench.agent.providers import ModelProvider
from workbench.config.files import Config
from workbench.config.home import Home
from workbench.core.bus import EventBus
from workbench.core.extension_ops import ExtensionOps
from workbench.core.mcp_ops import McpOps
from workbench.core.memory_ops import MemoryOps
from workbench.core.provider_ops import ProviderOps
from workbench.core.provider_registry import PROVIDER_TYPES
from workbench.core.gateway import CallOptions, ToolGateway, ToolOutcome
from workbench.core.requests import DenyAll, Responder
from workbench.core.schedules import Schedules
from workbench.errors import SessionBusyError, StoreError, ToolError, WorkbenchError
from workbench.events import ExtensionStatusChanged, Notice, SessionStarted
from workbench.permissions.broker import Broker
from workbench.permissions.requirements import Requirement, TemplateRoots
from workbench.config.locale import user_locale
from workbench.core.call_log import CallLog
from workbench.store import Store
from workbench.capabilities.database import ExtensionDatabases
from workbench.capabilities.memories import Memories
from workbench.core.hook_runtime import HookRuntime
from workbench.core.runner import Dispatcher, ExtensionFiles, SandboxRunner
from workbench.hooks.dispatch import CONTEXT_LABEL
from workbench.hooks.registry import HookRegistry
from workbench.core.services import NET_REFUSED, HostServices
from workbench.core.switches import SwitchOps, known_extensions
from workbench.sandbox.policy import Limits
from workbench.tools.disclosure import BRIDGE_TOOLS, disclose, is_on_demand
from workbench.tools.registry import Tool, ToolRegistry
from workbench.tools.source import ToolSources

if TYPE_CHECKING:
    from workbench.core.load_record import LoadRecord
    from workbench.core.status import StatusReport

log = logging.getLogger(__name__)


PUTS_AT_EXIT_S = 5.0
"""How long closing waits for memories still being handed to memory providers."""

LEASE_POLL_S = 0.2
"""How often a turn waiting for its session looks whether the other turn ended."""


def _holder_name() -> str:
    """What this process is, as another process waiting for a session is told."""
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    return f"workbench {command}" if command.isidentifier() else "workbench"


def worker_limits(config: Config) -> Limits:
    """The resources each tool's worker gets under ``config``."""
    return Limits(memory_mb=config.settings.sandbox.memory_mb,
                  output_bytes=config.settings.tools.max_output_bytes,
                  per_process_memory=config.settings.sandbox.per_process_memory)


NET_REFUSALS_SHOWN = 10
"""How many of a tool's latest network refusals ``explain_grants`` lists."""


class Host(ExtensionOps, MemoryOps, McpOps, ProviderOps, SwitchOps):
    """Owns everything below the front-ends; see the module docstring.

    Build one with ``Host.open``; close it with ``close`` (or use it as a context
    manager).
    """

    def __init__(self, *, home: Home, config: Config, store: Store, registry: ToolRegistry,
                 responder: Responder, model: str, cwd: Path) -> None:
        self.home = home
        self.config = config
        self.store = store
        self.registry = registry
        self.responder = responder
        self.model = model
        self.cwd = cwd
        self.bus = EventBus()
        self.broker = Broker(store)
        self.memories = Memories(store, skills_dir=home.root / "skills")
        self.memories.on_saved = self.memory_saved  # every save reaches the memory providers
        self.databases = ExtensionDatabases(home.root / "databases")
        self.services = HostServices(store=store, config=config, databases=self.databases,
                                     memories=self.memories, provider=self._chat_provider,
                                     responder=lambda: self.responder)
        self.services.on_scheduled = lambda prompt_id: self.freeze_card({"id": prompt_id})
        self.sandbox = SandboxRunner(
            services=self.services, cwd=cwd, deno_cache=home.cache_dir / "deno",
            limits=worker_limits(config), keep_warm=config.settings.sandbox.keep_warm)
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
            reason=self._held_reason, on_held=lambda name: self.reload_extensions())
        self.gateway.call_log = CallLog(store, home.logs_dir)
        self.gateway.locale = user_locale(config.settings.locale, os.environ)
        self.gateway.review_writes = config.settings.tools.review_writes
        self.manager = None
        self._loading = threading.RLock()
        self._extensions_loaded = False
        self.extensions_loaded_at = 0
        """When the extensions were last (re)loaded, in unix milliseconds."""
        self._provider: ModelProvider | None = None
        self.env: Mapping[str, str] = os.environ
        """Where API keys and the like are read from."""
        self._turn: asyncio.Task | None = None
        self.turn_holder = _holder_name()
        """What holds a session's lease during this host's turns, as others are told."""
        from workbench.core.extension_source import ExtensionSource
        from workbench.core.sources import BUILTIN_SOURCES

        for make in BUILTIN_SOURCES:
            self.sources.register(make(self))
        found = self.sources.get("extensions")
        assert isinstance(found, ExtensionSource)
        self.extension_source: ExtensionSource = found
        """The extensions' source: what the last load found (``loaded``, ``record``)."""
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
        self.sandbox.limits = worker_limits(config)
        self.sandbox.keep_warm = config.settings.sandbox.keep_warm
        self.hook_runtime.budget_ms = config.settings.hooks.budget_ms
        self.gateway.default_timeout_ms = config.settings.tools.timeout_ms
        self.gateway.max_output_bytes = config.settings.tools.max_output_bytes
        self.gateway.locale = user_locale(config.settings.locale, os.environ)
        self.gateway.review_writes = config.settings.tools.review_writes
        self._providers_follow_config()
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
                   cwd=cwd)
        host.env = env
        host._provider = provider
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

    def _held_reason(self, name: str) -> str:
        """Why the installed extension ``name`` is held, in the words ``ext list`` uses
        (empty when it is not)."""
        from workbench.ext.manager import ExtensionManager

        manager = self.manager or ExtensionManager(self.home, self.store)
        try:
            found = manager.get(name)
        except WorkbenchError:
            return ""
        return found.reason if found.state == "held" else ""

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
                switches = self.chat_switches(found["id"])
                context = SessionContext(
                    id=found["id"], found=True, switched_off=tuple(sorted(switches.extensions_off)),
                    tools_off=tuple(sorted(f"{extension}.{name}" for (extension, name), on
                                           in switches.tools.items() if not on)),
                    tools=tuple(self._enabled(found["id"], on_demand=True)))
        return build_status_report(loaded=self.loaded_extensions, registry=self.registry,
                                   shipped=self.memories.shipped.values(),
                                   record=self._load_record, notices=self.extension_notices,
                                   built_at=self.extensions_loaded_at, session=context,
                                   schema_budget=self.config.settings.tools.schema_token_budget,
                                   providers=self.providers,
                                   memory_conflicts=self.memories.conflicts(),
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
        await self.memory_puts_settled(PUTS_AT_EXIT_S)
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
        self.close_models()
        self.sources.close()
        self.sandbox.close()
        self.databases.close()
        self.store.close()
        if self.gateway.call_log is not None:
            self.gateway.call_log.close()

    def unsandboxed_tools(self) -> set[str]:
        """Tools the person allowed to run without a sandbox — from their own (global)
        config only: a project's config cannot opt a tool out of the sandbox."""
        if not str(self.config.origin("sandbox.unsandboxed_tools")).startswith(("global", "default")):
            return set()
        return set(self.config.settings.sandbox.unsandboxed_tools)

    # --- requests ----------------------------------------------------------

    def set_responder(self, responder: Responder) -> None:
        """Give the host the front-end that answers its requests."""
        self.responder = responder
        self.gateway.responder = responder

    def notices(self) -> list[str]:
        """What the person should know about the setup (e.g. an untrusted project config)."""
        return list(self.config.notices) + list(self.extension_notices)

    def announce(self) -> None:
        """Publish the setup notices as events."""
        for message in self.notices():
            self.bus.publish(Notice(level="warning", message=message))
        notice = getattr(self._provider, "notice", None)
        if notice:
            self.bus.publish(Notice(level="info", message=notice))

    # --- the model ---------------------------------------------------------

    def provider(self) -> ModelProvider:
        """The model this host talks to, built on first use (an extension's model
        provider too: ``ext:EXTENSION/NAME``)."""
        if self._provider is None:
            self._provider = self.build_model(self.model)
        return self._provider

    def _chat_provider(self, session_id: str | None) -> ModelProvider:
        """The model a tool's ``llm.complete`` reaches: its chat's, else the host's."""
        return self.session_provider(session_id) if session_id else self.provider()

    def tool_specs(self, session_id: str | None = None, message: str | None = None) -> list[ToolSpec]:
        """The tools offered to the model for ``message`` (the current user message; by
        default the session's last one): in the session ``session_id`` when given
        (without the extensions it switched off), else every available tool.

        Every enabled tool is offered, the ones relevant to the message first; when
        their schemas exceed ``tools.schema_token_budget``, tool disclosure offers the
        ``alwaysAvailable`` tools, the most relevant ones that fit, and
        ``tool_search``/``tool_invoke`` for the rest (``workbench.tools.disclosure``).
        The memory tools are added when the chat has skills or memories.
        """
        session_id = self.session(session_id)["id"] if session_id else None
        if message is None:
            message = self.store.last_user_message(session_id) if session_id else ""
        every = self._enabled(session_id, on_demand=True)
        on_demand = {t.name: t for t in every if is_on_demand(t)}
        bridge = [on_demand[name] for name in BRIDGE_TOOLS if name in on_demand]
        plan = disclose([t for t in every if not is_on_demand(t)], message or "",
                        self.config.settings.tools.schema_token_budget, bridge=bridge)
        offered = list(plan.offered) + (bridge if plan.active else [])
        if self.has_memories(session_id) or self.has_memory_providers(session_id):
            offered.append(on_demand.get("memory_search"))
        if self.has_memories(session_id, "skill"):
            offered += [on_demand.get("skill_load"), on_demand.get("skill_file")]
        return [ToolSpec(t.name, t.description, t.parameters) for t in offered if t is not None]

    def enabled_tools(self, session_id: str | None = None) -> list[Tool]:
        """The tools enabled in ``session_id`` (every available tool without one),
        without the host tools offered only when a turn needs them."""
        return self._enabled(session_id)

    def _enabled(self, session_id: str | None, *, on_demand: bool = False) -> list[Tool]:
        switches = self.chat_switches(self.session(session_id)["id"] if session_id else None)
        self.ensure_extensions()
        exclude, skip = switches.exclusions(self.registry)
        off = switches.extensions_off
        tools = [t for t in self.registry.available(exclude=exclude, skip=skip)
                 if self.provider_tool_on(t, off)]
        return tools if on_demand else [t for t in tools if not is_on_demand(t)]

    # --- per-chat extension switches ----------------------------------------

    def session_tools(self, session_id: str) -> list[Tool]:
        """The tools a session has enabled: the available tools without those of the
        extensions it switched off (a name one of them won goes to the next tool by
        precedence), and without the host tools offered only when a turn needs them
        (``tool_specs`` says what one model step is offered).

        Raises:
            WorkbenchError: No such session.
        """
        return self._enabled(session_id)

    def set_extension_enabled(self, session_id: str, extension: str, enabled: bool) -> None:
        """Switch an extension off or on in one chat (its Tools menu).

        Raises:
            WorkbenchError: No such session, or no extension of that name is known here.
        """
        session = self.session(session_id)
        self.ensure_extensions()
        installed = self._load_record.installed if self._load_record else []
        known = known_extensions(self.registry, self.loaded_extensions, installed)
        if extension not in known | {row.name for _, row in self.sources.status_rows()}:
            raise WorkbenchError(f"no extension named {extension!r}; `workbench ext status` "
                                 f"lists them")
        self.store.set_session_extension(session["id"], extension, enabled)
        self.store.audit("person", f"session.extension.{'enable' if enabled else 'disable'}",
                         extension, {"session_id": session["id"]})

    # --- sessions ----------------------------------------------------------

    def new_session(self, title: str | None = None) -> dict[str, Any]:
        session = self.store.create_session(title=title, model=self.model, folder=str(self.cwd))
        self.bus.publish(SessionStarted(session_id=session["id"]))
        return session

    def session(self, session_id: str) -> dict[str, Any]:
        """The session ``session_id`` (or a unique prefix of it).

        Raises:
            WorkbenchError: No such session.
        """
        found = self.store.get_session(session_id)
        if found is None:
            raise WorkbenchError(f"no session {session_id!r}; `workbench sessions list` shows them")
        return found

    def sessions(self, limit: int | None = None) -> list[dict[str, Any]]:
        return self.store.list_sessions(limit=limit)

    def call_log(self, call_id: str) -> list[dict[str, Any]]:
        """The lines a call's tool logged (``ctx.log``), in order: ``{at, level, message}``."""
        return self.store.tool_call_log(call_id)

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        return self.store.list_messages(self.session(session_id)["id"])

    # --- turns -------------------------------------------------------------

    async def send_prompt(self, text: str, session_id: str | None = None, *,
                          wait: bool = False) -> TurnResult:
        """Run one turn of ``session_id`` (a new session when None) with ``text``.

        A resumed session talks to its own model and works in its own folder (the host
        moves there first), not the host's current ones. One turn at a time runs in a
        session, across processes: the turn holds the session's lease, and settles
        what a turn that died in it left open before anything is added.

        Args:
            wait: When another live turn holds the session, wait for it to end (saying
                so with a ``Notice``; ``cancel`` stops the wait) rather than refuse.

        Raises:
            SessionBusyError: (exit code 75) without ``wait``, another turn holds it;
                nothing was added to the session.
        """
        resumed = session_id is not None
        if session_id is None:
            session_id = self.new_session(title=text[:60])["id"]
        else:
            session_id = (await asyncio.to_thread(self.enter_session, session_id))["id"]
        token = uuid.uuid4().hex
        if not await self._hold_session(session_id, token, wait):
            return TurnResult(session_id, "cancelled", "",
                              "cancelled while waiting for another turn in the session")
        try:
            if resumed:
                self.bus.publish(SessionStarted(session_id=session_id, resumed=True))
                settled = await asyncio.to_thread(self.store.settle_session, session_id)
                if settled:
                    self.bus.publish(Notice(level="warning", message=(
                        f"{len(settled)} tool call{'s' if len(settled) != 1 else ''} of an "
                        "earlier turn had no result (its process stopped); the model is told")))
            return await self._turn_holding_lease(text, session_id, resumed)
        finally:
            self.store.release_lease(session_id, token)

    async def _hold_session(self, session_id: str, token: str, wait: bool) -> bool:
        """Take the session's lease for the turn ``token``; False when cancelled while
        waiting for it.

        Raises:
            SessionBusyError: Another live turn holds it, and ``wait`` is off.
        """
        holder = await asyncio.to_thread(self.store.take_lease, session_id, token,
                                         self.turn_holder)
        if holder is None:
            return True
        busy = _busy_message(session_id, holder)
        if not wait:
            raise SessionBusyError(f"{busy}; wait for it to end, or send again later",
                                   holder=holder)
        self.bus.publish(Notice(level="info", message=f"{busy}; waiting for it to end"))

        async def wait_for_it() -> None:
            while await asyncio.to_thread(self.store.take_lease, session_id, token,
                                          self.turn_holder) is not None:
                await asyncio.sleep(LEASE_POLL_S)

        self._turn = asyncio.ensure_future(wait_for_it())
        try:
            await self._turn
        except asyncio.CancelledError:
            if self._turn.cancelled():
                return False
            raise
        finally:
            self._turn = None
        return True

    async def _turn_holding_lease(self, text: str, session_id: str, resumed: bool) -> TurnResult:
        """The turn itself, holding the session's lease."""
        await asyncio.to_thread(self.ensure_extensions)
        provider = self.session_provider(session_id)
        context = await self.hook_runtime.session_start(session_id, resumed=resumed)
        if context:
            # A hidden message, before the first prompt, in model context and history.
            self.store.add_message(session_id, "system", content=f"{CONTEXT_LABEL}\n{context}",
                                   name="hook_context")
        self.hook_runtime.observe("on_agent_start", {"session_id": session_id})

        async def call_tool(call: ToolCall, user_message: str) -> ToolOutcome:
            return await self.call_for_model(session_id, call.name, call.arguments,
                                             user_message=user_message, call_id=call.call_id,
                                             model_call_id=call.id, message_id=call.message_id)

        # The tools are ranked for this turn's message; the memories are put before the
        # history at each step, never stored, so they are always the current ones.
        loop = TurnLoop(store=self.store, provider=provider, publish=self.bus.publish,
                        call_tool=call_tool, tools=lambda: self.tool_specs(session_id, message=text),
                        parallel_safe=self._parallel_safe,
                        system_context=lambda: self.memory_context_messages(session_id))
        self._turn = asyncio.ensure_future(loop.run(session_id, text))
        try:
            return await self._turn
        except asyncio.CancelledError:
            if self._turn.cancelled():
                return TurnResult(session_id, "cancelled", "")
            raise
        finally:
            self._turn = None
            self.hook_runtime.observe("on_agent_end", {
                "session_id": session_id, "messages": self.store.list_messages(session_id)[-20:]})

    async def call_for_model(self, session_id: str | None, name: str, arguments: Any, *,
                             user_message: str = "", call_id: str | None = None,
                             model_call_id: str | None = None,
                             message_id: int | None = None) -> ToolOutcome:
        """Make a call the model asked for — directly or through ``tool_invoke`` — in the
        chat ``session_id`` with the caller ``model``, as the chat sees its tools
        (``call_in_chat``: a tool it switched off is refused). ``call_id`` is ours; the
        model's id and its message are kept in the record as data."""
        options = CallOptions(caller="model", session_id=session_id, user_message=user_message,
                              model_call_id=model_call_id, message_id=message_id)
        return await self.call_in_chat(name, arguments, options, call_id=call_id)

    def _parallel_safe(self, name: str) -> bool:
        try:
            return self.registry.resolve(name).parallel_safe
        except WorkbenchError:
            return False

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self._turn is not None and not self._turn.done()

    def cancel(self) -> bool:
        """Cancel the running turn; returns whether there was one."""
        if self.busy:
            self._turn.cancel()
            return True
        return False

    def cancel_call(self, call_id: str) -> bool:
        """Cancel one running tool call (by our id, as events name it); the rest of its
        turn goes on.

        The tool sees the cancellation and the model gets an error result of kind
        ``cancelled`` for that call. Returns whether the call was running.
        """
        return self.gateway.cancel_call(call_id)

    # --- tools -------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Any, options: CallOptions = CallOptions()) -> ToolOutcome:
        """Call a tool directly (a person, a schedule or another agent), through the gateway;
        in a chat (``options.session_id``), as that chat sees its tools."""
        if not self._extensions_ready():
            if options.session_id is None and not self._extensions_loaded and self.mcp_needed is None:
                from workbench.mcp.naming import servers_named_by

                self.mcp_needed = servers_named_by(name)
            try:
                await asyncio.to_thread(self.ensure_extensions)
            finally:
                self.mcp_needed = None
        if options.session_id is not None:
            return await self.call_in_chat(name, arguments, options)
        outcome = await self.gateway.call(name, arguments, options)
        return self._mcp_explained(name, outcome)

    def resolve_grant_flags(self, name: str, flags: list[str], grant_all: bool = False) -> tuple[tuple[str, str], ...]:
        """Turn ``--grant KIND[:VALUE]`` flags into per-call grants for tool ``name``.

        A value may use the manifest's templates (``$home/notes``); ``KIND`` alone
        grants every entry of that kind the tool declares.

        Raises:
            WorkbenchError: (usage) a flag names a kind the tool does not declare.
        """
        from workbench.errors import ExitCode
        from workbench.permissions.requirements import expand_path

        self.ensure_extensions()
        tool = self.registry.resolve(name)
        try:
            declared = self.gateway.requirements(tool)
        except ValueError:
            # A template names nothing here ($project in a folder that is not a
            # project's): nothing can be granted; the call is refused, saying why.
            return ()
        if grant_all:
            return tuple((r.kind, r.value) for r in declared)
        pairs = []
        for flag in flags:
            kind, sep, value = flag.partition(":")
            matching = [r for r in declared if r.kind == kind]
            if not matching:
                kinds = ", ".join(sorted({r.kind for r in declared})) or "none"
                raise WorkbenchError(f"--grant {flag}: {tool.qualified_name} declares no {kind!r} "
                                     f"permission (it declares: {kinds})", exit_code=ExitCode.USAGE)
            if not sep:
                pairs.extend((r.kind, r.value) for r in matching)
                continue
            if kind in ("read", "write"):
                value = expand_path(value, roots=self.gateway.roots, extension_dir=tool.folder)
                value = os.path.normpath(os.path.join(self.cwd, value))
                # A folder named through a link is the declared one it resolves to.
                value = next((r.value for r in matching
                              if os.path.realpath(value) == os.path.realpath(r.value)), value)
            pairs.append((kind, value))
        return tuple(pairs)

    def _grant_holder(self, name: str) -> tuple[str, list[Requirement]]:
        """What holds grants under ``name``: a tool (its name), or an extension's provider
        (``TYPE:EXTENSION/NAME``, as its grants are kept); its key and requirements.

        Raises:
            ToolError: No such tool or provider.
        """
        self.ensure_extensions()
        if name.startswith("hook:"):
            return self._hook_holder(name.removeprefix("hook:"))
        kind, colon, rest = name.partition(":")
        extension, slash, provider_name = rest.partition("/")
        if colon and slash and kind in PROVIDER_TYPES:
            provider = self.providers.get(kind, extension, provider_name)
            if provider is None:
                raise ToolError("unknown_tool", f"no {kind} provider {provider_name!r} in "
                                f"extension {extension!r}; `workbench ext status` lists them")
            return provider.key, self.provider_runtime.requirements(provider)
        tool = self.registry.resolve(name)
        return tool.grant_key, self.gateway.requirements(tool)

    def _hook_holder(self, extension: str) -> tuple[str, list[Requirement]]:
        """The ``hooks.rewrite`` grant of an extension with an ``on_tool_call`` hook,
        named by its name or its identity (``hook:NAME``)."""
        from workbench.core.gateway import REWRITE_GRANT
        from workbench.hooks.registry import rewrite_key

        found = [hook for hook in self.hooks.for_event("on_tool_call")
                 if extension in (hook.extension, hook.identity)]
        if not found:
            raise ToolError("unknown_tool", f"no loaded extension {extension!r} has an "
                            "on_tool_call hook; `workbench ext status` lists the hooks")
        return rewrite_key(found[0].identity), [REWRITE_GRANT]

    def explain_grants(self, name: str) -> list[dict[str, Any]]:
        """For each permission ``name`` (a tool, or a provider as ``TYPE:EXTENSION/NAME``)
        declares: its state (``Broker.explain``), by which grant, when; then the latest
        requests the network proxy refused it (state ``refused``: ``value`` the target
        ``host:port``, ``reason`` the rule that refused it, ``at`` when), among the
        audit log's recent entries (``Store.recent_audit``)."""
        key, requirements = self._grant_holder(name)
        rows = [{**row, "tool": key} for row in self.broker.explain(key, requirements)]
        refusals = self.store.recent_audit(NET_REFUSED, self._runs_as(key), NET_REFUSALS_SHOWN)
        for entry in reversed(refusals):
            detail = entry["detail"] if isinstance(entry["detail"], dict) else {}
            rows.append({"kind": "net", "value": str(detail.get("target", "")),
                         "reason": str(detail.get("reason", "")), "optional": False,
                         "key": f"net:{detail.get('target', '')}", "state": "refused",
                         "grant": None, "at": entry["at"], "status": detail.get("status"),
                         "session_id": detail.get("session_id"), "tool": key})
        return rows

    def _runs_as(self, key: str) -> str:
        """The tool name a grant holder's calls run under in the sandbox: a provider
        (``TYPE:EXTENSION/NAME``) runs as a tool of its extension (``provider_runtime``)."""
        from workbench.core.provider_runtime import _as_tool

        kind, colon, rest = key.partition(":")
        extension, _, provider_name = rest.partition("/")
        provider = self.providers.get(kind, extension, provider_name) if colon else None
        return _as_tool(provider).qualified_name if provider is not None else key

    def revoke_grants(self, name: str, kind: str | None = None, value: str | None = None) -> int:
        """Remove the grants of a tool or a provider (``TYPE:EXTENSION/NAME``): all, of one
        kind, or one value; returns how many."""
        key, _ = self._grant_holder(name)
        removed = self.store.revoke_grants(key, kind, value)
        self.broker.forget(key, kind, value)
        self.sandbox.forget(key)
        self.store.audit("person", "grant.revoke", key,
                         {"kind": kind, "value": value, "removed": removed})
        return removed

    # --- what the schedules ask of the host (``ScheduleHost``) ----------------------

    def switchable_extensions(self) -> set[str]:
        """Every extension name a chat may switch (``known_extensions``), once loaded."""
        self.ensure_extensions()
        installed = self._load_record.installed if self._load_record else []
        return known_extensions(self.registry, self.loaded_extensions, installed)

    def resolve_tool_name(self, name: str) -> str:
        """The ``EXTENSION.TOOL`` a tool name means here (extensions loaded first).

        Raises:
            ToolError: No such tool.
        """
        self.ensure_extensions()
        return self.registry.resolve(name).qualified_name

    def forget_workers(self, tool_name: str | None = None) -> None:
        """Drop the warm workers (of one tool, or all)."""
        self.sandbox.forget(tool_name)

    # --- delegating to ``host.schedules`` while callers move to it -------------------

    def schedule(self, schedule_id: int, *, runs: int = 20) -> dict[str, Any]:
        return self.schedules.schedule(schedule_id, runs=runs)

    def runs(self, schedule_id: int | None = None, *, limit: int | None = 50,
             statuses: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        return self.schedules.runs(schedule_id, limit=limit, statuses=statuses)

    def run(self, run_id: int) -> dict[str, Any]:
        return self.schedules.run(run_id)

    def notifications(self, *, unread_only: bool = False, limit: int | None = 50) -> list[dict[str, Any]]:
        return self.schedules.notifications(unread_only=unread_only, limit=limit)

    def mark_notifications_read(self, ids: list[int] | None = None) -> int:
        return self.schedules.mark_notifications_read(ids)

    def scheduler_holder(self) -> dict[str, Any] | None:
        return self.schedules.scheduler_holder()

    def add_schedule(self, **fields: Any) -> dict[str, Any]:
        return self.schedules.add_schedule(**fields)

    def edit_schedule(self, schedule_id: int, **fields: Any) -> dict[str, Any]:
        return self.schedules.edit_schedule(schedule_id, **fields)

    def remove_schedule(self, schedule_id: int) -> bool:
        return self.schedules.remove_schedule(schedule_id)

    def pause_schedule(self, schedule_id: int) -> dict[str, Any]:
        return self.schedules.pause_schedule(schedule_id)

    def resume_schedule(self, schedule_id: int) -> dict[str, Any]:
        return self.schedules.resume_schedule(schedule_id)

    def card_grants(self, flags: list[str]) -> list[Any]:
        return self.schedules.card_grants(flags)

    def freeze_card(self, schedule: dict[str, Any]) -> dict[str, Any]:
        return self.schedules.freeze_card(schedule)

    async def run_schedule_now(self, schedule_id: int) -> dict[str, Any]:
        return await self.schedules.run_schedule_now(schedule_id)

    async def resume_run(self, run_id: int, *, approve: bool = False) -> dict[str, Any]:
        return await self.schedules.resume_run(run_id, approve=approve)

    def supervisor(self, *, refresh_extensions: bool = False) -> Any:
        return self.schedules.supervisor(refresh_extensions=refresh_extensions)

    @classmethod
    async def execute_run(cls, run_id: int, *, env: dict[str, str] | None = None,
                          out: Any = None) -> dict[str, Any]:
        """``Schedules.execute_run`` in a host of this class (the child process of a run)."""
        return await Schedules.execute_run(cls.open, run_id, env=env, out=out)


def _busy_message(session_id: str, lease: dict[str, Any]) -> str:
    since = time.strftime("%H:%M:%S", time.localtime(lease["taken_at"] / 1000))
    return (f"session {session_id[:12]} is in use: {lease['holder']} (pid {lease['owner_pid']}) "
            f"is running a turn in it since {since}")
