"""The calendar's events in the add-on's private database (``ctx.db``): checking what a
tool is given, reading and writing events, and listing a range of days with the repeats
expanded.

Every write returns what the host records as a change (``change``), naming the
person-only ``event-restore`` with the event as it was before (``null``: it did not
exist), so that the person can undo it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import unicodedata
import uuid
from dataclasses import dataclass
from typing import Any

from cal_time import (Repeat, TimeProblem, aware, local_text, parse_date, parse_local,
                      zone)

LIMITS = {"title": 200, "notes": 4000, "place": 200, "attendees": 500}
"""The longest text of each field, in characters."""
MAX_EVENTS = 5000
MAX_DAYS = 400
MAX_OCCURRENCES = 500
MAX_SKIPS = 500
DEFAULT_DAYS = 7
"""``events-list`` with no range: today and six more days."""

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY, uid TEXT NOT NULL, title TEXT NOT NULL,
        all_day INTEGER NOT NULL, start TEXT NOT NULL, end TEXT NOT NULL, zone TEXT NOT NULL,
        notes TEXT NOT NULL DEFAULT '', place TEXT NOT NULL DEFAULT '',
        attendees TEXT NOT NULL DEFAULT '', repeat TEXT, created TEXT NOT NULL,
        updated TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS skips (
        event_id INTEGER NOT NULL, day TEXT NOT NULL, PRIMARY KEY (event_id, day))""",
    "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

FIELDS = ("title", "start", "end", "all_day", "zone", "notes", "place", "attendees", "repeat")


BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The embeddings, overrides and isolates that reorder the text around them (they can make
it read as other text): refused in every field."""


class Refused(ValueError):
    """Input the calendar does not take; the message says what and why."""


def ready(db: Any) -> None:
    for statement in SCHEMA:
        db.execute(statement)


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def server_zone() -> str:
    """The zone of the machine the add-on runs on (``TZ``, then ``/etc/localtime``), or UTC."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        candidates.append(os.path.realpath("/etc/localtime").split("/zoneinfo/", 1)[1])
    except (OSError, IndexError):
        pass
    for name in candidates:
        try:
            zone(name)
            return name
        except TimeProblem:
            continue
    return "UTC"


def default_zone(db: Any) -> str:
    rows = db.query("SELECT value FROM settings WHERE key = 'zone'")
    return rows[0]["value"] if rows else server_zone()


def set_default_zone(db: Any, name: str) -> str:
    zone(name)
    before = default_zone(db)
    db.execute("INSERT INTO settings (key, value) VALUES ('zone', ?) "
               "ON CONFLICT (key) DO UPDATE SET value = excluded.value", [name])
    return before


def today(db: Any) -> dt.date:
    return now_utc().astimezone(zone(default_zone(db))).date()


# --- checking what a tool is given ---------------------------------------------------


def text(value: Any, field: str, *, lines: bool = False) -> str:
    """A free-text field: at most its limit, no control characters (``lines``: new lines
    and tabs allowed)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refused(f"{field} is text")
    if len(value) > LIMITS[field]:
        raise Refused(f"{field} has {len(value)} characters; at most {LIMITS[field]}")
    allowed = "\n\t" if lines else ""
    for char in value:
        if char in BIDI_CONTROLS:
            raise Refused(f"{field} holds the bidirectional control U+{ord(char):04X}, which can "
                          "make text read as other text")
        if unicodedata.category(char) in ("Cc", "Cs") and char not in allowed:
            raise Refused(f"{field} holds the control character U+{ord(char):04X}"
                          + ("" if lines else " (it is one line)"))
    return value


@dataclass
class Event:
    """One event as stored: local times in its zone (dates for an all-day event)."""

    title: str
    all_day: bool
    start: str
    end: str
    zone: str
    notes: str = ""
    place: str = ""
    attendees: str = ""
    repeat: Repeat | None = None
    id: int | None = None
    uid: str = ""
    created: str = ""
    updated: str = ""
    skipped: tuple[str, ...] = ()

    def first_day(self) -> dt.date:
        return dt.date.fromisoformat(self.start[:10])

    def span(self) -> tuple[dt.datetime, dt.timedelta]:
        """The first start (naive local; midnight for an all-day event) and how long it lasts."""
        if self.all_day:
            first = dt.datetime.combine(self.first_day(), dt.time())
            last = dt.datetime.combine(dt.date.fromisoformat(self.end) + dt.timedelta(days=1), dt.time())
            return first, last - first
        start = dt.datetime.fromisoformat(self.start)
        return start, dt.datetime.fromisoformat(self.end) - start

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "all_day": self.all_day, "start": self.start,
                "end": self.end, "zone": self.zone, "notes": self.notes, "place": self.place,
                "attendees": self.attendees,
                "repeat": self.repeat.to_json() if self.repeat else None,
                "skipped": list(self.skipped)}

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to put it back as it is (``event-restore``)."""
        return {**self.to_json(), "uid": self.uid, "created": self.created, "updated": self.updated}


