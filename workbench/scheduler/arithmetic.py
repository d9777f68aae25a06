"""When a schedule is next due, in unix milliseconds, reckoned in local time.

Times are wall-clock times of the given zone, with its daylight-saving rules:

- a time the clocks skip (02:30 on the night they go forward) fires when the
  clocks say as much past the jump as it was past the start of the gap (03:30):
  the instant the wall time would have had on the old offset;
- a time that happens twice (02:30 on the night they go back) fires once, the
  first time. A cron expression whose hour field is a wildcard (``*``, ``*/2``)
  matches both passes of the repeated hour, as cron does;
- a monthly or yearly day past a month's end is that month's last day (the 31st
  is April 30th, February 29th is February 28th in other years);
- an interval counts real minutes from its anchor, whatever the clocks do.

Must not import anything of ours but the cron matcher.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Any

from workbench.scheduler.cron import CronSpec

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
MS = dt.timedelta(milliseconds=1)
EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
ONE_MINUTE = dt.timedelta(minutes=1)
CRON_SCAN = 2_000
"""How many cron matches one look-ahead may pass over before giving up."""


def to_ms(moment: dt.datetime) -> int:
    """An aware datetime as unix milliseconds."""
    return (moment - EPOCH) // MS


def from_ms(ms: int, zone: dt.tzinfo) -> dt.datetime:
    """Unix milliseconds as an aware datetime in ``zone``."""
    return dt.datetime.fromtimestamp(ms / 1000, zone)


def local_ms(naive: dt.datetime, zone: dt.tzinfo) -> int:
    """The instant a naive wall-clock time (with its ``fold``) names in ``zone``, in unix
    milliseconds: integer arithmetic, some three times faster than an aware datetime's."""
    offset = zone.utcoffset(naive)
    minutes = (naive.toordinal() - EPOCH_ORDINAL) * 1440 + naive.hour * 60 + naive.minute
    return minutes * 60_000 + naive.second * 1000 - (offset.days * 86_400 + offset.seconds) * 1000


def wall_instant(day: dt.date, hour: int, minute: int, zone: dt.tzinfo) -> int:
    """The instant a wall-clock time of ``day`` names: a repeated time's first
    occurrence, a skipped time moved past the gap (see the module docstring)."""
    return local_ms(dt.datetime(day.year, day.month, day.day, hour, minute), zone)


def _clamped(year: int, month: int, day: int) -> dt.date:
    if day > 28:
        day = min(day, calendar.monthrange(year, month)[1])
    return dt.date(year, month, day)


def next_after(schedule: dict[str, Any], after: int, *, anchor: int, zone: dt.tzinfo) -> int | None:
    """The first time ``schedule`` is due strictly after ``after``.

    Args:
        schedule: A checked schedule (see ``shapes.check_schedule``).
        after: Unix milliseconds.
        anchor: When an interval started counting (its windows are ``anchor + k *
            everyMinutes``, k ≥ 1); the other shapes ignore it.
        zone: The local zone the wall-clock times are in.

    Returns:
        Unix milliseconds, or None when it is never due again (a past ``once``, a
        cron expression that matches no date).
    """
    kind = schedule["kind"]
    if kind == "once":
        return schedule["atMs"] if schedule["atMs"] > after else None
    if kind == "interval":
        step = schedule["everyMinutes"] * 60_000
        k = (after - anchor) // step + 1 if after >= anchor else 1
        return anchor + k * step
    if kind == "cron":
        return _cron_next(schedule["expr"], after, zone)
    hour, minute = schedule["hour"], schedule["minute"]
    today = from_ms(after, zone).date()
    if kind == "weekly":
        # Days ahead of today (0 is Sunday), soonest first; a week on when only today is left.
        weekday = (today.weekday() + 1) % 7
        ahead = sorted((day - weekday) % 7 for day in schedule["weekdays"])
        for offset in (*ahead, ahead[0] + 7):
            found = wall_instant(today + dt.timedelta(days=offset), hour, minute, zone)
            if found > after:
                return found
        return None
    if kind == "monthly":
        for offset in range(3):
            year, month = divmod(today.month - 1 + offset, 12)
            found = wall_instant(_clamped(today.year + year, month + 1, schedule["day"]),
                                 hour, minute, zone)
            if found > after:
                return found
        return None
    if kind == "yearly":
        for year in (today.year, today.year + 1, today.year + 2):
            found = wall_instant(_clamped(year, schedule["month"], schedule["day"]), hour, minute, zone)
            if found > after:
                return found
        return None
    raise ValueError(f"unknown schedule kind {kind!r}")


_last_wall: list[tuple[Any, Any, Any]] = [(None, None, None)]
"""``_wall_clock``'s last answer, ``(after, zone, found)``, as one tuple (threads share it)."""


def _wall_clock(after: int, zone: dt.tzinfo) -> tuple[dt.datetime, dt.datetime | None]:
    """The naive wall-clock time at ``after`` in ``zone``, and the one three hours before
    when the clocks changed in between (else None). The last answer is kept: a tick
    reckons every schedule from the same instant."""
    seen_after, seen_zone, seen = _last_wall[0]
    if seen_after == after and seen_zone is zone:
        return seen
    moment = dt.datetime.fromtimestamp(after / 1000, zone)
    before = from_ms(after - 3 * 3_600_000, zone)
    found = (moment.replace(tzinfo=None),
             before.replace(tzinfo=None) if before.utcoffset() != moment.utcoffset() else None)
    _last_wall[0] = (after, zone, found)
    return found


def _cron_next(expr: str, after: int, zone: dt.tzinfo) -> int | None:
    """Cron matches are wall-clock minutes, found without a zone and then placed in it."""
    try:
        spec = CronSpec.parse(expr)
    except ValueError:
        return None
    local, earlier = _wall_clock(after, zone)
    if spec.hours_any and earlier is not None:
        local = earlier  # near a repeated hour: look from before it, not to miss its second pass
    best: int | None = None
    for _ in range(CRON_SCAN):
        naive = spec.next_match(local)
        if naive is None:
            return best
        found = local_ms(naive, zone)
        if spec.hours_any:
            second = local_ms(naive.replace(fold=1), zone)
            if found < second and after < second and (best is None or second < best):
                best = second  # a repeated time: its second pass matches too
        if found > after:
            return found if best is None or found < best else best
        local = naive + ONE_MINUTE
    return best
