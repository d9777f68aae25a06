"""The chats: sessions, their turns, and each chat's model and folder.

``Chats`` is a service the ``Host`` builds and reaches as ``host.chats``. A chat keeps
its model spec and its project folder (``sessions.model`` and ``sessions.folder``): a
resumed chat talks to its own model and works in its own folder — the host moves there
(``host.folder.enter``), with that folder's config and project extensions — whatever
the host was opened with. ``set_model`` changes a chat's model; a spec that names no
model is refused with what is known. One turn at a time runs in a session, across
processes (the session's lease).

It must not import a front-end.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.agent.history import Histories
from workbench.agent.loop import TurnLoop, TurnResult
from workbench.agent.messages import ToolCall, ToolSpec, new_call_id
from workbench.core.gateway import CallOptions, ToolOutcome
from workbench.core.providers import names_builtin
from workbench.core.sessions import SessionRow, find_session
from workbench.errors import SessionBusyError, ToolError, WorkbenchError
from workbench.events import Notice, SessionStarted
from workbench.hooks.dispatch import CONTEXT_LABEL
from workbench.tools.disclosure import BRIDGE_TOOLS, disclose, is_on_demand

if TYPE_CHECKING:
    from workbench.agent.providers import ModelProvider
    from workbench.core.bus import EventBus
    from workbench.core.default_model import DefaultModel
    from workbench.core.folder_service import FolderService
    from workbench.core.loading import Loading
    from workbench.core.gateway import ToolGateway
    from workbench.core.hook_runtime import HookRuntime
    from workbench.core.memory_service import MemoryService
    from workbench.core.providers import Providers
    from workbench.core.switches import Switches
    from workbench.core.workspace import Workspace
    from workbench.store import Store
    from workbench.tools.registry import Tool, ToolRegistry

LEASE_POLL_S = 0.2
"""How often a turn waiting for its session looks whether the other turn ended."""


def _holder_name() -> str:
    """What this process is, as another process waiting for a session is told."""
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    return f"workbench {command}" if command.isidentifier() else "workbench"


class RunningTurn:
    """The turn a host is running, if any: what ``Chats`` runs and cancels, and what an
    extension change or a move to another folder waits for (``busy``)."""

    def __init__(self) -> None:
        self.task: asyncio.Future | None = None
        """The running turn (or its wait for the session's lease); None between turns."""

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self.task is not None and not self.task.done()

    def cancel(self) -> bool:
        """Cancel the running turn; returns whether there was one."""
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            return True
        return False


class Chats:
    """The sessions of one host and their turns; see the module docstring.

    Args:
        store: Where sessions, messages and leases are kept.
        bus: Where a turn's events are published.
        registry: The tools loaded (whether one may run beside others).
        gateway: Runs the tool calls (and cancels one).
        hook_runtime: The hooks a turn runs (session start, agent start and end).
        switches: What each chat switched off (the tools it offers, its calls).
        memories: What a turn is shown of the memories.
        providers: The models specs name.
        workspace: The host's folder (a new chat's) and config (the schema budget).
        default_model: The model of a chat that keeps none.
        folders: Moves the host to a chat's folder.
        loading: Loads the tool sources first when they are not yet.
        turn: The turn running.
    """

    def __init__(self, *, store: Store, bus: EventBus, registry: ToolRegistry,
                 gateway: ToolGateway, hook_runtime: HookRuntime, switches: Switches,
                 memories: MemoryService, providers: Providers, workspace: Workspace,
                 default_model: DefaultModel, folders: FolderService, loading: Loading,
                 turn: RunningTurn) -> None:
        self.store = store
        self.bus = bus
        self.registry = registry
        self.gateway = gateway
        self.hook_runtime = hook_runtime
        self.switches = switches
        self.memories = memories
        self.providers = providers
        self.workspace = workspace
        self.default_model = default_model
        self.folders = folders
        self.loading = loading
        self.turn = turn
        self.histories = Histories(store)
        """The histories turns hand the model, read once and then only what was added."""
        self.turn_holder = _holder_name()
        """What holds a session's lease during this host's turns, as others are told."""

    # --- sessions ----------------------------------------------------------

    def new(self, title: str | None = None) -> dict[str, Any]:
        """Start a chat in the host's folder: with the host's model as its own when it was
        chosen (``--model``), else following the default (``core/chat_models.py``)."""
        session = self.store.create_session(
            title=title, model=self.default_model.spec if self.default_model.chosen else None,
            folder=str(self.workspace.folder))
        self.bus.publish(SessionStarted(session_id=session["id"]))
        return session

    def get(self, session_id: str) -> dict[str, Any]:
        """The session ``session_id`` (or a unique prefix of it).

        Raises:
            WorkbenchError: No such session.
        """
        return find_session(self.store, session_id)

    def sessions(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The sessions as the store keeps them, most recently active first."""
        return self.store.list_sessions(limit=limit)

    def rows(self, limit: int | None = None) -> list[SessionRow]:
        """The sessions as a list of chats shows them (``sessions list``, the TUI's
        sessions screen), most recently active first."""
        return [SessionRow.of(session) for session in self.sessions(limit=limit)]

    def folder(self, session_id: str | None) -> Path:
        """The project folder of the chat ``session_id`` (the host's folder without one,
        or for a chat that keeps none)."""
        found = self.store.get_session(session_id) if session_id else None
        return Path(found["folder"]) if found and found.get("folder") else self.workspace.folder

    def call_log(self, call_id: str) -> list[dict[str, Any]]:
        """The lines a call's tool logged (``ctx.log``), in order: ``{at, level, message}``."""
        return self.store.tool_call_log(call_id)

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        return self.store.list_messages(self.get(session_id)["id"])

    def call_displays(self, session_id: str) -> dict[str, list[dict[str, Any]]]:
        """The display bubbles the tools of the session's calls showed, by our call id:
        ``{display, payload}`` each, in order (a resumed chat shows them again)."""
        return self.store.session_displays(self.get(session_id)["id"])

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
            session_id = self.new(title=text[:60])["id"]
        else:
            session_id = (await asyncio.to_thread(self.enter, session_id))["id"]
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

        waiting = self.turn.task = asyncio.ensure_future(wait_for_it())
        try:
            await waiting
        except asyncio.CancelledError:
            if waiting.cancelled():
                return False
            raise
        finally:
            self.turn.task = None
        return True

    async def run_hidden(self, text: str, session_id: str, *, tools: frozenset[str]) -> TurnResult:
        """One turn in a hidden session made for it (a plugin's agent run, in a fresh
        session the caller made and hid), offered ``tools`` alone and refused any other
        the model names. It runs beside the person's turn (it is not the host's running
        turn: ``cancel`` does not stop it), through the same loop and gateway.

        Raises:
            SessionBusyError: Something else holds the session (never, for a new one).
        """
        token = uuid.uuid4().hex
        await self._hold_session(session_id, token, False)
        try:
            return await self._turn_holding_lease(text, session_id, False, only=tools)
        finally:
            self.store.release_lease(session_id, token)

    async def _turn_holding_lease(self, text: str, session_id: str, resumed: bool,
                                  only: frozenset[str] | None = None) -> TurnResult:
        """The turn itself, holding the session's lease (with ``only``: a hidden run's,
        offered those tools alone, and not the host's running turn)."""
        await asyncio.to_thread(self.loading.ensure)
        provider = self.provider(session_id)
        context = await self.hook_runtime.session_start(session_id, resumed=resumed)
        if context:
            # A hidden message, before the first prompt, in model context and history.
            self.store.add_message(session_id, "system", content=f"{CONTEXT_LABEL}\n{context}",
                                   name="hook_context")
        self.hook_runtime.observe("on_agent_start", {"session_id": session_id})

        async def call_tool(call: ToolCall, user_message: str) -> ToolOutcome:
            if only is not None and call.name not in only:
                options = CallOptions(caller="model", session_id=session_id, user_message=user_message,
                                      model_call_id=call.id, message_id=call.message_id)
                return self.gateway.refused(call.call_id or new_call_id(), call.name, call.arguments, options,
                                            ToolError("not_found", f"{call.name!r} is not a tool of this run"))
            return await self.call_for_model(session_id, call.name, call.arguments,
                                             user_message=user_message, call_id=call.call_id,
                                             model_call_id=call.id, message_id=call.message_id)

        # The tools are ranked for this turn's message; the memories are put before the
        # history at each step, never stored, so they are always the current ones.
        loop = TurnLoop(store=self.store, provider=provider, publish=self.bus.publish,
                        call_tool=call_tool,
                        tools=(lambda: self.tool_specs(session_id, message=text)) if only is None else (
                            lambda: [ToolSpec(t.name, t.description, t.parameters)
                                     for t in self.switches.tools(session_id) if t.name in only]),
                        parallel_safe=self._parallel_safe,
                        system_context=lambda: self.memories.context_messages(session_id),
                        read_history=self.histories.of)
        running = asyncio.ensure_future(loop.run(session_id, text))
        if only is None:
            self.turn.task = running
        try:
            return await running
        except asyncio.CancelledError:
            if running.cancelled():
                return TurnResult(session_id, "cancelled", "")
            raise
        finally:
            if only is None:
                self.turn.task = None
            self.hook_runtime.observe("on_agent_end", lambda: {
                "session_id": session_id, "messages": self.store.recent_messages(session_id, 20)})

    async def call_for_model(self, session_id: str | None, name: str, arguments: Any, *,
                             user_message: str = "", call_id: str | None = None,
                             model_call_id: str | None = None,
                             message_id: int | None = None) -> ToolOutcome:
        """Make a call the model asked for — directly or through ``tool_invoke`` — in the
        chat ``session_id`` with the caller ``model``, as the chat sees its tools
        (``Switches.call``: a tool it switched off is refused). ``call_id`` is ours; the
        model's id and its message are kept in the record as data."""
        options = CallOptions(caller="model", session_id=session_id, user_message=user_message,
                              model_call_id=model_call_id, message_id=message_id)
        return await self.switches.call(name, arguments, options, call_id=call_id)

    def _parallel_safe(self, name: str) -> bool:
        try:
            return self.registry.resolve(name).parallel_safe
        except WorkbenchError:
            return False

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self.turn.busy

    def disk_full(self, exc: BaseException) -> tuple[str, Path] | None:
        """When ``exc`` (a prompt that could not be sent) says the disk holding the store
        is full: what the failing write said and where the store is; None otherwise."""
        said = self.store.disk_full(exc)
        return None if said is None else (said, Path(self.store.path))

    def cancel(self) -> bool:
        """Cancel the running turn; returns whether there was one."""
        return self.turn.cancel()

    def cancel_call(self, call_id: str) -> bool:
        """Cancel one running tool call (by our id, as events name it); the rest of its
        turn goes on.

        The tool sees the cancellation and the model gets an error result of kind
        ``cancelled`` for that call. Returns whether the call was running.
        """
        return self.gateway.cancel_call(call_id)


    # --- each chat's model and folder ---------------------------------------------

    def talks_to(self, session_id: str | None) -> ModelProvider:
        """The model a tool's ``llm.complete`` reaches: its chat's, else the default."""
        return self.provider(session_id) if session_id else self.default_model.provider()

    def provider(self, session_id: str) -> ModelProvider:
        """The model the chat ``session_id`` talks to: its own spec (the host's model for
        a chat that has none), built once per spec and folder."""
        spec = self.model(session_id)
        if not names_builtin(spec):
            # An extension's: built for this chat (its grants, its switches), or refused.
            return self.providers.build(spec, session_id)
        if spec == self.default_model.spec:
            return self.default_model.provider()
        return self.providers.cached(spec)

    def model(self, session_id: str) -> str:
        """The chat's model spec; the host's for a chat that keeps none."""
        return self.get(session_id).get("model") or self.default_model.spec

    def set_model(self, session_id: str, spec: str) -> dict[str, Any]:
        """Make the chat ``session_id`` talk to ``spec`` from its next turn on (kept with
        the chat). A relative ``scripted:`` path is read from the chat's folder.

        Returns:
            The session as it is now.

        Raises:
            WorkbenchError: No such session, or (usage) a spec that names no model.
        """
        session = self.get(session_id)
        folder = Path(session["folder"]) if session.get("folder") else self.workspace.folder
        spec = self.providers.check_spec(spec, cwd=folder)
        self.store.set_session_model(session["id"], spec)
        self.store.audit("person", "session.model", session["id"],
                         {"from": session.get("model"), "to": spec})
        return self.get(session["id"])

    def enter(self, session_id: str) -> dict[str, Any]:
        """Resume the chat ``session_id`` here: the host moves to the chat's folder (see
        ``host.folder.enter``) unless it is already there.

        Returns:
            The session.

        Raises:
            WorkbenchError: No such session, or a turn is running in another folder.
        """
        session = self.get(session_id)
        if session.get("folder"):
            self.folders.enter(Path(session["folder"]), why=f"session {session['id'][:12]}")
        return session


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
        session_id = self.get(session_id)["id"] if session_id else None
        if message is None:
            message = self.store.last_user_message(session_id) if session_id else ""
        every = self.switches.tools(session_id, on_demand=True)
        on_demand = {t.name: t for t in every if is_on_demand(t)}
        bridge = [on_demand[name] for name in BRIDGE_TOOLS if name in on_demand]
        plan = disclose([t for t in every if not is_on_demand(t)], message or "",
                        self.workspace.config.settings.tools.schema_token_budget, bridge=bridge)
        offered: list[Tool | None] = [*plan.offered, *(bridge if plan.active else [])]
        if self.memories.has(session_id) or self.providers.answer_memory(session_id):
            offered.append(on_demand.get("memory_search"))
        if self.memories.has(session_id, "skill"):
            offered += [on_demand.get("skill_load"), on_demand.get("skill_file")]
        return [ToolSpec(t.name, t.description, t.parameters) for t in offered if t is not None]


def _busy_message(session_id: str, lease: dict[str, Any]) -> str:
    since = time.strftime("%H:%M:%S", time.localtime(lease["taken_at"] / 1000))
    return (f"session {session_id[:12]} is in use: {lease['holder']} (pid {lease['owner_pid']}) "
            f"is running a turn in it since {since}")
