"""Scheduled prompts as the ``Host`` offers them: schedules, run cards, runs, the supervisor.

``Schedules`` is a service the ``Host`` builds and reaches as ``host.schedules``; its
dependencies are given to it in ``__init__`` and it keeps no state it did not declare
there. Both faces use its methods: ``workbench schedule|runs|daemon`` and the TUI's Tasks
screen. A schedule made here freezes its run card at once (model, extensions switched
on, grants approved, folder); one a tool proposed (saved by
``HostServices.schedule_prompt``) gets its card when a supervisor first sees it: that
host's model and extensions, no grants.

A run executes in a child process (``workbench runs exec ID``, see
``supervisor.launch``); ``execute_run`` is the child's side. It opens a host with the
card's model in the card's folder, applies the card to the run's session
(``scheduler.card.apply_card``) and answers every request with ``CardResponder``: a run
that needs more ends at once, ``failed`` or ``paused`` as the card says.

This module imports the scheduler and the supervisor; never a front-end, and never
``workbench.core.host``: the services it asks are handed in, typed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from workbench.core.host_tools import HOST_EXTENSION
from workbench.errors import ExitCode, WorkbenchError
from workbench.scheduler.card import CardGrant, CardResponder, RunCard, apply_card, grants_needed
from workbench.scheduler.arithmetic import next_after
from workbench.scheduler.planner import upcoming
from workbench.scheduler.shapes import check_schedule, describe, never_fires
from workbench.scheduler.zone import local_zone
from workbench.supervisor.launch import LaunchSettings, RunLauncher
from workbench.supervisor.lock import SchedulerLock
from workbench.supervisor.pools import WarmPool
from workbench.supervisor.process import die_with_parent
from workbench.store.runs import ENDED
from workbench.supervisor.supervisor import Supervisor, SupervisorSettings

if TYPE_CHECKING:
    from workbench.core.chats import Chats
    from workbench.core.grants import Grants
    from workbench.core.switches import Switches
    from workbench.config.home import Home
    from workbench.core.bus import EventBus
    from workbench.core.default_model import DefaultModel
    from workbench.core.loading import Loading
    from workbench.core.tool_service import ToolService
    from workbench.core.workspace import Workspace
    from workbench.store import Store

def _filled(text: str, what: str) -> str:
    if not text.strip():
        raise WorkbenchError(f"{what} cannot be empty", exit_code=ExitCode.USAGE)
    return text


def _checked(schedule: dict[str, Any], now: int) -> dict[str, Any]:
    shape = check_schedule(schedule)
    if shape["kind"] == "once" and shape["atMs"] <= now:
        raise WorkbenchError("that time has passed; a schedule that runs once needs a time to come",
                             exit_code=ExitCode.USAGE)
    return shape


def run_command(run_id: int) -> list[str]:
    """The command line that executes one run in a child process (``-P``: the run's
    folder is not put on the import path, so a ``workbench`` folder there is not run)."""
    return [sys.executable, "-P", "-m", "workbench", "runs", "exec", str(run_id)]


class Schedules:
    """The schedule operations; see the module docstring.

    Args:
        home: The home (its scheduler lock, its run logs).
        store: Where schedules, cards and runs are kept.
        bus: Where runs and the supervisor publish.
        workspace: The host's folder and config (a card's folder, the limits).
        default_model: A card's model when none is given.
        loading: The extensions loaded (a card's), reloaded before a run when asked.
        tools: A tool name resolved; the warm workers the supervisor's pool drops.
        grants: A card's grants, read from ``--grant`` flags.
        switches: The extensions a run's chat may switch.
        chats: A run's chat and its turn.
    """

    def __init__(self, *, home: Home, store: Store, bus: EventBus, workspace: Workspace,
                 default_model: DefaultModel, loading: Loading, tools: ToolService,
                 grants: Grants, switches: Switches, chats: Chats) -> None:
        self.home = home
        self.store = store
        self.bus = bus
        self.workspace = workspace
        self.default_model = default_model
        self.loading = loading
        self.tools = tools
        self.grants = grants
        self.switches = switches
        self.chats = chats
        self._supervisor: Supervisor | None = None
        self.plugin_tasks: Any = None
        """Plugins' scheduled actions (``core/plugin_tasks.py``), run in this process."""
        """The supervisor last made here (``supervisor``), woken when a schedule changes."""

    def __call__(self) -> list[dict[str, Any]]:
        """``list_schedules``, for callers that call ``host.schedules()``."""
        return self.list_schedules()

    # --- reading -------------------------------------------------------------

    def list_schedules(self) -> list[dict[str, Any]]:
        """Every schedule with its words, next time, run card, last run and failures."""
        summaries = self.store.run_summaries()
        return [self._present(row, summaries.get(row["id"])) for row in self.store.list_schedules()]

    def schedule(self, schedule_id: int, *, runs: int = 20) -> dict[str, Any]:
        """One schedule as ``schedules`` gives it, with its last ``runs`` runs.

        Raises:
            WorkbenchError: No such schedule.
        """
        row = self._schedule_row(schedule_id)
        shown = self._present(row, self.store.run_summaries().get(row["id"]))
        shown["runs"] = self.store.list_runs(schedule_id=row["id"], limit=runs)
        return shown

    def runs(self, schedule_id: int | None = None, *, limit: int | None = 50,
             statuses: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """Runs, newest first (of one schedule, of some statuses)."""
        return self.store.list_runs(schedule_id=schedule_id, statuses=statuses, limit=limit)

    def run(self, run_id: int) -> dict[str, Any]:
        """One run, with where its output was written.

        Raises:
            WorkbenchError: No such run.
        """
        found = self.store.get_run(run_id)
        if found is None:
            raise WorkbenchError(f"no run {run_id}; `workbench runs list` shows them")
        return {**found, "log": str(self._launcher().log_path(run_id))}

    def notifications(self, *, unread_only: bool = False, limit: int | None = 50) -> list[dict[str, Any]]:
        return self.store.list_notifications(unread_only=unread_only, limit=limit)

    def mark_notifications_read(self, ids: list[int] | None = None) -> int:
        return self.store.mark_notifications_read(ids)

    def scheduler_holder(self) -> dict[str, Any] | None:
        """Which process runs this home's scheduler (``pid``, ``host``, ``since``), if any."""
        holder = SchedulerLock(self._lock_path()).holder()
        return None if holder is None else holder.__dict__.copy()

    # --- changing ------------------------------------------------------------

    def add_schedule(self, *, title: str, instruction: str, schedule: dict[str, Any],
                     run_missed: bool = False, model: str | None = None,
                     extensions: list[str] | None = None, grants: list[CardGrant] = (),
                     on_need: str | None = None, source: str = "person") -> dict[str, Any]:
        """Save a schedule and freeze its run card.

        Args:
            title: Its name.
            instruction: The prompt each run sends.
            schedule: One of the shapes (``scheduler.shapes``).
            run_missed: Whether a window missed while nothing ran fires once later.
            model: The model runs use; this host's when None.
            extensions: The extensions switched on in runs; those loaded now when None.
            grants: Permissions approved for its runs (``card_grants`` reads flags).
            on_need: ``fail`` or ``pause`` when a run needs more; the setting when None.
            source: Who made it (``person``, or a tool's qualified name).

        Raises:
            WorkbenchError: The title, instruction or schedule is not valid.
        """
        _filled(title, "the title"), _filled(instruction, "the prompt")
        now = self.store.clock()
        shape = _checked(schedule, now)
        card = self._card(model=model, extensions=extensions, grants=tuple(grants), on_need=on_need)
        with self.store.transaction():
            schedule_id = self.store.add_scheduled_prompt(
                {"title": title.strip(), "instruction": instruction, "schedule": shape,
                 "runMissed": run_missed}, source=source)
            self.store.set_schedule_card(schedule_id, card.to_json())
            self._replan(schedule_id, shape, now, anchor=now)
        self.store.audit("person", "schedule.add", str(schedule_id), {"title": title})
        self._wake()
        return self.schedule(schedule_id)

    def edit_schedule(self, schedule_id: int, *, title: str | None = None,
                      instruction: str | None = None, schedule: dict[str, Any] | None = None,
                      run_missed: bool | None = None, model: str | None = None,
                      extensions: list[str] | None = None, add_grants: list[CardGrant] = (),
                      clear_grants: bool = False, on_need: str | None = None) -> dict[str, Any]:
        """Change a schedule or its card; a new schedule starts counting from now.

        Raises:
            WorkbenchError: No such schedule, or a value is not valid.
        """
        row = self._schedule_row(schedule_id)
        fields: dict[str, Any] = {"run_missed": run_missed}
        if title is not None:
            fields["title"] = _filled(title, "the title").strip()
        if instruction is not None:
            fields["instruction"] = _filled(instruction, "the prompt")
        fields = {name: value for name, value in fields.items() if value is not None}
        old = RunCard.from_json(row["card"]) if row["card"] else self._card()
        card = self._card(model=model or old.model, on_need=on_need or old.on_need,
                          extensions=extensions if extensions is not None else list(old.extensions),
                          grants=(() if clear_grants else old.grants) + tuple(add_grants), cwd=old.cwd)
        with self.store.transaction():
            if fields:
                self.store.update_schedule(row["id"], **fields)
            if schedule is not None:
                now = self.store.clock()
                self._replan(row["id"], _checked(schedule, now), now, anchor=now)
            self.store.set_schedule_card(row["id"], card.to_json())
        self.store.audit("person", "schedule.edit", str(row["id"]),
                         {"fields": sorted(fields) + (["schedule"] if schedule else []) + ["card"]})
        self._wake()
        return self.schedule(row["id"])

    def remove_schedule(self, schedule_id: int) -> bool:
        """Remove a schedule (its runs stay listed)."""
        removed = self.store.remove_scheduled_prompt(self._schedule_row(schedule_id)["id"])
        self.store.audit("person", "schedule.remove", str(schedule_id))
        return removed

    def pause_schedule(self, schedule_id: int) -> dict[str, Any]:
        """Stop firing a schedule until it is resumed."""
        row = self._schedule_row(schedule_id)
        self.store.update_schedule(row["id"], enabled=False)
        self.store.audit("person", "schedule.pause", str(row["id"]))
        return self.schedule(row["id"])

    def resume_schedule(self, schedule_id: int) -> dict[str, Any]:
        """Fire a paused schedule again; windows that passed while it was paused are not missed."""
        row = self._schedule_row(schedule_id)
        now = self.store.clock()
        with self.store.transaction():
            self.store.update_schedule(row["id"], enabled=True)
            self._replan(row["id"], check_schedule(row["schedule"]), now,
                         anchor=row["anchor_at"] or row["created_at"])
        self.store.audit("person", "schedule.resume", str(row["id"]))
        self._wake()
        return self.schedule(row["id"])

    def card_grants(self, flags: list[str]) -> list[CardGrant]:
        """Read ``TOOL:KIND[:VALUE]`` flags (``KIND`` alone: every entry of that kind the
        tool declares) into card grants.

        Raises:
            WorkbenchError: (usage) a flag names no tool, or a kind the tool does not declare.
        """
        found: list[CardGrant] = []
        for flag in flags:
            tool, sep, rest = flag.partition(":")
            if not sep or not rest:
                raise WorkbenchError(f"--grant {flag}: expected TOOL:KIND[:VALUE]",
                                     exit_code=ExitCode.USAGE)
            name = self.tools.resolve_name(tool)
            found += [CardGrant(name, kind, value)
                      for kind, value in self.grants.from_flags(name, [rest])]
        return found

    def freeze_card(self, schedule: dict[str, Any]) -> dict[str, Any]:
        """Give a schedule that has no run card (a tool's proposal) one: this host's model,
        the extensions loaded now, no grants."""
        card = self._card(frozen_by="supervisor")
        self.store.set_schedule_card(schedule["id"], card.to_json())
        self.store.audit("supervisor", "schedule.card", str(schedule["id"]), card.to_json())
        return card.to_json()

    # --- running -------------------------------------------------------------

    async def run_schedule_now(self, schedule_id: int) -> dict[str, Any]:
        """Run a schedule once, now, in a child process; returns the run's record."""
        row = self._schedule_row(schedule_id)
        if row["card"] is None and row.get("source") != "plugin":
            self.freeze_card(row)
        run_id = self.store.add_run(row["id"], row["title"], fired_by="manual", due_at=None)
        return await self._execute(run_id)

    async def resume_run(self, run_id: int, *, approve: bool = False) -> dict[str, Any]:
        """Continue a paused run in its session; with ``approve`` the permissions it
        needed join the schedule's card first (for this and every later run).

        Raises:
            WorkbenchError: No such run, it is not paused, or its schedule is gone.
        """
        run = self.run(run_id)
        if run["status"] != "paused":
            raise WorkbenchError(f"run {run_id} is {run['status']}; only a paused run can be resumed")
        row = self._schedule_row(run["schedule_id"]) if run["schedule_id"] else None
        if row is None:
            raise WorkbenchError(f"run {run_id}'s schedule was removed")
        if approve:
            needed = grants_needed(run["needs"])
            card = RunCard.from_json(row["card"]).with_grants(needed)
            self.store.set_schedule_card(row["id"], card.to_json())
            self.store.audit("person", "schedule.approve", str(row["id"]),
                             {"run_id": run_id, "grants": [g.__dict__ for g in needed]})
        new_id = self.store.add_run(row["id"], row["title"], fired_by="resume", due_at=None,
                                    session_id=run["session_id"], resumes=run_id)
        return await self._execute(new_id)

    def supervisor(self, *, refresh_extensions: bool = False) -> Supervisor:
        """The supervisor for this home, owning this host's warm-worker pool; run it with
        ``await supervisor.run(stop_event)`` (the daemon does, and the TUI can).

        Args:
            refresh_extensions: Reload the extensions before freezing a proposal's card,
                so one installed since this host started is switched on (the daemon's
                host runs no turns; a TUI's keeps its own registry current).
        """
        pool = WarmPool(f"pool:{os.getpid()}", self.tools.forget_workers, publish=self.bus.publish)
        self.bus.subscribe(pool.track)
        self._supervisor = Supervisor(
            store=self.store, lock=SchedulerLock(self._lock_path()), launcher=self._launcher(),
            settings=SupervisorSettings(
                idle_stop_s=self.workspace.config.settings.sandbox.idle_stop_s,
                grace_ms=int(self.workspace.config.settings.schedule.missed_after_s * 1000),
                max_parallel=self.workspace.config.settings.schedule.max_parallel),
            publish=self.bus.publish, clock=self.store.clock, pools=[pool],
            prepare=lambda row: (refresh_extensions and self.loading.reload(),
                                 self.freeze_card(row)),
            actions=self.plugin_tasks)
        return self._supervisor

    @staticmethod
    async def execute_run(open_host: Callable[..., Any], run_id: int, *,
                          env: dict[str, str] | None = None,
                          out: IO[str] | None = None) -> dict[str, Any]:
        """The child process's side of run ``run_id``: run its turn under its card and
        record the outcome; see the module docstring. Events go to ``out`` as JSON lines.

        Args:
            open_host: Opens the host the run's turn runs in (``Host.open``).
        """
        from workbench.config.home import Home
        from workbench.store import Store

        env = dict(os.environ if env is None else env)
        if not die_with_parent(env):
            raise WorkbenchError("the supervisor that started this run is gone")
        home = Home.resolve(env).ensure()
        with Store.open(home.db_path) as store:
            run = store.get_run(run_id)
            row = store.get_schedule(run["schedule_id"]) if run and run["schedule_id"] else None
            if run is None or run["status"] != "running":
                raise WorkbenchError(f"run {run_id} is not running; `workbench runs show {run_id}`")
            if row is None or row["card"] is None:
                store.finish_run(run_id, "failed", error="its schedule (and run card) is gone",
                                 only_if=("running",))
                return store.get_run(run_id)
        card = RunCard.from_json(row["card"])
        cwd = Path(card.cwd) if card.cwd and Path(card.cwd).is_dir() else home.root
        responder = CardResponder()
        try:
            host = open_host(cwd=cwd, model=card.model, responder=responder, env=env)
        except WorkbenchError as exc:
            with Store.open(home.db_path) as store:
                store.finish_run(run_id, "failed", error=f"could not start: {exc}", only_if=("running",))
                return store.get_run(run_id)
        async with host:
            return await host.schedules.run_turn(run, row, card, responder, out or sys.stdout)

    async def run_turn(self, run: dict[str, Any], row: dict[str, Any], card: RunCard,
                        responder: CardResponder, out: IO[str]) -> dict[str, Any]:
        """Run ``run``'s turn in this host under ``card``, record its outcome, and return
        the run's record (``execute_run`` calls it in the child process)."""
        session_id = run["session_id"]
        if session_id is None or self.store.get_session(session_id) is None:
            session_id = self.chats.new(title=f"⏱ {row['title']}")["id"]
            self.store.set_run_session(run["id"], session_id)
        await asyncio.to_thread(self.loading.ensure)
        apply_card(self.store, session_id, card, always_on=HOST_EXTENSION,
                   known=self.switches.known_extensions(), default_off=self._defaults_off())
        # The run's chat keeps the card's model and folder, even one resumed after an edit.
        self.store.set_session_model(session_id, card.model)
        self.store.set_session_folder(session_id, str(self.workspace.folder))
        loop = asyncio.get_running_loop()

        def end_now(need: dict[str, Any]) -> None:
            # The first need ends the run: its turn is cancelled, nothing waits.
            if len(responder.needs) == 1:
                loop.call_soon(self.chats.cancel)

        def watch(event: Any) -> None:
            out.write(json.dumps(event.to_json(), default=str, ensure_ascii=False) + "\n")
            out.flush()
            responder.observe(event)

        responder.on_need = end_now
        unsubscribe = self.bus.subscribe(watch)
        try:
            result = await self.chats.send_prompt(row["instruction"], session_id)
        finally:
            unsubscribe()
        status, error = responder.outcome(on_need=card.on_need, run_id=run["id"],
                                          turn_status=result.status, turn_error=result.error)
        self.store.finish_run(run["id"], status, error=error, result=(result.text or "")[:4000],
                              needs=responder.needs or None, only_if=("running",))
        return self.store.get_run(run["id"])

    # --- inside --------------------------------------------------------------

    def _lock_path(self) -> Path:
        return self.home.root / "scheduler.lock"

    def _launcher(self) -> RunLauncher:
        return RunLauncher(
            store=self.store, command=run_command,
            env={**os.environ, "WORKBENCH_HOME": str(self.home.root)},
            logs=self.home.logs_dir / "runs",
            settings=LaunchSettings(daily_limit=self.workspace.config.settings.schedule.daily_limit,
                                    timeout_s=self.workspace.config.settings.schedule.run_timeout_s),
            publish=self.bus.publish, clock=self.store.clock)

    async def _execute(self, run_id: int) -> dict[str, Any]:
        pending = self.store.get_run(run_id) or {}
        if self.plugin_tasks is not None and self.plugin_tasks.handles(pending):
            run = await self.plugin_tasks.execute(run_id)
        else:
            run = await self._launcher().execute(run_id)
        # A running supervisor may have taken the run first: wait for its outcome.
        while run.get("status") not in ENDED:
            await asyncio.sleep(0.2)
            run = self.store.get_run(run_id) or {}
        return run

    def _wake(self) -> None:
        if self._supervisor is not None:
            self._supervisor.wake()

    def _defaults_off(self) -> frozenset[str]:
        """The extensions a chat has off until switched on (the first-party add-ons)."""
        return self.switches.defaults_off() if self.switches is not None else frozenset()

    def _card(self, *, model: str | None = None, extensions: list[str] | None = None,
              grants: tuple[CardGrant, ...] = (), on_need: str | None = None,
              cwd: str | None = None, frozen_by: str = "person") -> RunCard:
        if extensions is None:
            self.loading.ensure()
            # A first-party add-on is in a run only when the schedule names it.
            extensions = sorted({entry["name"] for entry in self.loading.extensions}
                                - self._defaults_off())
        try:
            card = RunCard(model=model or self.default_model.spec, extensions=tuple(extensions),
                           on_need=on_need or self.workspace.config.settings.schedule.on_need,
                           cwd=cwd or str(self.workspace.folder), frozen_at=self.store.clock(), frozen_by=frozen_by)
        except ValueError as exc:
            raise WorkbenchError(str(exc), exit_code=ExitCode.USAGE) from None
        return card.with_grants(grants)

    def _replan(self, schedule_id: int, shape: dict[str, Any], now: int, *, anchor: int) -> None:
        """Count the schedule from now: nothing before ``now`` is due or missed."""
        self.store.update_schedule(schedule_id, schedule=shape, anchor_at=anchor, last_due_at=now,
                                   next_due_at=next_after(shape, now, anchor=anchor, zone=local_zone()))

    def _schedule_row(self, schedule_id: int) -> dict[str, Any]:
        row = self.store.get_schedule(int(schedule_id))
        if row is None:
            raise WorkbenchError(f"no schedule {schedule_id}; `workbench schedule list` shows them")
        return row

    def _present(self, row: dict[str, Any], summary: dict[str, Any] | None) -> dict[str, Any]:
        zone = local_zone()
        return {**row, "next_due_at": upcoming(row, zone), "description": describe(row["schedule"], zone),
                "never": never_fires(row["schedule"]),
                "last_run": (summary or {}).get("last_run"), "failures": (summary or {}).get("failures", 0)}
