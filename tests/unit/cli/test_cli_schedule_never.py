"""A schedule that can never fire is refused when added, and named ``never`` when one is
kept from before: the real ``workbench schedule`` command."""

from __future__ import annotations

import json

import pytest

from commands import workbench

from workbench.errors import ExitCode
from workbench.scheduler.shapes import ScheduleError, check_schedule, never_fires


@pytest.mark.parametrize("flags, message", [
    (["--cron", "* * 31 2 *"], "error: schedule.expr: '* * 31 2 *' never fires: no day 31 in February"),
    (["--cron", "0 9 30,31 2 *"], "never fires: no day 30, 31 in February"),
    (["--cron", "0 9 31 4,6,9,11 *"], "never fires: no day 31 in April, June, September, November"),
    (["--yearly", "02-30@09:00"], "error: schedule: 02-30 never fires: February has at most 29 days"),
    (["--yearly", "11-31@09:00"], "November has at most 30 days"),
])
def test_a_schedule_that_never_fires_is_refused(home, flags, message):
    done = workbench("schedule", "add", "--title", "never", "--prompt", "hi", *flags)
    assert done.returncode == ExitCode.USAGE
    assert message in done.stderr
    assert json.loads(workbench("schedule", "list", "--json").stdout) == []


@pytest.mark.parametrize("shape", [
    {"kind": "cron", "expr": "0 0 29 2 *"},      # leap years
    {"kind": "cron", "expr": "0 0 31 2 1"},      # both day fields: every Monday in February
    {"kind": "cron", "expr": "0 0 L 2 *"},       # February's last day
    {"kind": "cron", "expr": "0 0 30,31 2,4 *"},  # April 30th
    {"kind": "yearly", "month": 2, "day": 29, "hour": 7, "minute": 0},
    {"kind": "monthly", "day": 31, "hour": 7, "minute": 0},
])
def test_schedules_that_fire_only_sometimes_are_kept(shape):
    assert check_schedule(shape)["kind"] == shape["kind"]
    assert never_fires(shape) is None


def test_a_kept_schedule_that_never_fires_is_listed_as_never(home):
    from workbench.store import Store

    with Store.open(home.db_path) as store:
        store.add_scheduled_prompt({"title": "old", "instruction": "hi",
                                    "schedule": {"kind": "cron", "expr": "0 9 31 2 *"}}, source="person")
    listed = workbench("schedule", "list")
    assert listed.returncode == 0
    assert "next never" in listed.stdout and "cron 0 9 31 2 *" in listed.stdout
    shown = workbench("schedule", "show", "1")
    assert "  next      never  (no day 31 in February)" in shown.stdout
    assert json.loads(workbench("schedule", "list", "--json").stdout)[0]["never"] == "no day 31 in February"
    with pytest.raises(ScheduleError):
        check_schedule({"kind": "cron", "expr": "0 9 31 2 *"})
