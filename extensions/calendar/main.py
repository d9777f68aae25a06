"""The Calendar add-on's tools: one calendar for the person, in this add-on's private
database (``ctx.db``). Each tool runs in its own sandboxed worker with no other grant.

Reads answer at once; every write also answers a ``change`` (what the person sees and
the person-only ``event-restore`` that undoes it), which the host keeps in its change
list. The ``page-*`` tools answer the pages' card documents; ``event-save`` takes the
form's fields as the page sends them.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cal_events as events  # noqa: E402
import cal_ics  # noqa: E402
import cal_pages as pages  # noqa: E402
from cal_time import TimeProblem, parse_date, zone  # noqa: E402

Refused = events.Refused


def _db(ctx: Any) -> Any:
    events.ready(ctx.db)
    return ctx.db


def _when(event: events.Event) -> str:
    if event.all_day:
        day = dt.date.fromisoformat(event.start)
        text = day.strftime("%a %Y-%m-%d")
        return text if event.end == event.start else f"{text} to {event.end}"
    start = dt.datetime.fromisoformat(event.start)
    return f"{start.strftime('%a %Y-%m-%d %H:%M')} ({event.zone})"


def _change(summary: str, event_id: int, before: events.Event | None) -> dict[str, Any]:
    return {"summary": summary[:300],
            "undo": {"tool": "event-restore",
                     "arguments": {"id": event_id, "before": before.snapshot() if before else None}}}


def _range(db: Any, args: dict[str, Any]) -> tuple[dt.date, dt.date]:
    try:
        first = parse_date(args["from"], "from") if args.get("from") else events.today(db)
        if args.get("to"):
            last = parse_date(args["to"], "to")
        else:
            days = args.get("days") or events.DEFAULT_DAYS
            last = first + dt.timedelta(days=int(days) - 1)
    except TimeProblem as exc:
        raise Refused(str(exc)) from None
    if last < first:
        raise Refused("to is on or after from")
    if (last - first).days + 1 > events.MAX_DAYS:
        raise Refused(f"a listing covers at most {events.MAX_DAYS} days")
    return first, last


# --- reads ---------------------------------------------------------------------------


def events_list(args, ctx):
    db = _db(ctx)
    first, last = _range(db, args)
    shown_zone = default_zone = events.default_zone(db)
    if args.get("zone"):
        try:
            zone(args["zone"])
        except TimeProblem as exc:
            raise Refused(str(exc)) from None
        shown_zone = args["zone"]
    found, cut = events.occurrences(events.all_events(db), first, last, shown_zone)
    answer = {"from": first.isoformat(), "to": last.isoformat(), "zone": shown_zone,
              "today": events.today(db).isoformat(), "occurrences": found, "truncated": cut}
    if cut:
        answer["note"] = (f"more than {events.MAX_OCCURRENCES} occurrences: the list was cut; "
                          "ask for fewer days")
    if shown_zone != default_zone:
        answer["default_zone"] = default_zone
    return answer


def events_search(args, ctx):
    db = _db(ctx)
    query = args.get("query", "")
    if not isinstance(query, str) or not query.strip():
        raise Refused("query is the words to look for")
    limit = args.get("limit") or 20
    found = events.search(events.all_events(db), query[:200], limit)
    return {"query": query, "events": [event.to_json() for event in found],
            "more": len(found) >= limit}


def event_get(args, ctx):
    return {"event": events.get(_db(ctx), args.get("id")).to_json()}


def calendar_export(args, ctx):
    every = events.all_events(_db(ctx))
    return {"filename": "calendar.ics", "events": len(every),
            "ics": cal_ics.export(every, events.now_utc())}


# --- writes --------------------------------------------------------------------------


def event_create(args, ctx):
    db = _db(ctx)
    event = events.create(db, args)
    return {"event": event.to_json(),
            "change": _change(f"Added “{event.title}” on {_when(event)}", event.id, None)}


def event_update(args, ctx):
    db = _db(ctx)
    values = {k: v for k, v in args.items() if k != "id"}
    if not values:
        raise Refused("name at least one field to change")
    before, after = events.update(db, args.get("id"), values)
    return {"event": after.to_json(),
            "change": _change(f"Changed “{after.title}” ({_when(after)})", after.id, before)}


def event_delete(args, ctx):
    db = _db(ctx)
    if args.get("occurrence"):
        before = events.skip(db, args.get("id"), args["occurrence"])
        return {"skipped": args["occurrence"], "event": events.get(db, before.id).to_json(),
                "change": _change(f"Skipped “{before.title}” on {args['occurrence']}",
                                  before.id, before)}
    before = events.delete(db, args.get("id"))
    return {"deleted": before.id,
            "change": _change(f"Deleted “{before.title}” ({_when(before)})", before.id, before)}


def event_restore(args, ctx):
    """The undo of a write (person only): puts the event back as it was."""
    events.restore(_db(ctx), args.get("id"), args.get("before"))
    return {"restored": args.get("id"), "exists": args.get("before") is not None}


def zone_set(args, ctx):
    """Set the default zone (person only: the page's setting)."""
    db = _db(ctx)
    name = (args.get("zone") or "").strip()
    try:
        before = events.set_default_zone(db, name)
    except TimeProblem as exc:
        raise Refused(str(exc)) from None
    answer: dict[str, Any] = {"zone": name, "before": before, "card": pages.zone_page(name, events.server_zone())}
    if before != name:
        answer["change"] = {"summary": f"Set the calendar's default time zone to {name} (was {before})",
                            "undo": {"tool": "zone-set", "arguments": {"zone": before}}}
    return answer


def _form_values(args: dict[str, Any]) -> dict[str, Any]:
    """The form's fields (text, as a page sends them) as event fields."""
    all_day = args.get("all_day") in (True, "true")
    day, end_day = args.get("date"), args.get("end_date") or args.get("date")
    if all_day:
        start, end = day, end_day
    else:
        if not args.get("time"):
            raise Refused("a time is needed to start at (or tick All day)")
        start = f"{day}T{args['time']}"
        end = f"{end_day}T{args['end_time']}" if args.get("end_time") else None
    freq = args.get("repeat") or "none"
    repeat = None if freq == "none" else {"freq": freq, "interval": args.get("interval") or 1,
                                          "until": args.get("until") or None}
    return {"title": args.get("title"), "start": start, "end": end, "all_day": all_day,
            "zone": args.get("zone") or None, "place": args.get("place"),
            "attendees": args.get("attendees"), "notes": args.get("notes"), "repeat": repeat}


def event_save(args, ctx):
    """The form's Save (person only): adds the event, or changes the one of ``id``."""
    values = _form_values(args)
    if args.get("id") is None:
        answer = event_create(values, ctx)
    else:
        answer = event_update({"id": args["id"], **values}, ctx)
    _view(ctx.db, "form", {}, save=True)  # the Event page offers a new one next
    answer["card"] = _agenda_card(ctx.db)
    return answer


# --- pages ---------------------------------------------------------------------------


def _agenda_card(db: Any) -> dict[str, Any]:
    first = events.today(db)
    shown_zone = events.default_zone(db)
    found, cut = events.occurrences(events.all_events(db), first,
                                    first + dt.timedelta(days=pages.AGENDA_DAYS - 1), shown_zone)
    return pages.agenda(found, first, shown_zone, cut)


def _view(db: Any, key: str, value: Any = None, *, save: bool = False) -> Any:
    """What a page shows, kept between its openings (a page reopens with its own
    arguments after each action: a navigation action records where it went here)."""
    if save:
        db.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                   "SET value = excluded.value", [f"view.{key}", json.dumps(value)])
        return value
    rows = db.query("SELECT value FROM settings WHERE key = ?", [f"view.{key}"])
    return json.loads(rows[0]["value"]) if rows else None


