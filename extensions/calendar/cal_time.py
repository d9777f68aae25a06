"""Dates, local times, zones and repeats of the calendar, as a person says them.

A time is a local date and time with an IANA zone name (``2026-12-04T20:00`` in
``Europe/Rome``); an all-day event has dates only. A repeat is expanded on local dates,
so an occurrence keeps its local time when daylight saving time starts or ends; a
monthly repeat on the 31st skips the months without one, and a yearly one on
February 29th happens in leap years only. Only the standard library (``zoneinfo``,
with the ``tzdata`` package where the system has no zone files).
"""

from __future__ import annotations

import calendar as _calendar
import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

FREQUENCIES = ("daily", "weekly", "monthly", "yearly")
MIN_YEAR, MAX_YEAR = 1900, 2200
"""The years a date may fall in."""
MAX_INTERVAL = 999

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$")


class TimeProblem(ValueError):
    """A date, time, zone or repeat that cannot be used; the message says which and why."""


def parse_date(text: object, what: str) -> dt.date:
    """``YYYY-MM-DD`` as a date, within ``MIN_YEAR``..``MAX_YEAR``."""
    match = _DATE.match(text) if isinstance(text, str) else None
    if match is None:
        raise TimeProblem(f"{what} is a date written YYYY-MM-DD, not {str(text)[:40]!r}")
    try:
        day = dt.date(*(int(part) for part in match.groups()))
    except ValueError:
        raise TimeProblem(f"{what} {text} is no day of the calendar") from None
    if not MIN_YEAR <= day.year <= MAX_YEAR:
        raise TimeProblem(f"{what} is between {MIN_YEAR} and {MAX_YEAR}")
    return day


def parse_local(text: object, what: str) -> dt.datetime:
    """``YYYY-MM-DDTHH:MM`` (seconds allowed, a space for the ``T``) as a naive local time."""
    match = _DATETIME.match(text) if isinstance(text, str) else None
    if match is None:
        raise TimeProblem(f"{what} is a local time written YYYY-MM-DDTHH:MM, not {str(text)[:40]!r}")
    parts = [int(part) for part in match.groups(default="0")]
    try:
        moment = dt.datetime(*parts)
    except ValueError:
        raise TimeProblem(f"{what} {text} is no time of the calendar") from None
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise TimeProblem(f"{what} is between {MIN_YEAR} and {MAX_YEAR}")
    return moment.replace(second=0)


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def zone(name: object) -> ZoneInfo:
    """The IANA zone ``name`` (``Europe/Rome``); only names of the zone database."""
    if not isinstance(name, str) or name not in _zones():
        raise TimeProblem(f"{str(name)[:60]!r} is not an IANA time zone name such as Europe/Rome")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise TimeProblem(f"the time zone {name!r} cannot be read here") from None


def local_text(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def aware(local: dt.datetime, zone_name: str) -> dt.datetime:
    """A local time in its zone (a time that a change of clocks skips is read as the
    clocks before it would, as ``zoneinfo`` does with ``fold=0``)."""
    return local.replace(tzinfo=zone(zone_name))


@dataclass(frozen=True)
class Repeat:
    """How an event repeats: every ``interval`` days, weeks, months or years, up to
    ``until`` (a local date, inclusive) or for ever."""

    freq: str
    interval: int = 1
    until: dt.date | None = None

    @staticmethod
    def read(value: object, start: dt.date) -> Repeat | None:
        """A repeat from its JSON form ``{"freq", "interval"?, "until"?}`` (None: none)."""
        if value is None:
            return None
        if not isinstance(value, dict):
            raise TimeProblem("repeat is an object: {\"freq\": \"weekly\", \"interval\": 2, \"until\": \"YYYY-MM-DD\"}")
        freq = value.get("freq")
        if freq in (None, "none", ""):
            return None
        if freq not in FREQUENCIES:
            raise TimeProblem(f"repeat.freq is one of {', '.join(FREQUENCIES)}")
        interval = value.get("interval", 1)
        if interval is None:
            interval = 1
        if isinstance(interval, bool) or not isinstance(interval, int) or not 1 <= interval <= MAX_INTERVAL:
            raise TimeProblem(f"repeat.interval is a whole number from 1 to {MAX_INTERVAL}")
        until = value.get("until")
        last = parse_date(until, "repeat.until") if until not in (None, "") else None
        if last is not None and last < start:
            raise TimeProblem("repeat.until is on or after the event's first day")
        return Repeat(freq, interval, last)

    def to_json(self) -> dict[str, object]:
        return {"freq": self.freq, "interval": self.interval,
                "until": self.until.isoformat() if self.until else None}

    def dates(self, first: dt.date, since: dt.date, through: dt.date) -> Iterator[dt.date]:
        """The local dates the event starts on from ``since`` through ``through``
        (inclusive), the first occurrence being ``first``."""
        end = min(through, self.until) if self.until else through
        if end < first or end < since:
            return
        if self.freq in ("daily", "weekly"):
            step = self.interval * (7 if self.freq == "weekly" else 1)
            skip = max(0, (since - first).days // step)
            day = first + dt.timedelta(days=skip * step)
            while day <= end:
                if day >= since:
                    yield day
                day += dt.timedelta(days=step)
            return
        months = self.interval * (12 if self.freq == "yearly" else 1)
        gone = (since.year - first.year) * 12 + since.month - first.month
        k = max(0, gone // months - 1)
        while True:
            index = first.month - 1 + k * months
            year, month = first.year + index // 12, index % 12 + 1
            if year > end.year or (year == end.year and month > end.month) or year > MAX_YEAR:
                return
            k += 1
            if first.day > _calendar.monthrange(year, month)[1]:
                continue  # the 31st of a short month, February 29th of a common year
            day = dt.date(year, month, first.day)
            if since <= day <= end:
                yield day
