"""The calendar's pages as Adaptive Cards 1.5 documents (the subset the host draws):
the month, an agenda of 60 days, the form to add or change an event, the default zone.

Each action names a tool of this add-on by its own name (``event-save``,
``page-month``); a form's inputs are merged into the action's data by the host. A page
opens again after each action with its own arguments, so a navigation action (another
month, the event to change) records where it went and the page shows that.
"""

from __future__ import annotations

import calendar as _calendar
import datetime as dt
from typing import Any

from cal_events import LIMITS, Event
from cal_time import FREQUENCIES

AGENDA_DAYS = 60
AGENDA_SHOWN = 120
"""The most occurrences the agenda draws (the page says when it was cut)."""
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def card(body: list[dict[str, Any]], actions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "AdaptiveCard", "version": "1.5", "body": body}
    if actions:
        out["actions"] = actions
    return out


def heading(text: str) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "size": "large", "weight": "bolder", "wrap": True}


def line(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **extra}


def execute(title: str, verb: str, data: dict[str, Any] | None = None, *,
            inputs: bool = False, style: str = "default") -> dict[str, Any]:
    action: dict[str, Any] = {"type": "Action.Execute", "title": title, "verb": verb,
                              "data": data or {}, "associatedInputs": "auto" if inputs else "none"}
    if style != "default":
        action["style"] = style
    return action


def _when(item: dict[str, Any]) -> str:
    if item["all_day"]:
        return "all day" if item["start"] == item["end"] else f"all day until {item['end']}"
    return f"{item['start'][11:]}–{item['end'][11:]}"


def month(year: int, month_number: int, items: list[dict[str, Any]], zone: str,
          today: dt.date, truncated: bool) -> dict[str, Any]:
    """A month as a table of weeks, each day with its first events."""
    by_day: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_day.setdefault(item["day"], []).append(item)
    rows = [{"type": "TableRow", "cells": [
        {"type": "TableCell", "items": [line(name, weight="bolder")]} for name in WEEKDAYS]}]
    for week in _calendar.Calendar().monthdatescalendar(year, month_number):
        cells = []
        for day in week:
            found = by_day.get(day.isoformat(), [])
            label = f"{day.day}" + (" (today)" if day == today else "")
            items_in = [line(label, weight="bolder" if day == today else "default",
                             isSubtle=day.month != month_number)]
            for item in found[:3]:
                items_in.append(line(f"{'' if item['all_day'] else item['start'][11:] + ' '}{item['title']}",
                                     size="small"))
            if len(found) > 3:
                items_in.append(line(f"+{len(found) - 3} more", size="small", isSubtle=True))
            cells.append({"type": "TableCell", "items": items_in})
        rows.append({"type": "TableRow", "cells": cells})
    first = dt.date(year, month_number, 1)
    previous = (first - dt.timedelta(days=1)).strftime("%Y-%m")
    following = (first + dt.timedelta(days=32)).strftime("%Y-%m")
    body = [heading(f"{_calendar.month_name[month_number]} {year}"),
            line(f"Times in {zone}.", isSubtle=True),
            {"type": "Table", "columns": [{"width": 1} for _ in WEEKDAYS], "rows": rows,
             "firstRowAsHeader": True}]
    if truncated:
        body.append(line("This month has more events than the page lists.", color="warning"))
    body += [line("Add an event", weight="bolder", separator=True),
             {"type": "Input.Text", "id": "title", "label": "Title", "maxLength": LIMITS["title"]},
             {"type": "Input.Date", "id": "date", "label": "Day", "value": today.isoformat()},
             {"type": "Input.Time", "id": "time", "label": "At", "value": "09:00"},
             {"type": "ActionSet", "actions": [execute("Add", "event-save", inputs=True, style="positive")]}]
    return card(body, [execute("◀ Previous", "page-month", {"month": previous}),
                       execute("Today", "page-month", {"month": today.strftime("%Y-%m")}),
                       execute("Next ▶", "page-month", {"month": following})])


