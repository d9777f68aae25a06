"""The events the supervisor publishes: process state changes and schedule runs.

Plain dataclasses on the core's ``Event``, like every event (``workbench.events``).
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.events import Event


@dataclass(frozen=True)
class ProcessStateChanged(Event):
    """A supervised process (``scheduler``, ``run:12``…) changed state; one per transition."""

    name: str
    old: str
    new: str
    pid: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class ScheduleFired(Event):
    """A run of a schedule started (its process is being started)."""

    run_id: int
    schedule_id: int | None
    title: str
    fired_by: str
    due_at: int | None = None


@dataclass(frozen=True)
class ScheduleRunEnded(Event):
    """A run ended, was refused or skipped; ``status`` is its recorded status."""

    run_id: int
    schedule_id: int | None
    title: str
    status: str
    error: str | None = None
    session_id: str | None = None


ProcessStateChanged.kind = "process_state_changed"
ScheduleFired.kind = "schedule_fired"
ScheduleRunEnded.kind = "schedule_run_ended"
