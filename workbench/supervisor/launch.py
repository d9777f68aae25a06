"""Running one recorded run: the daily limit, its child process, its time limit, its record.

A run executes in a child process (the command the core injects, ``workbench runs
exec ID``): a crash of the run cannot take the supervisor down, and a run that
wedges past its time limit is killed with everything it started. The child
records its own outcome (``ok``, ``failed`` or ``paused``, with its session and what
it needed); this side records what the child could not: a refusal by the daily
limit, a start that failed, a time-out, an exit without an outcome, a stop of the
supervisor. A run that ends other than ``ok`` posts a notification.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.config.settings import DEFAULTS
from workbench.events import Notice, NotificationPosted, ScheduleFired, ScheduleRunEnded
from workbench.states import ProcessState
from workbench.store.owners import this_process
from workbench.supervisor.process import SupervisedProcess

DAY_MS = 86_400_000
NOTIFY = {"failed": "error", "timed_out": "error", "paused": "warning", "refused": "warning",
          "interrupted": "error"}
TAIL_BYTES = 2_000


def owner_id() -> str:
    """This process as a run's owner: ``pid@host``."""
    return f"{os.getpid()}@{socket.gethostname()}"


@dataclass(frozen=True)
class LaunchSettings:
    """Limits every run shares.

    Attributes:
        daily_limit: Runs that may start in any 24 hours, per home.
        timeout_s: How long one run may take before its process tree is killed.
    """

    daily_limit: int = DEFAULTS.schedule.daily_limit
    timeout_s: float = DEFAULTS.schedule.run_timeout_s


class RunLauncher:
    """Starts recorded runs and records how they end; see the module docstring.

    Args:
        store: The home's store.
        command: The command line that executes run ``id`` in a child process.
        env: The child's environment.
        logs: The folder each run's output goes to (``<id>.log``).
        settings: The limits.
        publish: Receives the events.
        clock: Unix milliseconds now.
    """

    def __init__(self, *, store, command: Callable[[int], Sequence[str]], env: Mapping[str, str],
                 logs: Path, settings: LaunchSettings, publish: Callable[[Any], None],
                 clock: Callable[[], int]) -> None:
        self.store = store
        self.command = command
        self.env = dict(env)
        self.logs = logs
        self.settings = settings
        self.publish = publish
        self.clock = clock
        self.owner = owner_id()
        self.processes: dict[int, SupervisedProcess] = {}

    def log_path(self, run_id: int) -> Path:
        return self.logs / f"{run_id}.log"

    def over_limit(self) -> bool:
        """Whether the daily limit of runs is used up."""
        since = self.clock() - DAY_MS
        return self.store.count_runs_started_since(since) >= self.settings.daily_limit

    async def execute(self, run_id: int) -> dict[str, Any]:
        """Run the pending run ``run_id`` to its end; returns its final record.

        Cancelling this (a supervisor that stops) kills the run's processes and
        records it failed.
        """
        run = self.store.get_run(run_id)
        if run is None or run["status"] != "pending":
            return run or {}
        if self.over_limit():
            error = (f"refused: the daily limit of {self.settings.daily_limit} scheduled runs "
                     "was reached (setting schedule.daily_limit)")
            self.store.finish_run(run_id, "refused", error=error, only_if=("pending",))
            return self._ended(run_id)
        if not self.store.start_run(run_id, owner=self.owner, owner_start=this_process().start):
            return self.store.get_run(run_id) or {}
        self.publish(ScheduleFired(run_id=run_id, schedule_id=run["schedule_id"], title=run["title"],
                                   fired_by=run["fired_by"], due_at=run["due_at"]))
        process = SupervisedProcess(f"run:{run_id}", self.command(run_id), env=self.env,
                                    cwd=self._cwd(run), output=self.log_path(run_id),
                                    publish=self.publish)
        self.processes[run_id] = process
        try:
            await self._supervise(run_id, process)
        except asyncio.CancelledError:
            if process.state in (ProcessState.RUNNING, ProcessState.STARTING):
                await asyncio.shield(process.stop("the supervisor is stopping"))
            self.store.finish_run(run_id, "failed", only_if=("running",),
                                  error="stopped: the process supervising it stopped during the run")
            self._ended(run_id)
            raise
        finally:
            self.processes.pop(run_id, None)
        return self._ended(run_id)

    async def _supervise(self, run_id: int, process: SupervisedProcess) -> None:
        if not await process.start():
            self.store.finish_run(run_id, "failed", error=process.error, only_if=("running",))
            return
        self.store.set_run_process(run_id, process.pid)
        code = await process.wait(self.settings.timeout_s)
        if code is None:
            killed = await process.stop("ran past its time limit")
            self.store.finish_run(
                run_id, "timed_out", only_if=("running",),
                error=f"timed out: the run took longer than {self.settings.timeout_s:g} s; its "
                      f"{len(killed)} process{'es' if len(killed) != 1 else ''} were killed")
            return
        # A child that recorded its outcome has ended the run already; this only
        # catches one that died first.
        self.store.finish_run(run_id, "failed", only_if=("running",),
                              error=f"the run's process exited with status {code} without an "
                                    f"outcome{self._tail(run_id)}")

    def _cwd(self, run: dict[str, Any]) -> Path:
        schedule = self.store.get_schedule(run["schedule_id"]) if run["schedule_id"] else None
        folder = ((schedule or {}).get("card") or {}).get("cwd") or ""
        return Path(folder) if folder and Path(folder).is_dir() else self.logs

    def _tail(self, run_id: int) -> str:
        try:
            with open(self.log_path(run_id), "rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - TAIL_BYTES))
                text = handle.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        lines = [line for line in text.splitlines() if line.strip()][-5:]
        return (": " + " | ".join(lines)) if lines else ""

    def _ended(self, run_id: int) -> dict[str, Any]:
        """Publish how a run ended, and notify when it did not end well."""
        run = self.store.get_run(run_id) or {}
        if not run:
            return run
        self.publish(ScheduleRunEnded(run_id=run_id, schedule_id=run["schedule_id"], title=run["title"],
                                      status=run["status"], error=run["error"],
                                      session_id=run["session_id"]))
        notify(self.store, self.publish, run)
        return run


def notify(store, publish: Callable[[Any], None], run: dict[str, Any]) -> None:
    """Post (record and publish) the notification a run that did not end well deserves."""
    level = NOTIFY.get(run.get("status", ""))
    if level is None:
        return
    title = f"Scheduled run {run['status'].replace('_', ' ')}: {run['title']}"
    if run["status"] == "refused" and any(
            n["title"].startswith("Scheduled run refused") and n["at"] >= store.clock() - DAY_MS
            for n in store.list_notifications(limit=20)):
        return  # One notice a day that the limit was reached is enough; each run is recorded.
    body = run.get("error") or run["status"]
    notification = store.add_notification(level, title, body, source="scheduler", run_id=run["id"])
    publish(Notice(level=level, message=f"{title} — {body}"))
    publish(NotificationPosted(id=notification, level=level, title=title, body=body,
                               source="scheduler", run_id=run["id"]))