def agenda(items: list[dict[str, Any]], first: dt.date, zone: str, truncated: bool) -> dict[str, Any]:
    """The next 60 days, day by day, each event with its own actions."""
    body: list[dict[str, Any]] = [heading(f"Agenda from {first.isoformat()}, {AGENDA_DAYS} days"),
                                  line(f"Times in {zone}.", isSubtle=True)]
    shown = items[:AGENDA_SHOWN]
    current = ""
    for item in shown:
        if item["day"] != current:
            current = item["day"]
            weekday = dt.date.fromisoformat(current).strftime("%A")
            body.append(line(f"{weekday} {current}", weight="bolder", separator=True))
        facts = [{"title": "When", "value": _when(item)}]
        if item.get("place"):
            facts.append({"title": "Where", "value": item["place"]})
        if item.get("local"):
            local = item["local"]
            facts.append({"title": "Local", "value": f"{local['start'][11:]} {local['zone']}"})
        actions = [execute("Change (on the Event page)", "page-form", {"id": item["id"]})]
        if item["repeats"]:
            actions.append(execute(f"Skip {item['occurrence']}", "event-delete",
                                   {"id": item["id"], "occurrence": item["occurrence"]}))
        actions.append(execute("Delete", "event-delete", {"id": item["id"]}, style="destructive"))
        body.append({"type": "Container", "items": [
            line(item["title"] + (" ↻" if item["repeats"] else "")),
            {"type": "FactSet", "facts": facts},
            {"type": "ActionSet", "actions": actions}]})
    if not shown:
        body.append(line("Nothing in the next 60 days.", isSubtle=True))
    if truncated or len(items) > len(shown):
        body.append(line("The list was cut: it shows the first "
                         f"{len(shown)} occurrences.", color="warning"))
    return card(body, [execute("New event (on the Event page)", "page-form", {"day": first.isoformat()}),
                       execute("Export (ICS)", "calendar-export")])


def form(event: Event | None, day: dt.date, zone: str) -> dict[str, Any]:
    """The form that adds an event (``event``: None) or changes one."""
    start = event.start if event else f"{day.isoformat()}T09:00"
    end = event.end if event else f"{day.isoformat()}T10:00"
    all_day = bool(event and event.all_day)
    repeat = event.repeat if event else None
    body: list[dict[str, Any]] = [
        heading(f"Change “{event.title}”" if event else "New event"),
        {"type": "Input.Text", "id": "title", "label": "Title", "isRequired": True,
         "maxLength": LIMITS["title"], "value": event.title if event else ""},
        {"type": "Input.Date", "id": "date", "label": "Day", "isRequired": True,
         "value": start[:10]},
        {"type": "Input.Time", "id": "time", "label": "Starts",
         "value": "" if all_day else start[11:16]},
        {"type": "Input.Date", "id": "end_date", "label": "Last day", "value": end[:10]},
        {"type": "Input.Time", "id": "end_time", "label": "Ends",
         "value": "" if all_day else end[11:16]},
        {"type": "Input.Toggle", "id": "all_day", "title": "All day", "label": "All day",
         "value": "true" if all_day else "false", "valueOn": "true", "valueOff": "false"},
        {"type": "Input.Text", "id": "zone", "label": "Time zone", "placeholder": zone,
         "value": event.zone if event else zone, "maxLength": 64},
        {"type": "Input.Text", "id": "place", "label": "Place", "maxLength": LIMITS["place"],
         "value": event.place if event else ""},
        {"type": "Input.Text", "id": "attendees", "label": "Attendees",
         "maxLength": LIMITS["attendees"], "value": event.attendees if event else ""},
        {"type": "Input.Text", "id": "notes", "label": "Notes", "isMultiline": True,
         "maxLength": LIMITS["notes"], "value": event.notes if event else ""},
        {"type": "Input.ChoiceSet", "id": "repeat", "label": "Repeats",
         "value": repeat.freq if repeat else "none",
         "choices": [{"title": "Does not repeat", "value": "none"}]
         + [{"title": freq.capitalize(), "value": freq} for freq in FREQUENCIES]},
        {"type": "Input.Number", "id": "interval", "label": "Every (1 = each)", "min": 1,
         "max": 999, "value": repeat.interval if repeat else 1},
        {"type": "Input.Date", "id": "until", "label": "Repeats until (empty: for ever)",
         "value": repeat.until.isoformat() if repeat and repeat.until else ""},
    ]
    data: dict[str, Any] = {"id": event.id} if event else {}
    actions = [execute("Save", "event-save", data, inputs=True, style="positive")]
    if event:
        actions.append(execute("Delete", "event-delete", {"id": event.id}, style="destructive"))
        actions.append(execute("New event instead", "page-form", {"day": day.isoformat()}))
    return card(body, actions)


def zone_page(zone: str, server: str) -> dict[str, Any]:
    return card([heading("Default time zone"),
                 line(f"New events are in {zone} unless they name another. An event keeps "
                      "the zone it was written in when this changes."),
                 line(f"This machine's zone: {server}.", isSubtle=True),
                 {"type": "Input.Text", "id": "zone", "label": "Zone (IANA name, e.g. Europe/Rome)",
                  "value": zone, "maxLength": 64, "isRequired": True}],
                [execute("Set", "zone-set", inputs=True, style="positive"),
                 execute("Export (ICS)", "calendar-export")])
