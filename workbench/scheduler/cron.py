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
import datetime as dt
import functools
from dataclasses import dataclass, field


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
    month_days_known: dict[int, tuple[int, ...]] = field(
        default_factory=dict, compare=False, hash=False, repr=False)
    """Matching days by ``year * 12 + month``: one dictionary for every expression with
    the same day fields (see ``_parse``)."""

    @classmethod
    def parse(cls, expr: str) -> CronSpec:
        """Read ``expr``.

        Raises:
            ValueError: It is not a cron expression of five fields this module matches.
        """
        found = _SPECS.get(expr)
        if found is None:
            if len(_SPECS) >= SPECS_KEPT:
                _SPECS.clear()
            found = _SPECS[expr] = _parse(" ".join(expr.split()).lower())
        return found

    def day_matches(self, day: dt.date) -> bool:
        in_month = day.day in self.days or (
            self.last_day and day.day == month_length(day.year, day.month))
        in_week = (day.weekday() + 1) % 7 in self.weekdays
        if self.days_any or self.weekdays_any:
            return in_month and in_week
        return in_month or in_week

    def month_days(self, year: int, month: int) -> tuple[int, ...]:
        """The days of one month that match, in order (reckoned once for every
        expression with the same day fields, so 10,000 of them reckon a month once)."""
        known = self.month_days_known
        found = known.get(year * 12 + month)
        if found is None:
            if len(known) >= MONTH_DAYS_KEPT:
                known.clear()
            first = dt.date(year, month, 1)
            found = known[year * 12 + month] = tuple(
                day for day in range(1, month_length(year, month) + 1)
                if self.day_matches(first.replace(day=day)))
        return found

    def next_match(self, start: dt.datetime) -> dt.datetime | None:
        """The first matching minute at or after the naive wall-clock time ``start``.

        It jumps field by field — to the next allowed month, then day, hour and minute —
        so a rare date (February 29th, a Friday the 13th) costs a few steps a year.
        """
        year, month, day, hour, minute = start.year, start.month, start.day, start.hour, start.minute
        if start.second or start.microsecond:
            minute += 1
        months, hours, minutes = self.months, self.hours, self.minutes
        every_day = self.days_any and self.weekdays_any
        limit = start.year + YEARS_AHEAD
        while year <= limit:
            if month > 12:
                year, month, day, hour, minute = year + 1, 1, 1, 0, 0
                continue
            if month not in months:
                index = bisect.bisect_right(months, month)
                if index == len(months):
                    year, month = year + 1, months[0]
                else:
                    month = months[index]
                day, hour, minute = 1, 0, 0
                continue
            if every_day:
                if day > 28 and day > month_length(year, month):
                    month, day, hour, minute = month + 1, 1, 0, 0
                    continue
            else:
                days = self.month_days(year, month)
                index = bisect.bisect_left(days, day)
                if index == len(days):
                    month, day, hour, minute = month + 1, 1, 0, 0
                    continue
                if days[index] != day:
                    day, hour, minute = days[index], 0, 0
            index = bisect.bisect_left(hours, hour)
            if index == len(hours):
                day, hour, minute = day + 1, 0, 0
                continue
            if hours[index] != hour:
                hour, minute = hours[index], 0
            index = bisect.bisect_left(minutes, minute)
            if index == len(minutes):
                hour, minute = hour + 1, 0
                continue
            return dt.datetime(year, month, day, hour, minutes[index])
        return None


_LENGTHS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def month_length(year: int, month: int) -> int:
    """How many days ``month`` (1–12) of ``year`` has (``calendar.monthrange`` without
    the weekday it also reckons)."""
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _LENGTHS[month]


MONTH_DAYS_KEPT = 1200
"""How many months' matching days one set of day fields keeps before starting over."""

_DAY_RULES: dict[tuple, dict[int, tuple[int, ...]]] = {}
"""The ``month_days_known`` of each set of day fields."""

_SPECS: dict[str, CronSpec] = {}
"""Parsed expressions by their text as given (``parse``), ahead of the normalising cache."""

SPECS_KEPT = 16384


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

    day_set = frozenset(values([d for d in days if d != "l"] or (["*"] if "l" not in days else []),
                               range(1, 32)))
    weekday_set = frozenset(values(weekdays, range(7)))
    days_any, weekdays_any = fields[2].startswith(("*", "?")), fields[4].startswith(("*", "?"))
    rule = (day_set, "l" in days, weekday_set, days_any, weekdays_any)
    if rule not in _DAY_RULES and len(_DAY_RULES) >= SPECS_KEPT:
        _DAY_RULES.clear()
    return CronSpec(
        minutes=values(minutes, range(60)), hours=values(hours, range(24)), days=day_set,
        last_day="l" in days, months=values(months, range(1, 13)), weekdays=weekday_set,
        days_any=days_any, weekdays_any=weekdays_any, hours_any=fields[1].startswith("*"),
        month_days_known=_DAY_RULES.setdefault(rule, {}))
