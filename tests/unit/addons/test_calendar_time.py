"""The calendar's time arithmetic: repeats on local dates that keep their local time
across daylight saving time (both ways), the monthly 31st, February 29th, intervals
and last days, checked against python-dateutil's rrule; listings in another zone."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from dateutil import rrule

from addon_modules import Ctx, addon_path

addon_path("calendar")

import cal_events as events  # noqa: E402
from cal_time import Repeat, TimeProblem, parse_date, parse_local, zone  # noqa: E402

D = dt.date


def dates(repeat: Repeat, first: D, since: D, through: D) -> list[D]:
    return list(repeat.dates(first, since, through))


@pytest.mark.parametrize(("freq", "interval", "first", "until"), [
    ("daily", 1, D(2026, 3, 20), None), ("daily", 3, D(2026, 10, 20), D(2026, 11, 30)),
    ("weekly", 1, D(2026, 3, 23), None), ("weekly", 2, D(2026, 1, 6), D(2026, 12, 1)),
    ("monthly", 1, D(2026, 1, 31), None), ("monthly", 2, D(2025, 8, 30), None),
    ("monthly", 1, D(2024, 1, 29), D(2026, 6, 1)), ("yearly", 1, D(2024, 2, 29), None),
    ("yearly", 3, D(2020, 2, 29), None), ("yearly", 1, D(2026, 12, 31), D(2030, 12, 31)),
])
def test_repeats_match_rrule_over_windows(freq, interval, first, until):
    repeat = Repeat(freq, interval, until)
    rule = rrule.rrule(getattr(rrule, freq.upper()), interval=interval, dtstart=first,
                       until=until)
    for since, through in [(first, first + dt.timedelta(days=400)),
                           (D(2027, 2, 1), D(2027, 8, 31)), (D(2031, 1, 1), D(2032, 12, 31))]:
        expected = [d.date() for d in rule.between(dt.datetime.combine(since, dt.time()),
                                                   dt.datetime.combine(through, dt.time()), inc=True)]
        assert dates(repeat, first, since, through) == expected


def test_the_31st_skips_short_months_and_february_29th_waits_for_leap_years():
    monthly = dates(Repeat("monthly"), D(2026, 1, 31), D(2026, 1, 1), D(2026, 12, 31))
    assert [d.month for d in monthly] == [1, 3, 5, 7, 8, 10, 12]
    yearly = dates(Repeat("yearly"), D(2024, 2, 29), D(2024, 1, 1), D(2036, 12, 31))
    assert [d.year for d in yearly] == [2024, 2028, 2032, 2036]
    assert dates(Repeat("weekly", 1, D(2026, 1, 20)), D(2026, 1, 6), D(2026, 1, 1), D(2026, 3, 1)) == [
        D(2026, 1, 6), D(2026, 1, 13), D(2026, 1, 20)]


def _calendar(tmp_path, zone_name="Europe/Rome"):
    ctx = Ctx(tmp_path / "calendar.db")
    events.ready(ctx.db)
    events.set_default_zone(ctx.db, zone_name)
    return ctx


def test_daily_repeats_keep_local_time_across_both_dst_changes(tmp_path):
    ctx = _calendar(tmp_path)
    events.create(ctx.db, {"title": "Standup", "start": "2026-03-27T09:30", "end": "2026-03-27T09:45",
                           "repeat": {"freq": "daily"}})
    spring = events.occurrences(events.all_events(ctx.db), D(2026, 3, 27), D(2026, 3, 30), "Europe/Rome")[0]
    autumn = events.occurrences(events.all_events(ctx.db), D(2026, 10, 24), D(2026, 10, 26), "Europe/Rome")[0]
    for found in (spring, autumn):
        assert {item["start"][11:] for item in found} == {"09:30"}
        assert {item["end"][11:] for item in found} == {"09:45"}
    rome = ZoneInfo("Europe/Rome")
    offsets = [dt.datetime.fromisoformat(i["start"]).replace(tzinfo=rome).utcoffset() for i in spring]
    assert offsets == [dt.timedelta(hours=1)] * 2 + [dt.timedelta(hours=2)] * 2  # the clocks moved
    # Seen from New York, whose clocks change on other days, the instant is what moves.
    ny = events.occurrences(events.all_events(ctx.db), D(2026, 3, 20), D(2026, 3, 31), "America/New_York")[0]
    shown = {item["occurrence"]: item["start"][11:] for item in ny}
    assert shown["2026-03-27"] == "04:30" and shown["2026-03-30"] == "03:30"
    assert ny[0]["local"] == {"start": "2026-03-27T09:30", "end": "2026-03-27T09:45", "zone": "Europe/Rome"}


def test_a_listing_bounds_its_range_and_count_and_shows_other_zones_by_their_day(tmp_path):
    ctx = _calendar(tmp_path, "Asia/Tokyo")
    events.create(ctx.db, {"title": "Call", "start": "2026-12-04T20:00", "zone": "America/Los_Angeles"})
    [item], cut = events.occurrences(events.all_events(ctx.db), D(2026, 12, 5), D(2026, 12, 5), "Asia/Tokyo")
    assert item["day"] == "2026-12-05" and item["start"] == "2026-12-05T13:00" and not cut
    events.create(ctx.db, {"title": "Tick", "start": "2026-01-01T08:00", "repeat": {"freq": "daily"}})
    events.create(ctx.db, {"title": "Tock", "start": "2026-01-01T20:00", "repeat": {"freq": "daily"}})
    found, cut = events.occurrences(events.all_events(ctx.db), D(2026, 1, 1), D(2026, 12, 31), "Asia/Tokyo")
    assert len(found) == events.MAX_OCCURRENCES and cut
    assert [i["start"] for i in found] == sorted(i["start"] for i in found)


def test_skipping_one_day_and_all_day_spans(tmp_path):
    ctx = _calendar(tmp_path)
    weekly = events.create(ctx.db, {"title": "Yoga", "start": "2026-12-01T18:00", "repeat": {"freq": "weekly"}})
    events.skip(ctx.db, weekly.id, "2026-12-08")
    with pytest.raises(events.Refused, match="does not happen on 2026-12-09"):
        events.skip(ctx.db, weekly.id, "2026-12-09")
    with pytest.raises(events.Refused, match="skipped already"):
        events.skip(ctx.db, weekly.id, "2026-12-08")
    trip = events.create(ctx.db, {"title": "Trip", "start": "2026-12-14", "end": "2026-12-16"})
    found, _ = events.occurrences(events.all_events(ctx.db), D(2026, 12, 1), D(2026, 12, 22), "Europe/Rome")
    assert [i["occurrence"] for i in found if i["id"] == weekly.id] == ["2026-12-01", "2026-12-15", "2026-12-22"]
    [span] = [i for i in found if i["id"] == trip.id]
    assert span["all_day"] and (span["start"], span["end"]) == ("2026-12-14", "2026-12-16")
    inside, _ = events.occurrences(events.all_events(ctx.db), D(2026, 12, 16), D(2026, 12, 16), "Europe/Rome")
    assert [i["title"] for i in inside] == ["Trip"]


@pytest.mark.parametrize(("values", "why"), [
    ({"title": "x", "start": "2026-02-30T10:00"}, "no time of the calendar"),
    ({"title": "x", "start": "tomorrow"}, "YYYY-MM-DDTHH:MM"),
    ({"title": "x", "start": "2026-01-01T10:00", "zone": "../../etc/passwd"}, "not an IANA time zone"),
    ({"title": "x", "start": "2026-01-01T10:00", "zone": "Mars/Olympus"}, "not an IANA time zone"),
    ({"title": "x", "start": "2026-01-01T10:00", "end": "2026-01-01T09:00"}, "end is at or after"),
    ({"title": "x", "start": "2026-01-01", "repeat": {"freq": "hourly"}}, "repeat.freq"),
    ({"title": "x", "start": "2026-01-01", "repeat": {"freq": "daily", "until": "2025-01-01"}}, "until"),
    ({"title": "x", "start": "2026-01-01", "repeat": {"freq": "daily", "interval": 0}}, "interval"),
    ({"title": "x" * 201, "start": "2026-01-01"}, "at most 200"),
    ({"title": "a\x1b[2Jb", "start": "2026-01-01"}, "control character U\\+001B"),
    ({"title": "x", "start": "2026-01-01", "notes": "n" * 4001}, "at most 4000"),
    ({"title": "x", "start": "2026-01-01", "place": "p\nq"}, "one line"),
    ({"title": "x", "start": "9999-01-01"}, "between 1900 and 2200"),
    ({"title": " ", "start": "2026-01-01"}, "title is required"),
])
def test_hostile_or_wrong_events_are_refused_naming_the_field(tmp_path, values, why):
    ctx = _calendar(tmp_path)
    with pytest.raises(events.Refused, match=why):
        events.create(ctx.db, values)
    assert events.all_events(ctx.db) == []


def test_limits_of_the_seed(tmp_path):
    ctx = _calendar(tmp_path)
    ctx.db.conn.execute("BEGIN")
    ctx.db.conn.executemany(
        "INSERT INTO events (uid, title, all_day, start, end, zone, created, updated) "
        "VALUES (?, 'e', 1, '2026-01-01', '2026-01-01', 'UTC', '', '')",
        [(f"u{i}",) for i in range(events.MAX_EVENTS)])
    ctx.db.conn.execute("COMMIT")
    with pytest.raises(events.Refused, match="5000 events"):
        events.create(ctx.db, {"title": "one more", "start": "2026-01-02"})
    assert parse_date("2028-02-29", "d") == D(2028, 2, 29)
    with pytest.raises(TimeProblem):
        parse_local("2026-13-01T10:00", "start")
    assert str(zone("Europe/Rome")) == "Europe/Rome"


def test_updates_keep_the_length_and_restore_puts_back_what_was(tmp_path):
    ctx = _calendar(tmp_path)
    made = events.create(ctx.db, {"title": "Dinner", "start": "2026-12-04T20:00", "end": "2026-12-04T22:30"})
    before, after = events.update(ctx.db, made.id, {"start": "2026-12-05T19:00", "notes": "bring wine"})
    assert (after.start, after.end, after.notes) == ("2026-12-05T19:00", "2026-12-05T21:30", "bring wine")
    events.restore(ctx.db, made.id, before.snapshot())
    again = events.get(ctx.db, made.id)
    assert (again.start, again.end, again.notes, again.uid) == (made.start, made.end, "", made.uid)
    events.restore(ctx.db, made.id, None)
    assert events.all_events(ctx.db) == []


def test_search_ignores_case_and_accents_over_every_field(tmp_path):
    ctx = _calendar(tmp_path)
    events.create(ctx.db, {"title": "Café with Zoë", "start": "2026-12-04T10:00", "place": "Piazza Navona"})
    events.create(ctx.db, {"title": "Dentist", "start": "2026-12-05T10:00", "attendees": "MÜLLER"})
    titles = lambda q: [e.title for e in events.search(events.all_events(ctx.db), q, 20)]  # noqa: E731
    assert titles("cafe zoe") == ["Café with Zoë"]
    assert titles("navona") == ["Café with Zoë"]
    assert titles("muller") == ["Dentist"]
    assert titles("cafe dentist") == []
