"""What to do about a schedule now: wait, fire its window, or settle the windows it missed.

Every window up to ``now`` is settled in one step, so a schedule never queues
more than one run:

- a window due within ``grace`` of now fires (a tick that comes a moment late is
  not a miss);
- windows older than that were missed while nothing ran: with ``runMissed`` they
  fire once, together (one run, however many windows); without it they are
  skipped, and recorded as skipped, once;
- a window firing now also covers the missed ones before it.

Pure arithmetic over ``arithmetic.next_after``; the caller records the outcome.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from workbench.config.settings import DEFAULTS
from workbench.scheduler.arithmetic import next_after

GRACE_MS = int(DEFAULTS.schedule.missed_after_s * 1000)
"""How late a window may be seen and still count as on time (not missed)."""


@dataclass(frozen=True)
class Plan:
    """The decision for one schedule at one moment.

    Attributes:
        fire: The due time of the run to start now, or None.
        fired_by: ``schedule`` (on time) or ``missed`` (a missed window fired late).
        skipped_from: The first missed window when missed windows are skipped.
        handled_until: Every window up to this time is settled (the new ``last_due``).
        next_due: The schedule's next window after that, None when there is none.
    """

    fire: int | None
    fired_by: str | None
    skipped_from: int | None
    handled_until: int
    next_due: int | None

    @property
    def changed(self) -> bool:
        """Whether anything was settled (a run or a skip to record)."""
        return self.fire is not None or self.skipped_from is not None


def plan(schedule: dict[str, Any], *, last_due: int, anchor: int, now: int, run_missed: bool,
         zone: dt.tzinfo, grace: int = GRACE_MS) -> Plan:
    """Decide for one schedule; see the module docstring.

    Args:
        schedule: A checked schedule.
        last_due: Every window up to this time was settled before.
        anchor: Where an interval counts from.
        now: The current time.
        run_missed: The schedule's ``runMissed``.
        zone: The local zone.
        grace: How late a window may be and still be on time, in milliseconds.
    """
    first = next_after(schedule, last_due, anchor=anchor, zone=zone)
    if first is None or first > now:
        return Plan(None, None, None, last_due, first)
    recent = next_after(schedule, max(last_due, now - grace), anchor=anchor, zone=zone)
    on_time = recent is not None and recent <= now
    missed = first <= now - grace
    upcoming = next_after(schedule, now, anchor=anchor, zone=zone)
    if on_time:
        skipped = first if missed and not run_missed else None
        return Plan(recent, "schedule", skipped, now, upcoming)
    if run_missed:
        return Plan(first, "missed", None, now, upcoming)
    return Plan(None, None, first, now, upcoming)


def settled_until(row: dict[str, Any]) -> tuple[int, int]:
    """A stored schedule's ``(last_due, anchor)``.

    One never planned (a tool's proposal) counts from its creation; a ``once`` whose
    time came before that still has its window (fired on time, or missed).
    """
    anchor = row.get("anchor_at") or row["created_at"]
    last_due = row.get("last_due_at")
    if last_due is None:
        last_due = anchor - 1
        if row["schedule"].get("kind") == "once":
            last_due = min(last_due, row["schedule"]["atMs"] - 1)
    return last_due, anchor


def upcoming(row: dict[str, Any], zone: dt.tzinfo) -> int | None:
    """A stored schedule's next window as a supervisor would reckon it (None when it is
    paused or has none left), whether or not one has planned it yet."""
    if not row["enabled"]:
        return None
    if row.get("last_due_at") is not None:
        return row.get("next_due_at")
    last_due, anchor = settled_until(row)
    return next_after(row["schedule"], last_due, anchor=anchor, zone=zone)
