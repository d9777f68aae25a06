"""Schedules as people type them, checked shapes, their words, and the local zone."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from workbench.errors import ExitCode
from workbench.scheduler.arithmetic import to_ms
from workbench.scheduler.shapes import ScheduleError, check_schedule, describe
from workbench.scheduler.spec import from_flags, weekdays
from workbench.scheduler.zone import local_zone, zone_name

PARIS = ZoneInfo("Europe/Paris")


def flags(**given):
    return from_flags(zone=PARIS, **given)


def test_each_flag_makes_its_shape():
    assert flags(at="2025-03-01T09:00") == {"kind": "once",
                                            "atMs": to_ms(dt.datetime(2025, 3, 1, 9, tzinfo=PARIS))}
    assert flags(at="2025-03-01T09:00+00:00")["atMs"] == to_ms(dt.datetime(2025, 3, 1, 9, tzinfo=dt.timezone.utc))
    assert flags(every=15) == {"kind": "interval", "everyMinutes": 15}
    assert flags(weekly="mon,wed@09:05") == {"kind": "weekly", "weekdays": [1, 3], "hour": 9, "minute": 5}
    assert flags(monthly="31@08:00") == {"kind": "monthly", "day": 31, "hour": 8, "minute": 0}
    assert flags(yearly="02-29@07:30") == {"kind": "yearly", "month": 2, "day": 29, "hour": 7, "minute": 30}
    assert flags(cron="*/5  9-17 * * 1-5") == {"kind": "cron", "expr": "*/5 9-17 * * 1-5"}
    assert flags() is None


@pytest.mark.parametrize(("text", "days"), [
    ("mon-fri", [1, 2, 3, 4, 5]), ("weekdays", [1, 2, 3, 4, 5]), ("weekend", [0, 6]),
    ("daily", [0, 1, 2, 3, 4, 5, 6]), ("Sunday,7,3", [0, 3]), ("fri-mon", [0, 1, 5, 6]),
])
def test_weekdays_in_words_numbers_and_ranges(text, days):
    assert weekdays(text) == days


@pytest.mark.parametrize(("given", "message"), [
    ({"every": 5, "cron": "* * * * *"}, "give one schedule"),
    ({"at": "tomorrow"}, "ISO time"),
    ({"weekly": "mon"}, "DAYS@HH:MM"),
    ({"weekly": "funday@09:00"}, "not a day"),
    ({"weekly": "mon@25:00"}, "HH:MM"),
    ({"monthly": "32@08:00"}, "schedule.day"),
    ({"monthly": "last@08:00"}, "number from 1 to 31"),
    ({"yearly": "13-01@08:00"}, "schedule.month"),
    ({"yearly": "0229@08:00"}, "MM-DD"),
    ({"cron": "* * *"}, "five fields"),
    ({"cron": "0 0 * * 5#2"}, "not supported"),
    ({"cron": "61 * * * *"}, "not a valid cron"),
    ({"every": 0}, "everyMinutes"),
])
def test_what_cannot_be_read_is_a_usage_error_naming_the_flag(given, message):
    with pytest.raises(ScheduleError) as caught:
        flags(**given)
    assert message in str(caught.value) and caught.value.exit_code == ExitCode.USAGE


def test_a_checked_schedule_is_a_clean_copy():
    assert check_schedule({"kind": "weekly", "weekdays": [3, 1, 3], "hour": 9, "minute": 0,
                           "extra": True}) == {"kind": "weekly", "weekdays": [1, 3], "hour": 9, "minute": 0}
    with pytest.raises(ScheduleError, match="kind"):
        check_schedule({"kind": "hourly"})
    with pytest.raises(ScheduleError, match="weekdays"):
        check_schedule({"kind": "weekly", "weekdays": [], "hour": 9, "minute": 0})
    with pytest.raises(ScheduleError, match="hour"):
        check_schedule({"kind": "monthly", "day": 3, "hour": True, "minute": 0})


def test_schedules_in_words():
    assert describe({"kind": "interval", "everyMinutes": 1}) == "every minute"
    assert describe({"kind": "weekly", "weekdays": [1, 3], "hour": 9, "minute": 5}) == "Mon, Wed at 09:05"
    assert describe({"kind": "weekly", "weekdays": list(range(7)), "hour": 7, "minute": 0}) == "every day at 07:00"
    assert "last day in shorter months" in describe({"kind": "monthly", "day": 31, "hour": 8, "minute": 0})
    assert "Feb 28 in other years" in describe({"kind": "yearly", "month": 2, "day": 29, "hour": 7, "minute": 0})
    once = to_ms(dt.datetime(2025, 3, 1, 9, 0, tzinfo=PARIS))
    assert describe({"kind": "once", "atMs": once}, PARIS) == "once at 2025-03-01 09:00"
    assert describe({"kind": "cron", "expr": "0 9 * * 1"}) == "cron 0 9 * * 1"


def test_the_local_zone_comes_from_tz_with_its_rules():
    assert zone_name(local_zone({"TZ": "America/New_York"})) == "America/New_York"
    assert zone_name(local_zone({"TZ": ":Europe/Paris"})) == "Europe/Paris"
    fallback = local_zone({"TZ": "Not/AZone"})
    assert fallback.utcoffset(dt.datetime(2025, 1, 1)) is not None
