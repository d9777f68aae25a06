"""The calendar's ICS export read back by another program's parser (icalendar, with
dateutil expanding its repeats), and its pages checked as card documents of the
subset the host draws."""

from __future__ import annotations

import datetime as dt
import json

import icalendar
from dateutil import rrule

from addon_modules import Ctx, addon_path, card_verbs, tools_module
from workbench.cards import parse_card

addon_path("calendar")

import cal_events as events  # noqa: E402
import cal_ics  # noqa: E402

calendar_tools = tools_module("calendar")


def _calendar(tmp_path):
    ctx = Ctx(tmp_path / "calendar.db")
    events.ready(ctx.db)
    events.set_default_zone(ctx.db, "Europe/Rome")
    return ctx


def test_the_export_parses_back_with_zones_repeats_skips_and_escapes(tmp_path):
    ctx = _calendar(tmp_path)
    title = "Dinner; with Sam, Zoë \\ and a very long title " + "x" * 80
    dinner = events.create(ctx.db, {"title": title, "start": "2026-12-04T20:00", "end": "2026-12-04T22:00",
                                    "place": "Trattoria, Rome", "notes": "line one\nline two",
                                    "attendees": "Sam"})
    monthly = events.create(ctx.db, {"title": "Rent", "start": "2026-01-31T09:00", "zone": "America/New_York",
                                     "repeat": {"freq": "monthly", "until": "2026-12-31"}})
    weekly = events.create(ctx.db, {"title": "Yoga", "start": "2026-03-24T18:30",
                                    "repeat": {"freq": "weekly", "interval": 1}})
    events.skip(ctx.db, weekly.id, "2026-03-31")
    events.create(ctx.db, {"title": "Holiday", "start": "2026-08-10", "end": "2026-08-14"})
    text = cal_ics.export(events.all_events(ctx.db), dt.datetime(2026, 12, 3, tzinfo=dt.timezone.utc))
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    parsed = icalendar.Calendar.from_ical(text)
    found = {str(e["SUMMARY"]): e for e in parsed.walk("VEVENT")}
    assert set(found) == {title, "Rent", "Yoga", "Holiday"}
    first = found[title]
    assert first["DTSTART"].dt == dt.datetime(2026, 12, 4, 20, 0, tzinfo=first["DTSTART"].dt.tzinfo)
    assert str(first["DTSTART"].dt.tzinfo) == "Europe/Rome"
    assert str(first["LOCATION"]) == "Trattoria, Rome" and str(first["DESCRIPTION"]) == "line one\nline two"
    assert str(first["UID"]) == dinner.uid
    # Each zone named has its VTIMEZONE, which the parser turns into the same offsets.
    zones = {str(tz["TZID"]): tz.to_tz() for tz in parsed.walk("VTIMEZONE")}
    assert set(zones) == {"America/New_York", "Europe/Rome"}
    for when, offset in ((dt.datetime(2026, 12, 4, 20), 1), (dt.datetime(2026, 7, 1, 12), 2),
                         (dt.datetime(2026, 3, 29, 3, 30), 2), (dt.datetime(2026, 10, 25, 1, 30), 2)):
        assert zones["Europe/Rome"].utcoffset(when) == dt.timedelta(hours=offset), when
    holiday = found["Holiday"]
    assert holiday["DTSTART"].dt == dt.date(2026, 8, 10) and holiday["DTEND"].dt == dt.date(2026, 8, 15)

    # Another program expands the repeats as the calendar does (the 31st, the skip, DST).
    for event, name in ((monthly, "Rent"), (weekly, "Yoga")):
        vevent = found[name]
        start = vevent["DTSTART"].dt
        rule = rrule.rrulestr(vevent["RRULE"].to_ical().decode(), dtstart=start, forceset=True)
        for exdate in vevent.get("EXDATE", []) if isinstance(vevent.get("EXDATE"), list) else (
                [vevent["EXDATE"]] if "EXDATE" in vevent else []):
            for when in exdate.dts:
                rule.exdate(when.dt)
        window = (dt.datetime(2026, 1, 1, tzinfo=start.tzinfo), dt.datetime(2026, 12, 31, 23, tzinfo=start.tzinfo))
        theirs = [d.strftime("%Y-%m-%dT%H:%M") for d in rule.between(*window, inc=True)]
        ours, _ = events.occurrences([events.get(ctx.db, event.id)], dt.date(2026, 1, 1),
                                     dt.date(2026, 12, 31), event.zone)
        assert theirs == [item["start"] for item in ours]
    assert [d[5:7] for d in (i["start"] for i in events.occurrences(
        [events.get(ctx.db, monthly.id)], dt.date(2026, 1, 1), dt.date(2026, 12, 31), "America/New_York")[0])] == [
        "01", "03", "05", "07", "08", "10", "12"]


def test_every_page_is_a_card_of_the_subset(tmp_path):
    ctx = _calendar(tmp_path)
    made = calendar_tools.event_create({"title": "Dinner <b>", "start": "2026-12-04T20:00",
                                        "repeat": {"freq": "weekly"}}, ctx)
    event_id = made["event"]["id"]
    cards = [calendar_tools.page_month({}, ctx), calendar_tools.page_month({"month": "2026-12"}, ctx),
             calendar_tools.page_agenda({}, ctx), calendar_tools.page_form({}, ctx),
             calendar_tools.page_form({"id": event_id}, ctx), calendar_tools.page_zone({}, ctx)]
    # A page opens again with its own arguments: the month and the event chosen are kept.
    assert "December 2026" in json.dumps(calendar_tools.page_month({}, ctx)["card"])
    assert "Change “Dinner <b>”" in json.dumps(calendar_tools.page_form({}, ctx)["card"], ensure_ascii=False)
    verbs = set()
    for answer in cards:
        parsed = parse_card(answer["card"], where="calendar page")
        verbs |= card_verbs(parsed)
    tools = {t["name"] for t in json.loads((addon_path("calendar") / "loca.json").read_text())["tools"]}
    assert verbs and verbs <= tools  # every action names a tool this add-on declares
    # The form's Save sends its inputs to event-save, which adds the event.
    saved = calendar_tools.event_save({"title": "Lunch", "date": "2026-12-05", "time": "13:00",
                                       "end_date": None, "end_time": None, "all_day": "false",
                                       "zone": None, "place": None, "attendees": None, "notes": None,
                                       "repeat": "none", "interval": 1, "until": None}, ctx)
    assert saved["event"]["start"] == "2026-12-05T13:00" and saved["event"]["end"] == "2026-12-05T14:00"
    assert saved["change"]["undo"]["tool"] == "event-restore"
    parse_card(saved["card"])
