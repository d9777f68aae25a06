"""Schedules as people type them: ``--at``, ``--every``, ``--weekly``, ``--monthly``,
``--yearly`` and ``--cron``.

- ``--at 2025-03-01T09:00`` (local time unless it carries an offset)
- ``--every 15`` (minutes)
- ``--weekly mon,wed@09:00`` (names, 0–6 with 0 for Sunday, ranges ``mon-fri``,
  ``weekdays``, ``weekend`` or ``daily``)
- ``--monthly 31@08:00`` (the last day in shorter months)
- ``--yearly 02-29@07:00`` (February 28th in other years)
- ``--cron "*/5 9-17 * * 1-5"``
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from workbench.scheduler.arithmetic import to_ms
from workbench.scheduler.shapes import ScheduleError, check_schedule

NAMES = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
GROUPS = {"weekdays": [1, 2, 3, 4, 5], "weekend": [0, 6], "daily": list(range(7))}
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")


def _clock(text: str, flag: str) -> tuple[int, int]:
    match = _CLOCK.match(text.strip())
    if not match or int(match.group(1)) > 23 or int(match.group(2)) > 59:
        raise ScheduleError(f"{flag}: the time must be HH:MM (00:00 to 23:59), not {text!r}")
    return int(match.group(1)), int(match.group(2))


def _split(text: str, flag: str, shape: str) -> tuple[str, int, int]:
    head, sep, clock = text.partition("@")
    if not sep or not head.strip():
        raise ScheduleError(f"{flag} takes {shape}, not {text!r}")
    return (head.strip(), *_clock(clock, flag))


FULL_NAMES = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")


def _day(word: str) -> int:
    word = word.strip().lower()
    if word in NAMES:
        return NAMES[word]
    if word in FULL_NAMES:
        return FULL_NAMES.index(word)
    if word.isdigit() and int(word) <= 7:
        return int(word) % 7
    raise ScheduleError(f"--weekly: {word!r} is not a day (sun…sat, or 0–6 with 0 for Sunday)")


def weekdays(text: str) -> list[int]:
    """``mon,wed``, ``mon-fri``, ``1,3``, ``weekdays``… as sorted day numbers (0 is Sunday)."""
    days: set[int] = set()
    for part in text.split(","):
        part = part.strip().lower()
        if part in GROUPS:
            days.update(GROUPS[part])
        elif "-" in part:
            first, _, last = part.partition("-")
            start, end = _day(first), _day(last)
            days.update(range(start, end + 1) if start <= end else [*range(start, 7), *range(0, end + 1)])
        elif part:
            days.add(_day(part))
    if not days:
        raise ScheduleError("--weekly needs at least one day")
    return sorted(days)


def parse_at(text: str, zone: dt.tzinfo) -> int:
    """An ISO time (local when it has no offset) as unix milliseconds."""
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ScheduleError(f"--at takes an ISO time such as 2025-03-01T09:00, not {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return to_ms(moment)


def from_flags(*, at: str | None = None, every: int | None = None, weekly: str | None = None,
               monthly: str | None = None, yearly: str | None = None, cron: str | None = None,
               zone: dt.tzinfo) -> dict[str, Any] | None:
    """The schedule one of the flags describes; None when none is given.

    Raises:
        ScheduleError: Several flags are given, or one cannot be read.
    """
    given = {name: value for name, value in (("--at", at), ("--every", every), ("--weekly", weekly),
                                             ("--monthly", monthly), ("--yearly", yearly),
                                             ("--cron", cron)) if value is not None}
    if not given:
        return None
    if len(given) > 1:
        raise ScheduleError(f"give one schedule, not {' and '.join(given)}")
    if at is not None:
        return check_schedule({"kind": "once", "atMs": parse_at(at, zone)})
    if every is not None:
        return check_schedule({"kind": "interval", "everyMinutes": every})
    if weekly is not None:
        days, hour, minute = _split(weekly, "--weekly", "DAYS@HH:MM (e.g. mon,wed@09:00)")
        return check_schedule({"kind": "weekly", "weekdays": weekdays(days), "hour": hour,
                               "minute": minute})
    if monthly is not None:
        day, hour, minute = _split(monthly, "--monthly", "DAY@HH:MM (e.g. 31@08:00)")
        if not day.isdigit():
            raise ScheduleError(f"--monthly: the day must be a number from 1 to 31, not {day!r}")
        return check_schedule({"kind": "monthly", "day": int(day), "hour": hour, "minute": minute})
    if yearly is not None:
        date, hour, minute = _split(yearly, "--yearly", "MM-DD@HH:MM (e.g. 02-29@07:00)")
        match = re.fullmatch(r"(\d{1,2})-(\d{1,2})", date)
        if not match:
            raise ScheduleError(f"--yearly: the date must be MM-DD, not {date!r}")
        return check_schedule({"kind": "yearly", "month": int(match.group(1)),
                               "day": int(match.group(2)), "hour": hour, "minute": minute})
    return check_schedule({"kind": "cron", "expr": cron})


def to_flag(schedule: dict[str, Any], zone: dt.tzinfo) -> tuple[str, str]:
    """A checked schedule as the flag that gives it back, without the dashes:
    ``("weekly", "mon,wed@09:00")``, ``("every", "15")``, ``("at", "2025-03-01T09:00")``.

    ``from_flags(**{name: text})`` (with ``every`` as a number) reads it back.
    """
    kind = schedule["kind"]
    clock = f"{schedule.get('hour', 0):02d}:{schedule.get('minute', 0):02d}"
    if kind == "once":
        moment = dt.datetime.fromtimestamp(schedule["atMs"] / 1000, tz=zone)
        return "at", moment.strftime("%Y-%m-%dT%H:%M")
    if kind == "interval":
        return "every", str(schedule["everyMinutes"])
    if kind == "weekly":
        days = sorted(schedule["weekdays"])
        names = {tuple(group): name for name, group in GROUPS.items()}
        words = names.get(tuple(days)) or ",".join(list(NAMES)[day] for day in days)
        return "weekly", f"{words}@{clock}"
    if kind == "monthly":
        return "monthly", f"{schedule['day']}@{clock}"
    if kind == "yearly":
        return "yearly", f"{schedule['month']:02d}-{schedule['day']:02d}@{clock}"
    return "cron", schedule["expr"]