def build(values: dict[str, Any], default: str) -> Event:
    """An event from a tool's fields, every one checked (``Refused`` says which)."""
    title = text(values.get("title"), "title").strip()
    if not title:
        raise Refused("title is required (what the event is)")
    all_day = values.get("all_day")
    if all_day is None:
        all_day = isinstance(values.get("start"), str) and len(values["start"]) == 10
    if not isinstance(all_day, bool):
        raise Refused("all_day is true or false")
    zone_name = values.get("zone") or default
    try:
        zone(zone_name)
        if all_day:
            first = parse_date(values.get("start"), "start")
            last = parse_date(values["end"], "end") if values.get("end") else first
            if last < first:
                raise Refused("end is on or after start")
            start, end = first.isoformat(), last.isoformat()
        else:
            begins = parse_local(values.get("start"), "start")
            ends = (parse_local(values["end"], "end") if values.get("end")
                    else begins + dt.timedelta(hours=1))
            if ends < begins:
                raise Refused("end is at or after start")
            start, end = local_text(begins), local_text(ends)
        if (dt.date.fromisoformat(end[:10]) - dt.date.fromisoformat(start[:10])).days > MAX_DAYS:
            raise Refused(f"an event lasts at most {MAX_DAYS} days")
        repeat = Repeat.read(values.get("repeat"), dt.date.fromisoformat(start[:10]))
    except TimeProblem as exc:
        raise Refused(str(exc)) from None
    return Event(title=title, all_day=all_day, start=start, end=end, zone=zone_name,
                 notes=text(values.get("notes"), "notes", lines=True),
                 place=text(values.get("place"), "place").strip(),
                 attendees=text(values.get("attendees"), "attendees").strip(), repeat=repeat)


# --- reading and writing -----------------------------------------------------------


def _from_row(row: dict[str, Any], skipped: tuple[str, ...]) -> Event:
    repeat = None
    if row["repeat"]:
        data = json.loads(row["repeat"])
        repeat = Repeat(data["freq"], data["interval"],
                        dt.date.fromisoformat(data["until"]) if data.get("until") else None)
    return Event(id=row["id"], uid=row["uid"], title=row["title"], all_day=bool(row["all_day"]),
                 start=row["start"], end=row["end"], zone=row["zone"], notes=row["notes"],
                 place=row["place"], attendees=row["attendees"], repeat=repeat,
                 created=row["created"], updated=row["updated"], skipped=skipped)


def get(db: Any, event_id: Any) -> Event:
    if isinstance(event_id, bool) or not isinstance(event_id, int):
        raise Refused("id is the number of an event (events-list and events-search give it)")
    rows = db.query("SELECT * FROM events WHERE id = ?", [event_id])
    if not rows:
        raise Refused(f"there is no event {event_id}")
    skipped = tuple(r["day"] for r in db.query(
        "SELECT day FROM skips WHERE event_id = ? ORDER BY day", [event_id]))
    return _from_row(rows[0], skipped)


def all_events(db: Any) -> list[Event]:
    skips: dict[int, list[str]] = {}
    for row in db.query("SELECT event_id, day FROM skips ORDER BY day"):
        skips.setdefault(row["event_id"], []).append(row["day"])
    return [_from_row(row, tuple(skips.get(row["id"], ())))
            for row in db.query("SELECT * FROM events ORDER BY start, id")]


