"""Settling a schedule's windows at a given moment: on time, missed with and without
runMissed, both at once, a schedule never planned."""

from __future__ import annotations

import datetime as dt

from workbench.scheduler.arithmetic import to_ms
from workbench.scheduler.planner import plan, settled_until

UTC = dt.timezone.utc
MINUTE = 60_000
T0 = to_ms(dt.datetime(2025, 3, 3, 8, 0, tzinfo=UTC))
HOURLY = {"kind": "interval", "everyMinutes": 60}


def decide(schedule, *, last_due, now, run_missed=False, anchor=T0, grace=MINUTE):
    return plan(schedule, last_due=last_due, anchor=anchor, now=now, run_missed=run_missed,
                zone=UTC, grace=grace)


def test_before_the_window_it_waits_for_it():
    decision = decide(HOURLY, last_due=T0, now=T0 + 30 * MINUTE)
    assert (decision.fire, decision.skipped_from, decision.changed) == (None, None, False)
    assert decision.next_due == T0 + 60 * MINUTE and decision.handled_until == T0


def test_a_window_seen_a_moment_late_fires_on_time():
    due = T0 + 60 * MINUTE
    decision = decide(HOURLY, last_due=T0, now=due + 800)
    assert (decision.fire, decision.fired_by, decision.skipped_from) == (due, "schedule", None)
    assert decision.handled_until == due + 800 and decision.next_due == due + 60 * MINUTE


def test_missed_windows_are_skipped_once_without_run_missed():
    now = T0 + 5 * 60 * MINUTE + 30 * MINUTE  # five windows passed while nothing ran
    decision = decide(HOURLY, last_due=T0, now=now)
    assert decision.fire is None
    assert decision.skipped_from == T0 + 60 * MINUTE
    assert decision.handled_until == now and decision.next_due == T0 + 6 * 60 * MINUTE


def test_missed_windows_fire_once_with_run_missed():
    now = T0 + 5 * 60 * MINUTE + 30 * MINUTE
    decision = decide(HOURLY, last_due=T0, now=now, run_missed=True)
    assert (decision.fire, decision.fired_by, decision.skipped_from) == (T0 + 60 * MINUTE, "missed", None)
    # Settled: the same moment again decides nothing more.
    again = decide(HOURLY, last_due=decision.handled_until, now=now, run_missed=True)
    assert not again.changed


def test_a_window_on_time_after_missed_ones_fires_and_the_missed_are_recorded():
    now = T0 + 3 * 60 * MINUTE + 10_000  # the 3rd window is on time; the 1st and 2nd were missed
    skipping = decide(HOURLY, last_due=T0, now=now)
    assert (skipping.fire, skipping.skipped_from) == (T0 + 3 * 60 * MINUTE, T0 + 60 * MINUTE)
    covering = decide(HOURLY, last_due=T0, now=now, run_missed=True)
    assert (covering.fire, covering.skipped_from) == (T0 + 3 * 60 * MINUTE, None)


def test_the_grace_decides_late_or_missed():
    due = T0 + 60 * MINUTE
    assert decide(HOURLY, last_due=T0, now=due + 59_000).fired_by == "schedule"
    late = decide(HOURLY, last_due=T0, now=due + 61_000)
    assert (late.fire, late.skipped_from) == (None, due)


def test_a_once_schedule_settled_has_no_next_window():
    once = {"kind": "once", "atMs": T0 + MINUTE}
    decision = decide(once, last_due=T0, now=T0 + MINUTE + 5)
    assert decision.fire == T0 + MINUTE and decision.next_due is None
    assert not decide(once, last_due=decision.handled_until, now=T0 + 10 * MINUTE).changed


def test_a_schedule_never_planned_counts_from_its_creation():
    row = {"schedule": HOURLY, "created_at": T0, "anchor_at": None, "last_due_at": None}
    assert settled_until(row) == (T0 - 1, T0)
    # A once whose time came before it was saved still has its window.
    early = {"schedule": {"kind": "once", "atMs": T0 - 5_000}, "created_at": T0, "anchor_at": None,
             "last_due_at": None}
    last_due, anchor = settled_until(early)
    assert decide(early["schedule"], last_due=last_due, anchor=anchor, now=T0).fire == T0 - 5_000
    planned = {**row, "anchor_at": T0 + 7, "last_due_at": T0 + 99}
    assert settled_until(planned) == (T0 + 99, T0 + 7)
