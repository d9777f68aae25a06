"""Cron expressions: read by ``croniter``, matched here on wall-clock minutes.

``croniter`` reads the five fields (numbers, names, ranges, steps, lists, ``L`` for
a month's last day); the next match is found field by field on a naive wall-clock
time, which is some 30 times faster than iterating ``croniter`` itself and keeps
the daylight-saving rules in one place (``arithmetic``). As in cron, when both the
day-of-month and the day-of-week fields are restricted a day matching either one
matches. ``W`` and ``#`` are refused: they are not in every cron.
"""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
import functools
from dataclasses import dataclass


YEARS_AHEAD = 10
"""How far a search goes before deciding that an expression never matches."""


@dataclass(frozen=True)
class CronSpec:
    """One parsed expression: each field's allowed values, sorted."""

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    last_day: bool
    months: tuple[int, ...]
    weekdays: frozenset[int]
    """0 is Sunday."""
    days_any: bool
    weekdays_any: bool
    hours_any: bool
    """The hour field is a wildcard (``*``, ``*/N``): a repeated hour matches twice."""

    @classmethod
    def parse(cls, expr: str) -> CronSpec:
        """Read ``expr``.

        Raises:
            ValueError: It is not a cron expression of five fields this module matches.
        """
        return _parse(" ".join(expr.split()).lower())

    def day_matches(self, day: dt.date) -> bool:
        in_month = day.day in self.days or (
            self.last_day and day.day == calendar.monthrange(day.year, day.month)[1])
        in_week = (day.weekday() + 1) % 7 in self.weekdays
        if self.days_any or self.weekdays_any:
            return in_month and in_week
        return in_month or in_week

    def next_match(self, start: dt.datetime) -> dt.datetime | None:
        """The first matching minute at or after the naive wall-clock time ``start``."""
        moment = start.replace(second=0, microsecond=0)
        if moment < start:
            moment += dt.timedelta(minutes=1)
        limit = start.year + YEARS_AHEAD
        while moment.year <= limit:
            if moment.month not in self.months:
                index = bisect.bisect_right(self.months, moment.month)
                year = moment.year + (index == len(self.months))
                moment = dt.datetime(year, self.months[index % len(self.months)], 1)
                continue
            if not self.day_matches(moment.date()):
                moment = dt.datetime(moment.year, moment.month, moment.day) + dt.timedelta(days=1)
                continue
            index = bisect.bisect_left(self.hours, moment.hour)
            if index == len(self.hours):
                moment = dt.datetime(moment.year, moment.month, moment.day) + dt.timedelta(days=1)
                continue
            if self.hours[index] != moment.hour:
                moment = moment.replace(hour=self.hours[index], minute=0)
            index = bisect.bisect_left(self.minutes, moment.minute)
            if index == len(self.minutes):
                moment = moment.replace(minute=0) + dt.timedelta(hours=1)
                continue
            return moment.replace(minute=self.minutes[index])
        return None


@functools.lru_cache(maxsize=4096)
def _parse(expr: str) -> CronSpec:
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError("a cron expression has five fields: minute hour day-of-month month "
                         "day-of-week")
    if any(mark in expr for mark in ("w", "#")):
        raise ValueError("W and # are not supported in cron expressions")
    from croniter import croniter  # Only when a cron schedule is read: it is slow to import.

    if not croniter.is_valid(expr):
        raise ValueError(f"{expr!r} is not a valid cron expression")
    (minutes, hours, days, months, weekdays), nth = croniter.expand(expr)
    if nth:
        raise ValueError("the nth weekday of a month (#) is not supported")

    def values(field: list, full: range) -> tuple[int, ...]:
        return tuple(full) if field == ["*"] else tuple(sorted(v for v in field if isinstance(v, int)))

    return CronSpec(
        minutes=values(minutes, range(60)), hours=values(hours, range(24)),
        days=frozenset(values([d for d in days if d != "l"] or (["*"] if "l" not in days else []),
                              range(1, 32))),
        last_day="l" in days, months=values(months, range(1, 13)),
        weekdays=frozenset(values(weekdays, range(7))),
        days_any=fields[2].startswith(("*", "?")), weekdays_any=fields[4].startswith(("*", "?")),
        hours_any=fields[1].startswith("*"))