def page_month(args, ctx):
    db = _db(ctx)
    today = events.today(db)
    if args.get("month"):
        _view(db, "month", args["month"], save=True)
    wanted = args.get("month") or _view(db, "month") or today.strftime("%Y-%m")
    try:
        first = parse_date(f"{wanted}-01", "month")
    except TimeProblem:
        raise Refused("month is written YYYY-MM") from None
    following = (first + dt.timedelta(days=32)).replace(day=1)
    shown_zone = events.default_zone(db)
    found, cut = events.occurrences(events.all_events(db), first - dt.timedelta(days=7),
                                    following + dt.timedelta(days=7), shown_zone)
    return {"card": pages.month(first.year, first.month, found, shown_zone, today, cut)}


def page_agenda(args, ctx):
    return {"card": _agenda_card(_db(ctx))}


def page_form(args, ctx):
    """The form for the event ``id``, or a new one on ``day``; with neither, the one a
    last action chose (the Event page opens with no arguments)."""
    db = _db(ctx)
    if "id" in args or "day" in args:
        target = _view(db, "form", {"id": args.get("id"), "day": args.get("day")}, save=True)
    else:
        target = _view(db, "form") or {}
    try:
        event = events.get(db, target["id"]) if target.get("id") is not None else None
    except Refused:
        event = None  # deleted since: a new one
    try:
        day = parse_date(target["day"], "day") if target.get("day") else events.today(db)
    except TimeProblem as exc:
        raise Refused(str(exc)) from None
    return {"card": pages.form(event, day, events.default_zone(db))}


def page_zone(args, ctx):
    db = _db(ctx)
    return {"card": pages.zone_page(events.default_zone(db), events.server_zone())}
