"""The scheduler loop: one per home, firing due runs within a second of their time.

``Supervisor.run`` takes the home's scheduler lock — or, when another process
holds it, says who and stands by (BACKOFF) until it is free — then:

1. recovers from a crash: a run still marked running whose owner is gone was
   interrupted, and is recorded ``interrupted`` (its leftover processes killed;
   ``settle_runs``, which every host also does when it opens, so `runs list` says so
   whoever looks first); a run that was due but had not started stays pending and
   runs once;
2. at each tick settles every due schedule (``scheduler.planner``: fire, or settle
   missed windows by ``runMissed``), starts pending runs (one at a time per
   schedule, at most ``max_parallel`` at once) and stops idle warm-worker pools;
3. sleeps until the soonest next window, or at most ``poll_s`` (schedules made by
   another process are seen within that);
4. on stop, lets running runs finish for ``stop_grace_s``, then kills them (recorded
   failed), and lets the lock go.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from workbench.config.settings import DEFAULTS
from workbench.events import NotificationPosted, ProcessStateChanged, ScheduleRunEnded
from workbench.scheduler.planner import GRACE_MS, plan, settled_until
from workbench.scheduler.shapes import ScheduleError, check_schedule
from workbench.scheduler.zone import local_zone
from workbench.states import ProcessState, Stateful
from workbench.store.owners import owner_alive
from workbench.supervisor.launch import RunLauncher, notify
from workbench.supervisor.lock import Holder, SchedulerLock
from workbench.supervisor.pools import WarmPool
from workbench.supervisor.proctree import alive, kill_tree

log = logging.getLogger(__name__)

RECOVER_EVERY_MS = 30_000
"""How often a running supervisor looks for runs whose owner died."""


@dataclass(frozen=True)
class SupervisorSettings:
    """How the loop behaves (the run limits are the launcher's)."""

    idle_stop_s: float = DEFAULTS.sandbox.idle_stop_s
    grace_ms: int = GRACE_MS
    """How late a window may be seen and still be on time, not missed."""
    max_parallel: int = DEFAULTS.schedule.max_parallel
    poll_s: float = 0.5
    stop_grace_s: float = 5.0


class Supervisor(Stateful):
    """See the module docstring.

    Args:
        store: The home's store.
        lock: The home's scheduler lock.
        launcher: Starts and records runs.
        settings: The loop's settings.
        publish: Receives the events.
        clock: Unix milliseconds now.
        zone: The local zone now (looked up at each tick: the host's zone may change).
        prepare: Called with a schedule that has no run card yet, to freeze one.
        pools: Warm-worker pools to stop when idle.
        actions: Plugins' scheduled actions, run here rather than in a child.
    """

    name = "scheduler"

    def __init__(self, *, store, lock: SchedulerLock, launcher: RunLauncher,
                 settings: SupervisorSettings, publish: Callable[[Any], None],
                 clock: Callable[[], int], zone: Callable[[], dt.tzinfo] = local_zone,
                 prepare: Callable[[dict[str, Any]], None] | None = None,
                 pools: Iterable[WarmPool] = (), actions: Any = None) -> None:
        self.store = store
        self.actions = actions
        """Executes the runs of plugins' tasks in this process (``core/plugin_tasks.py``:
        ``handles(run)``, ``execute(run_id)``); None: every run is a child process."""
        self.lock = lock
        self.launcher = launcher
        self.settings = settings
        self.publish = publish
        self.clock = clock
        self.zone = zone
        self.prepare = prepare
        self.pools = list(pools)
        self.active: dict[int, tuple[int | None, asyncio.Task]] = {}
        self._wake: asyncio.Event | None = None
        self._recovered_at = 0
        self._retry_at: dict[int, int] = {}

    def on_state_change(self, old: ProcessState, new: ProcessState, reason: str) -> None:
        log.info("scheduler: %s → %s %s", old.name, new.name, reason)
        self.publish(ProcessStateChanged(name=self.name, old=old.value, new=new.value,
                                         pid=os.getpid(), reason=reason))

    def holder(self) -> Holder | None:
        """Who holds this home's scheduler lock (this process, when it runs the loop)."""
        return self.lock.holder()

    def wake(self) -> None:
        """Look at the schedules now rather than at the next poll (after a change)."""
        if self._wake is not None:
            self._wake.set()

    # --- the loop ------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Run until ``stop`` is set; see the module docstring."""
        self._wake = asyncio.Event()
        self.change_state(ProcessState.STARTING, "taking the scheduler lock")
        while not self.lock.acquire():
            if self.state is ProcessState.STARTING:
                holder = self.lock.holder()
                held = holder.describe() if holder else "another process"
                self.change_state(ProcessState.BACKOFF, f"standing by: the scheduler of this home "
                                  f"is held by {held}")
            if await _wait_any(stop, None, self.settings.poll_s):
                self.change_state(ProcessState.STOPPED, "stopped while standing by")
                return
        if self.state is ProcessState.BACKOFF:
            self.change_state(ProcessState.STARTING, "the scheduler lock was freed")
        try:
            self.recover(at_start=True)
            self.change_state(ProcessState.RUNNING, f"holding the scheduler lock ({self.lock.path})")
            while not stop.is_set():
                delay = self.settings.poll_s
                try:
                    await self.tick()
                    delay = self._delay()
                except Exception:  # e.g. the store busy for too long: try again next tick
                    log.exception("a scheduler tick failed")
                await _wait_any(stop, self._wake, delay)
                self._wake.clear()
        finally:
            if self.state is not ProcessState.STOPPING:
                self.change_state(ProcessState.STOPPING, "stop requested")
            await self._stop_runs()
            self.lock.release()
            self.change_state(ProcessState.STOPPED, "the scheduler lock was released")

    def _delay(self) -> float:
        """Until the soonest window, at most ``poll_s``. A window already past after a tick
        is one that failed to settle (retried later), not a reason to spin."""
        soonest = self.store.soonest_due()
        now = self.clock()
        if soonest is None or soonest <= now:
            return self.settings.poll_s
        return min(self.settings.poll_s, (soonest - now) / 1000)

    async def _stop_runs(self) -> None:
        tasks = [task for _, task in self.active.values()]
        if tasks:
            _, left = await asyncio.wait(tasks, timeout=self.settings.stop_grace_s)
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)

    async def tick(self) -> None:
        """Settle due schedules, start pending runs, stop idle pools; now and then, fail
        the runs of a process that died meanwhile (a `run-now` killed in its terminal)."""
        now = self.clock()
        zone = self.zone()
        if now - self._recovered_at >= RECOVER_EVERY_MS:
            self.recover()
        for schedule in self.store.list_schedules(due_by=now):
            if self._retry_at.get(schedule["id"], 0) > now:
                continue
            try:
                self._settle(schedule, now, zone)
            except Exception:  # one schedule's trouble (its card could not be frozen…)
                log.exception("schedule %s could not be settled; trying again in a minute",
                              schedule["id"])
                self._retry_at[schedule["id"]] = now + 60_000
        self._start_pending()
        for pool in self.pools:
            pool.stop_if_idle(self.settings.idle_stop_s)

    # --- settling windows ----------------------------------------------------

    def _settle(self, schedule: dict[str, Any], now: int, zone: dt.tzinfo) -> None:
        if schedule["card"] is None and self.prepare is not None and schedule.get("source") != "plugin":
            self.prepare(schedule)
        try:
            shape = check_schedule(schedule["schedule"])
        except ScheduleError as exc:
            self.store.update_schedule(schedule["id"], enabled=False, last_due_at=now, next_due_at=None)
            title = f"Schedule paused: {schedule['title']}"
            body = f"its schedule cannot be read ({exc}); edit it to resume it"
            notification = self.store.add_notification("error", title, body, source="scheduler")
            self.publish(NotificationPosted(id=notification, level="error", title=title, body=body,
                                            source="scheduler"))
            return
        last_due, anchor = settled_until(schedule)
        decision = plan(shape, last_due=last_due, anchor=anchor, now=now,
                        run_missed=schedule["run_missed"], zone=zone, grace=self.settings.grace_ms)
        skipped: list[int] = []
        with self.store.transaction():
            if decision.skipped_from is not None:
                skipped.append(self.store.add_run(
                    schedule["id"], schedule["title"], fired_by="missed", due_at=decision.skipped_from,
                    status="skipped", error="skipped: missed while nothing ran, and runMissed is off"))
            if decision.fire is not None:
                if self.store.list_runs(schedule_id=schedule["id"], statuses=("pending",), limit=1):
                    skipped.append(self.store.add_run(
                        schedule["id"], schedule["title"], fired_by=decision.fired_by,
                        due_at=decision.fire, status="skipped",
                        error="skipped: the run of an earlier window had not started yet"))
                else:
                    self.store.add_run(schedule["id"], schedule["title"], fired_by=decision.fired_by,
                                       due_at=decision.fire)
            self.store.update_schedule(schedule["id"], last_due_at=decision.handled_until,
                                       next_due_at=decision.next_due)
        for run_id in skipped:
            run = self.store.get_run(run_id)
            self.publish(ScheduleRunEnded(run_id=run_id, schedule_id=run["schedule_id"],
                                          title=run["title"], status="skipped", error=run["error"]))

    def _start_pending(self) -> None:
        busy = {schedule_id for schedule_id, _ in self.active.values()}
        for run in reversed(self.store.list_runs(statuses=("pending",), limit=None)):
            if len(self.active) >= self.settings.max_parallel:
                return
            if run["id"] in self.active or run["schedule_id"] in busy:
                continue
            schedule = self.store.get_schedule(run["schedule_id"]) if run["schedule_id"] else None
            if schedule is None or (not schedule["enabled"] and run["fired_by"] != "manual"):
                why = "removed" if schedule is None else "paused"
                self.store.finish_run(run["id"], "skipped", only_if=("pending",),
                                      error=f"skipped: the schedule was {why} before the run started")
                continue
            busy.add(run["schedule_id"])
            task = asyncio.ensure_future(self._execute(run["id"]))
            self.active[run["id"]] = (run["schedule_id"], task)

    async def _execute(self, run_id: int) -> None:
        try:
            run = self.store.get_run(run_id) or {}
            if self.actions is not None and self.actions.handles(run):
                await self.actions.execute(run_id)  # a plugin's action: called from here
            else:
                await self.launcher.execute(run_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("run %s could not be supervised", run_id)
            self.store.finish_run(run_id, "failed", only_if=("pending", "running"),
                                  error="the supervisor could not run it (see its log)")
        finally:
            self.active.pop(run_id, None)
            self.wake()

    # --- crash recovery ----------------------------------------------------------

    def recover(self, *, at_start: bool = False) -> list[int]:
        """Record as interrupted the runs a dead owner left running; returns their ids.

        Args:
            at_start: Before this supervisor started anything (a run recorded under
                this process's pid, with no process start to tell, is then a dead
                one's whose pid was reused).
        """
        self._recovered_at = self.clock()
        mine = set(self.active) if at_start else set(self.active) | self._owned_here()
        return settle_runs(self.store, self.publish, skip=mine)

    def _owned_here(self) -> set[int]:
        return {run["id"] for run in self.store.list_runs(statuses=("running",), limit=None)
                if run["owner"] == self.launcher.owner}


def settle_runs(store, publish: Callable[[Any], None], *,
                skip: Iterable[int] = ()) -> list[int]:
    """Record ``interrupted`` every run left running by an owner that is gone (its
    leftover processes killed, its end published and notified); returns their ids.

    An owner is gone when its process is: checked by pid and process start when the run
    recorded it (any process may look), else by pid and command line on this host.

    Args:
        store: The home's store.
        publish: Receives the ``ScheduleRunEnded`` events and notices.
        skip: Runs to leave alone (this supervisor's own).
    """
    settled = []
    skipped = set(skip)
    for run in store.list_runs(statuses=("running",), limit=None):
        owner = run["owner"] or "an unknown process"
        if run["id"] in skipped or _owner_alive(owner, run.get("owner_start")):
            continue  # e.g. `schedule run-now` in a terminal: it records its own run
        if run["pid"] and alive(run["pid"]) and _runs(run["pid"], run["id"]):
            kill_tree(run["pid"])
        error = f"interrupted: the process that ran it ({owner}) stopped during the run"
        if store.finish_run(run["id"], "interrupted", error=error, only_if=("running",)):
            settled.append(run["id"])
            ended = store.get_run(run["id"])
            publish(ScheduleRunEnded(run_id=ended["id"], schedule_id=ended["schedule_id"],
                                     title=ended["title"], status="interrupted", error=error,
                                     session_id=ended["session_id"]))
            notify(store, publish, ended)
    return settled


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _owner_alive(owner: str, start: str | None = None) -> bool:
    pid, _, host = owner.partition("@")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    if start:
        return owner_alive(int(pid), start)
    if int(pid) == os.getpid():
        return False  # recorded before process starts were: a dead one's, pid reused
    return alive(int(pid)) and b"workbench" in _cmdline(int(pid))


def _runs(pid: int, run_id: int) -> bool:
    """Whether ``pid`` is the child process of run ``run_id`` (not a reused pid)."""
    parts = _cmdline(pid).split(b"\0")
    return b"exec" in parts and str(run_id).encode() in parts


async def _wait_any(stop: asyncio.Event, wake: asyncio.Event | None, timeout: float) -> bool:
    """Wait for ``stop`` or ``wake`` at most ``timeout`` seconds; returns whether to stop."""
    waiters = [asyncio.ensure_future(stop.wait())]
    if wake is not None:
        waiters.append(asyncio.ensure_future(wake.wait()))
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    return stop.is_set()