def _write(db: Any, event: Event) -> None:
    db.execute(
        "INSERT OR REPLACE INTO events (id, uid, title, all_day, start, end, zone, notes, place, "
        "attendees, repeat, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [event.id, event.uid, event.title, 1 if event.all_day else 0, event.start, event.end,
         event.zone, event.notes, event.place, event.attendees,
         json.dumps(event.repeat.to_json()) if event.repeat else None, event.created, event.updated])
    db.execute("DELETE FROM skips WHERE event_id = ?", [event.id])
    for day in event.skipped:
        db.execute("INSERT INTO skips (event_id, day) VALUES (?, ?)", [event.id, day])


def _stamp() -> str:
    return now_utc().strftime("%Y-%m-%dT%H:%M:%SZ")


def create(db: Any, values: dict[str, Any]) -> Event:
    event = build(values, default_zone(db))
    [count] = db.query("SELECT COUNT(*) AS n FROM events")
    if count["n"] >= MAX_EVENTS:
        raise Refused(f"the calendar holds {MAX_EVENTS} events, the most it keeps; delete some first")
    event.uid = f"{uuid.uuid4()}@workbench-calendar"
    event.created = event.updated = _stamp()
    added = db.execute(
        "INSERT INTO events (uid, title, all_day, start, end, zone, notes, place, attendees, "
        "repeat, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [event.uid, event.title, 1 if event.all_day else 0, event.start, event.end, event.zone,
         event.notes, event.place, event.attendees,
         json.dumps(event.repeat.to_json()) if event.repeat else None, event.created, event.updated])
    event.id = int(added["lastInsertRowId"])
    return event


def update(db: Any, event_id: Any, values: dict[str, Any]) -> tuple[Event, Event]:
    """The event before and after; fields absent stay, ``null`` clears a free-text field
    or the repeat."""
    before = get(db, event_id)
    merged = before.to_json()
    for field in FIELDS:
        if field in values:
            merged[field] = values[field]
    if "all_day" in values and values["all_day"] != before.all_day and "start" not in values:
        raise Refused("changing all_day needs a new start (and end) of the new form")
    if "start" in values and "end" not in values:
        # A new start keeps the event's length: the old end could come before it.
        _old, length = before.span()
        try:
            if merged.get("all_day", before.all_day):
                first = parse_date(values["start"], "start")
                merged["end"] = (first + dt.timedelta(days=max(length.days - 1, 0))).isoformat()
            else:
                merged["end"] = local_text(parse_local(values["start"], "start") + length)
        except TimeProblem as exc:
            raise Refused(str(exc)) from None
    after = build(merged, before.zone)
    after.id, after.uid, after.created, after.updated = before.id, before.uid, before.created, _stamp()
    after.skipped = before.skipped if after.repeat else ()
    _write(db, after)
    return before, after


def delete(db: Any, event_id: Any) -> Event:
    before = get(db, event_id)
    db.execute("DELETE FROM skips WHERE event_id = ?", [before.id])
    db.execute("DELETE FROM events WHERE id = ?", [before.id])
    return before


def skip(db: Any, event_id: Any, occurrence: Any) -> Event:
    """Skip one day of a repeating event (its local start date)."""
    before = get(db, event_id)
    try:
        day = parse_date(occurrence, "occurrence")
    except TimeProblem as exc:
        raise Refused(str(exc)) from None
    if before.repeat is None:
        raise Refused(f"event {before.id} does not repeat; delete it without occurrence")
    if day.isoformat() in before.skipped:
        raise Refused(f"{day} is skipped already")
    if not any(True for _ in before.repeat.dates(before.first_day(), day, day)):
        raise Refused(f"event {before.id} does not happen on {day}")
    if len(before.skipped) >= MAX_SKIPS:
        raise Refused(f"an event skips at most {MAX_SKIPS} days")
    db.execute("INSERT INTO skips (event_id, day) VALUES (?, ?)", [before.id, day.isoformat()])
    return before


