"""``to_flag`` says a schedule back in the flag language, and ``from_flags`` reads it again."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from workbench.scheduler.spec import from_flags, to_flag

PARIS = ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(("name", "text", "shown"), [
    ("at", "2030-07-01T09:30", "2030-07-01T09:30"),
    ("every", 15, "15"),
    ("weekly", "wed,mon@09:00", "mon,wed@09:00"),
    ("weekly", "mon-fri@07:30", "weekdays@07:30"),
    ("weekly", "sat,sun@10:00", "weekend@10:00"),
    ("monthly", "31@08:00", "31@08:00"),
    ("yearly", "2-29@07:05", "02-29@07:05"),
    ("cron", "*/5   9-17 * * 1-5", "*/5 9-17 * * 1-5"),
])
def test_a_schedule_said_as_a_flag_reads_back_the_same(name: str, text, shown: str) -> None:
    schedule = from_flags(**{name: text}, zone=PARIS)
    flag, written = to_flag(schedule, PARIS)
    assert (flag, written) == (name, shown)
    again = from_flags(**{flag: int(written) if flag == "every" else written}, zone=PARIS)
    assert again == schedule


def test_a_time_is_said_in_the_zone_given() -> None:
    schedule = from_flags(at="2030-01-01T12:00+00:00", zone=PARIS)
    assert to_flag(schedule, dt.timezone.utc) == ("at", "2030-01-01T12:00")
    assert to_flag(schedule, PARIS) == ("at", "2030-01-01T13:00")
