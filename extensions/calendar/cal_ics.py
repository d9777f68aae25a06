"""The whole calendar as one iCalendar file (RFC 5545).

Timed events carry their local times with their zone's IANA name (``DTSTART;TZID=
Europe/Rome:20261204T200000``), and each zone named has its ``VTIMEZONE``: its changes
of offset over the years the events span, found from ``zoneinfo`` (one observance per
change, as the format allows); all-day events are
dates (``DTEND`` the day after the last, as the format has it). A repeat is an ``RRULE``
whose ``UNTIL`` is the last day's end in UTC; skipped days are ``EXDATE``s. The format's
own rule that a monthly repeat on the 31st (or a yearly one on February 29th) skips
the months without that day is the calendar's too. Text is escaped and lines folded
at 75 octets, ended with CRLF.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from cal_events import Event
from cal_time import aware

PRODID = "-//Workbench//Calendar add-on//EN"


def escape(value: str) -> str:
    return (value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n"))


def fold(line: str) -> str:
    """A content line folded at 75 octets (never inside a UTF-8 sequence)."""
    out, current, size = [], "", 0
    for char in line:
        width = len(char.encode("utf-8"))
        if size + width > 75:
            out.append(current)
            current, size = " ", 1
        current += char
        size += width
    out.append(current)
    return "\r\n".join(out)


def _local(text: str) -> str:
    return dt.datetime.fromisoformat(text).strftime("%Y%m%dT%H%M%S")


def _date(day: dt.date | str) -> str:
    return (dt.date.fromisoformat(day) if isinstance(day, str) else day).strftime("%Y%m%d")


def vevent(event: Event, stamp: str) -> list[str]:
    lines = ["BEGIN:VEVENT", f"UID:{escape(event.uid)}", f"DTSTAMP:{stamp}"]
    if event.all_day:
        last = dt.date.fromisoformat(event.end) + dt.timedelta(days=1)
        lines += [f"DTSTART;VALUE=DATE:{_date(event.start)}", f"DTEND;VALUE=DATE:{_date(last)}"]
    else:
        lines += [f"DTSTART;TZID={event.zone}:{_local(event.start)}",
                  f"DTEND;TZID={event.zone}:{_local(event.end)}"]
    lines.append(f"SUMMARY:{escape(event.title)}")
    if event.place:
        lines.append(f"LOCATION:{escape(event.place)}")
    if event.notes:
        lines.append(f"DESCRIPTION:{escape(event.notes)}")
    if event.attendees:
        lines.append(f"COMMENT:{escape('Attendees: ' + event.attendees)}")
    if event.repeat is not None:
        rule = f"RRULE:FREQ={event.repeat.freq.upper()};INTERVAL={event.repeat.interval}"
        if event.repeat.until is not None:
            if event.all_day:
                rule += f";UNTIL={_date(event.repeat.until)}"
            else:
                start = dt.datetime.fromisoformat(event.start)
                last = aware(dt.datetime.combine(event.repeat.until, start.time()), event.zone)
                rule += f";UNTIL={last.astimezone(dt.timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"
        lines.append(rule)
        for day in event.skipped:
            if event.all_day:
                lines.append(f"EXDATE;VALUE=DATE:{_date(day)}")
            else:
                at = dt.datetime.combine(dt.date.fromisoformat(day),
                                         dt.datetime.fromisoformat(event.start).time())
                lines.append(f"EXDATE;TZID={event.zone}:{at.strftime('%Y%m%dT%H%M%S')}")
    if event.created:
        lines.append(f"CREATED:{event.created.replace('-', '').replace(':', '')}")
    if event.updated:
        lines.append(f"LAST-MODIFIED:{event.updated.replace('-', '').replace(':', '')}")
    lines.append("END:VEVENT")
    return lines


def _offset(delta: dt.timedelta | None) -> str:
    minutes = int((delta or dt.timedelta()).total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def _transitions(name: str, first_year: int, last_year: int) -> list[tuple[dt.datetime, dt.datetime]]:
    """The instants (UTC) the zone's offset changes in those years, each with the
    instant just before it."""
    tz = ZoneInfo(name)
    found = []
    moment = dt.datetime(first_year, 1, 1, tzinfo=dt.timezone.utc)
    end = dt.datetime(last_year + 1, 1, 1, tzinfo=dt.timezone.utc)
    step = dt.timedelta(days=1)
    before = moment.astimezone(tz).utcoffset()
    while moment < end:
        following = moment + step
        if following.astimezone(tz).utcoffset() != before:
            low, high = moment, following  # the change is in (low, high]: narrow it to the minute
            while high - low > dt.timedelta(minutes=1):
                middle = low + (high - low) / 2
                if middle.astimezone(tz).utcoffset() == before:
                    low = middle
                else:
                    high = middle
            high = high.replace(second=0, microsecond=0)
            found.append((low, high))
            before = following.astimezone(tz).utcoffset()
        moment = following
    return found


def vtimezone(name: str, first_year: int, last_year: int) -> list[str]:
    """The zone's ``VTIMEZONE`` for the years given: a ``STANDARD`` or ``DAYLIGHT``
    observance per change of offset (its ``DTSTART`` the local time before it)."""
    tz = ZoneInfo(name)
    lines = ["BEGIN:VTIMEZONE", f"TZID:{name}"]
    start = dt.datetime(first_year, 1, 1, tzinfo=dt.timezone.utc).astimezone(tz)
    lines += ["BEGIN:STANDARD" if not start.dst() else "BEGIN:DAYLIGHT",
              f"DTSTART:{first_year}0101T000000", f"TZOFFSETFROM:{_offset(start.utcoffset())}",
              f"TZOFFSETTO:{_offset(start.utcoffset())}", f"TZNAME:{escape(start.tzname() or name)}",
              "END:STANDARD" if not start.dst() else "END:DAYLIGHT"]
    for low, high in _transitions(name, first_year, last_year):
        old, new = low.astimezone(tz), high.astimezone(tz)
        kind = "DAYLIGHT" if new.dst() else "STANDARD"
        local = (high + (old.utcoffset() or dt.timedelta())).replace(tzinfo=None)
        lines += [f"BEGIN:{kind}", f"DTSTART:{local.strftime('%Y%m%dT%H%M%S')}",
                  f"TZOFFSETFROM:{_offset(old.utcoffset())}", f"TZOFFSETTO:{_offset(new.utcoffset())}",
                  f"TZNAME:{escape(new.tzname() or name)}", f"END:{kind}"]
    lines.append("END:VTIMEZONE")
    return lines


def _years(events: list[Event], now: dt.datetime) -> dict[str, tuple[int, int]]:
    """For each zone timed events name, the years they span (an open repeat: to two
    years from now, at least its own start's)."""
    spans: dict[str, tuple[int, int]] = {}
    for event in events:
        if event.all_day:
            continue
        first = int(event.start[:4])
        last = int(event.end[:4])
        if event.repeat is not None:
            last = event.repeat.until.year if event.repeat.until else max(first, now.year) + 2
        low, high = spans.get(event.zone, (first, last))
        spans[event.zone] = (min(low, first), min(max(high, last), first + 30))
    return spans


def export(events: list[Event], now: dt.datetime) -> str:
    stamp = now.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    lines: list[Any] = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODID}", "CALSCALE:GREGORIAN"]
    for name, (first, last) in sorted(_years(events, now).items()):
        lines += vtimezone(name, first, last)
    for event in events:
        lines += vevent(event, stamp)
    lines.append("END:VCALENDAR")
    return "".join(fold(line) + "\r\n" for line in lines)