def restore(db: Any, event_id: Any, snapshot: Any) -> None:
    """Put an event back as ``snapshot`` had it (None: remove it) — the undo of a write."""
    if isinstance(event_id, bool) or not isinstance(event_id, int):
        raise Refused("id is the number of an event")
    if snapshot is None:
        db.execute("DELETE FROM skips WHERE event_id = ?", [event_id])
        db.execute("DELETE FROM events WHERE id = ?", [event_id])
        return
    if not isinstance(snapshot, dict) or snapshot.get("id") != event_id:
        raise Refused("before is the event as it was, with the same id")
    event = build(snapshot, str(snapshot.get("zone") or "UTC"))
    event.id, event.uid = event_id, str(snapshot.get("uid") or f"{uuid.uuid4()}@workbench-calendar")
    event.created = str(snapshot.get("created") or _stamp())
    event.updated = str(snapshot.get("updated") or _stamp())
    skipped = snapshot.get("skipped") or []
    if not isinstance(skipped, list) or len(skipped) > MAX_SKIPS:
        raise Refused("skipped is a list of dates")
    try:
        event.skipped = tuple(parse_date(day, "skipped").isoformat() for day in skipped)
    except TimeProblem as exc:
        raise Refused(str(exc)) from None
    _write(db, event)


# --- listing -------------------------------------------------------------------------


def _occurrence_starts(event: Event, since: dt.date, through: dt.date) -> list[dt.date]:
    first = event.first_day()
    if event.repeat is None:
        return [first] if since <= first <= through else []
    skipped = set(event.skipped)
    return [day for day in event.repeat.dates(first, since, through)
            if day.isoformat() not in skipped]


def occurrences(events: list[Event], first: dt.date, last: dt.date, shown_zone: str,
                limit: int = MAX_OCCURRENCES) -> tuple[list[dict[str, Any]], bool]:
    """The occurrences that touch the days ``first``..``last`` of ``shown_zone``, by
    start; at most ``limit`` (and whether more were left out)."""
    where = zone(shown_zone)
    window_start = dt.datetime.combine(first, dt.time(), tzinfo=where)
    window_end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), tzinfo=where)
    found: list[tuple[Any, dict[str, Any]]] = []
    for event in events:
        start, length = event.span()
        reach = length.days + 2
        for day in _occurrence_starts(event, first - dt.timedelta(days=reach),
                                      last + dt.timedelta(days=2)):
            local = dt.datetime.combine(day, start.time())
            if event.all_day:
                begins, ends = day, day + dt.timedelta(days=max(length.days - 1, 0))
                if ends < first or begins > last:
                    continue
                key = (dt.datetime.combine(begins, dt.time(), tzinfo=where), 0)
                shown = {"start": begins.isoformat(), "end": ends.isoformat(), "day": begins.isoformat()}
            else:
                moment = aware(local, event.zone)
                until = aware(local + length, event.zone)
                # [start, end) touches the window; an event of no length, its instant.
                if moment >= window_end or (until <= window_start if length else moment < window_start):
                    continue
                there, there_end = moment.astimezone(where), until.astimezone(where)
                key = (there, 1)
                shown = {"start": local_text(there.replace(tzinfo=None)),
                         "end": local_text(there_end.replace(tzinfo=None)),
                         "day": there.date().isoformat()}
                if event.zone != shown_zone:
                    shown["local"] = {"start": local_text(local), "end": local_text(local + length),
                                      "zone": event.zone}
            found.append((key, {"id": event.id, "title": event.title, "all_day": event.all_day,
                                **shown, "zone": shown_zone, "place": event.place,
                                "repeats": event.repeat is not None, "occurrence": day.isoformat()}))
    found.sort(key=lambda pair: (pair[0][0], pair[0][1], pair[1]["id"]))
    return [item for _, item in found[:limit]], len(found) > limit


def search_key(value: str) -> str:
    """Text as search compares it: accents dropped, case folded."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def search(events: list[Event], query: str, limit: int) -> list[Event]:
    words = [search_key(word) for word in query.split()]
    found = []
    for event in events:
        haystack = search_key(" ".join((event.title, event.notes, event.place, event.attendees)))
        if all(word in haystack for word in words):
            found.append(event)
            if len(found) >= limit:
                break
    return found
