"""When each schedule shape is next due, with a controllable clock: every shape, the
daylight-saving changes forward and back (Paris and New York), the 31st, February 29th."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter

from workbench.scheduler.arithmetic import from_ms, next_after, to_ms
from workbench.scheduler.shapes import ScheduleError, check_schedule

PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")
UTC = dt.timezone.utc


def at(zone, *parts, fold: int = 0) -> int:
    return to_ms(dt.datetime(*parts, tzinfo=zone, fold=fold))


def shown(ms: int | None, zone) -> str | None:
    return None if ms is None else from_ms(ms, zone).isoformat()


def series(schedule, start: int, zone, count: int, anchor: int = 0) -> list[str | None]:
    """The next ``count`` windows after ``start``, each found from the one before (the clock
    moving on as a supervisor would)."""
    found, moment = [], start
    for _ in range(count):
        moment = next_after(schedule, moment, anchor=anchor, zone=zone)
        found.append(shown(moment, zone))
        if moment is None:
            break
    return found


# --- once and interval ---------------------------------------------------------------


def test_once_is_due_at_its_time_and_never_again():
    when = at(PARIS, 2025, 6, 1, 9, 0)
    once = {"kind": "once", "atMs": when}
    assert next_after(once, when - 1, anchor=0, zone=PARIS) == when
    assert next_after(once, when, anchor=0, zone=PARIS) is None


def test_interval_counts_real_minutes_from_its_anchor_across_the_change():
    anchor = at(PARIS, 2024, 3, 31, 0, 30)
    every = {"kind": "interval", "everyMinutes": 60}
    # 02:00 does not exist that night: one real hour after 01:30 is 03:30.
    assert series(every, anchor, PARIS, 3, anchor=anchor) == [
        "2024-03-31T01:30:00+01:00", "2024-03-31T03:30:00+02:00", "2024-03-31T04:30:00+02:00"]
    # Between windows, the next one is still on the anchor's grid (no drift).
    assert next_after(every, anchor + 61 * 60_000, anchor=anchor, zone=PARIS) == anchor + 120 * 60_000
    # Before the anchor, the first window is one step after it.
    assert next_after(every, anchor - 5, anchor=anchor, zone=PARIS) == anchor + 60 * 60_000


# --- weekly --------------------------------------------------------------------------


def test_weekly_fires_on_its_days_with_0_for_sunday():
    weekly = {"kind": "weekly", "weekdays": [0, 3], "hour": 9, "minute": 15}
    assert series(weekly, at(PARIS, 2025, 1, 1, 10, 0), PARIS, 4) == [   # a Wednesday, after 09:15
        "2025-01-05T09:15:00+01:00", "2025-01-08T09:15:00+01:00",
        "2025-01-12T09:15:00+01:00", "2025-01-15T09:15:00+01:00"]
    # Exactly at a window, the next one is the following day on the list.
    assert shown(next_after(weekly, at(PARIS, 2025, 1, 5, 9, 15), anchor=0, zone=PARIS), PARIS) \
        == "2025-01-08T09:15:00+01:00"


@pytest.mark.parametrize(("zone", "night", "skipped", "expected"), [
    (PARIS, (2024, 3, 31), (2, 30), "2024-03-31T03:30:00+02:00"),
    (NEW_YORK, (2024, 3, 10), (2, 30), "2024-03-10T03:30:00-04:00"),
])
def test_a_time_the_clocks_skip_fires_after_the_jump(zone, night, skipped, expected):
    daily = {"kind": "weekly", "weekdays": list(range(7)), "hour": skipped[0], "minute": skipped[1]}
    day_before = at(zone, *night, 0, 0) - 86_400_000
    found = series(daily, day_before + 12 * 3_600_000, zone, 2)
    assert found[0] == expected
    # The day after, it is back at 02:30 on the new offset.
    assert found[1].startswith((dt.date(*night) + dt.timedelta(days=1)).isoformat() + "T02:30:00")


@pytest.mark.parametrize(("zone", "night", "first", "then"), [
    (PARIS, (2024, 10, 27), "2024-10-27T02:30:00+02:00", "2024-10-28T02:30:00+01:00"),
    (NEW_YORK, (2024, 11, 3), "2024-11-03T01:30:00-04:00", "2024-11-04T01:30:00-05:00"),
])
def test_a_time_that_happens_twice_fires_once_the_first_time(zone, night, first, then):
    hour = int(first[11:13])
    daily = {"kind": "weekly", "weekdays": list(range(7)), "hour": hour, "minute": 30}
    start = at(zone, *night, 0, 0) - 3_600_000
    assert series(daily, start, zone, 2) == [first, then]
    # Seen during the second pass of that hour, the window is tomorrow's: no second run.
    second_pass = at(zone, *night, hour, 45, fold=1)
    assert shown(next_after(daily, second_pass, anchor=0, zone=zone), zone) == then


# --- monthly and yearly --------------------------------------------------------------


def test_monthly_on_the_31st_is_each_months_last_day():
    monthly = {"kind": "monthly", "day": 31, "hour": 8, "minute": 0}
    assert series(monthly, at(PARIS, 2024, 1, 31, 9, 0), PARIS, 6) == [
        "2024-02-29T08:00:00+01:00", "2024-03-31T08:00:00+02:00", "2024-04-30T08:00:00+02:00",
        "2024-05-31T08:00:00+02:00", "2024-06-30T08:00:00+02:00", "2024-07-31T08:00:00+02:00"]


def test_monthly_on_the_30th_in_february_of_a_common_year():
    monthly = {"kind": "monthly", "day": 30, "hour": 0, "minute": 0}
    assert series(monthly, at(UTC, 2025, 1, 30, 0, 0), UTC, 2) == [
        "2025-02-28T00:00:00+00:00", "2025-03-30T00:00:00+00:00"]


def test_monthly_across_the_year_end():
    monthly = {"kind": "monthly", "day": 15, "hour": 12, "minute": 0}
    assert series(monthly, at(NEW_YORK, 2024, 12, 20, 0, 0), NEW_YORK, 1) == ["2025-01-15T12:00:00-05:00"]


def test_yearly_on_february_29th_is_the_28th_in_other_years():
    yearly = {"kind": "yearly", "month": 2, "day": 29, "hour": 7, "minute": 0}
    assert series(yearly, at(PARIS, 2023, 3, 1, 0, 0), PARIS, 4) == [
        "2024-02-29T07:00:00+01:00", "2025-02-28T07:00:00+01:00",
        "2026-02-28T07:00:00+01:00", "2027-02-28T07:00:00+01:00"]


def test_yearly_later_the_same_year_and_on_a_skipped_time():
    yearly = {"kind": "yearly", "month": 3, "day": 31, "hour": 2, "minute": 15}
    # 2024-03-31 is the night Paris goes forward: 02:15 is 03:15.
    assert series(yearly, at(PARIS, 2024, 1, 1, 0, 0), PARIS, 2) == [
        "2024-03-31T03:15:00+02:00", "2025-03-31T02:15:00+02:00"]


# --- cron ----------------------------------------------------------------------------


@pytest.mark.parametrize("expr", ["*/7 3-20/2 * * *", "15 4 1,15 * *", "0 0 * * 1-5",
                                  "5 */3 10-20 jan-jun *", "0 12 13 * 5", "0 0 L * *",
                                  "59 23 31 12 *", "30 2 * * sun"])
def test_cron_matches_croniter_where_there_is_no_daylight_saving(expr):
    start = dt.datetime(2023, 5, 3, 13, 37, tzinfo=UTC)
    reference = croniter(expr, start)
    moment = to_ms(start)
    for _ in range(150):
        moment = next_after({"kind": "cron", "expr": expr}, moment, anchor=0, zone=UTC)
        assert moment == to_ms(reference.get_next(dt.datetime))


def test_cron_with_a_fixed_hour_fires_once_in_a_repeated_hour_and_after_a_skipped_one():
    fixed = {"kind": "cron", "expr": "30 2 * * *"}
    assert series(fixed, at(PARIS, 2024, 10, 26, 12, 0), PARIS, 2) == [
        "2024-10-27T02:30:00+02:00", "2024-10-28T02:30:00+01:00"]
    assert series(fixed, at(PARIS, 2024, 3, 30, 12, 0), PARIS, 2) == [
        "2024-03-31T03:30:00+02:00", "2024-04-01T02:30:00+02:00"]


def test_cron_with_a_wildcard_hour_fires_in_both_passes_of_a_repeated_hour():
    hourly = {"kind": "cron", "expr": "30 * * * *"}
    assert series(hourly, at(PARIS, 2024, 10, 27, 0, 45), PARIS, 4) == [
        "2024-10-27T01:30:00+02:00", "2024-10-27T02:30:00+02:00",
        "2024-10-27T02:30:00+01:00", "2024-10-27T03:30:00+01:00"]


def test_cron_restricting_both_days_matches_either_and_a_date_that_never_comes_is_none():
    either = {"kind": "cron", "expr": "0 9 1 * 1"}  # the 1st, or a Monday
    assert series(either, at(UTC, 2024, 1, 29, 10, 0), UTC, 2) == [
        "2024-02-01T09:00:00+00:00", "2024-02-05T09:00:00+00:00"]
    assert next_after({"kind": "cron", "expr": "0 0 30 2 *"}, at(UTC, 2024, 1, 1, 0, 0),
                      anchor=0, zone=UTC) is None
    assert series({"kind": "cron", "expr": "0 0 29 2 *"}, at(UTC, 2024, 3, 1, 0, 0), UTC, 1) == [
        "2028-02-29T00:00:00+00:00"]


def test_every_shape_answers_strictly_after_the_clock():
    now = at(NEW_YORK, 2025, 7, 4, 12, 0)
    shapes = [{"kind": "once", "atMs": now + 60_000}, {"kind": "interval", "everyMinutes": 5},
              {"kind": "weekly", "weekdays": [5], "hour": 12, "minute": 0},
              {"kind": "monthly", "day": 4, "hour": 12, "minute": 0},
              {"kind": "yearly", "month": 7, "day": 4, "hour": 12, "minute": 0},
              {"kind": "cron", "expr": "0 12 4 7 *"}]
    for shape in shapes:
        found = next_after(shape, now, anchor=now - 5 * 60_000, zone=NEW_YORK)
        assert found is not None and found > now, shape


def test_cron_field_jumps_match_croniter_on_rare_dates():
    """Rare dates are reached by jumping to the next month and day that can match, and land
    where croniter's minute-by-minute reckoning does."""
    start = dt.datetime(2023, 1, 1, 0, 0, tzinfo=UTC)
    for expr in ["0 12 29 2 *", "30 6 13 * 5", "0 0 L 2 *", "15 3 31 * *", "0 9 1,15 2,8 1",
                 "*/20 23 28-31 * *", "0 0 * 2 0", "45 4 L 1-6 *"]:
        reference = croniter(expr, start)
        moment = to_ms(start)
        for _ in range(12):
            moment = next_after({"kind": "cron", "expr": expr}, moment, anchor=0, zone=UTC)
            assert moment == to_ms(reference.get_next(dt.datetime)), expr


def test_cron_on_february_29th_waits_for_the_next_leap_year_in_local_time():
    feb29 = {"kind": "cron", "expr": "30 2 29 2 *"}
    assert series(feb29, at(NEW_YORK, 2025, 3, 1, 0, 0), NEW_YORK, 2) == [
        "2028-02-29T02:30:00-05:00", "2032-02-29T02:30:00-05:00"]
    last = {"kind": "cron", "expr": "0 0 L 2 *"}
    assert series(last, at(PARIS, 2024, 1, 1, 0, 0), PARIS, 2) == [
        "2024-02-29T00:00:00+01:00", "2025-02-28T00:00:00+01:00"]


def test_a_cron_date_that_never_comes_is_refused_and_never_due():
    never = {"kind": "cron", "expr": "* * 31 2 *"}
    with pytest.raises(ScheduleError, match="never fires"):
        check_schedule(never)
    assert next_after(never, at(UTC, 2024, 1, 1, 0, 0), anchor=0, zone=UTC) is None


def test_cron_in_a_zone_whose_clocks_move_half_an_hour():
    """Lord Howe Island moves its clocks from 02:00 to 02:30: 02:15 that night fires at
    02:45, as much past the jump as it was past the start of the gap."""
    lord_howe = ZoneInfo("Australia/Lord_Howe")
    nightly = {"kind": "cron", "expr": "15 2 * * *"}
    assert series(nightly, at(lord_howe, 2024, 10, 5, 12, 0), lord_howe, 2) == [
        "2024-10-06T02:45:00+11:00", "2024-10-07T02:15:00+11:00"]


def test_cron_across_a_day_the_zone_skipped():
    """Samoa went from December 29th to December 31st 2011: a daily cron fires on the
    31st, and one for the 30th at the instant the old offset gives that wall time."""
    apia = ZoneInfo("Pacific/Apia")
    daily = {"kind": "cron", "expr": "0 12 * * *"}
    assert series(daily, at(apia, 2011, 12, 29, 13, 0), apia, 2) == [
        "2011-12-31T12:00:00+14:00", "2012-01-01T12:00:00+14:00"]
    thirtieth = next_after({"kind": "cron", "expr": "0 12 30 12 *"}, at(apia, 2011, 12, 29, 13, 0),
                           anchor=0, zone=apia)
    assert thirtieth == to_ms(dt.datetime(2011, 12, 30, 12, 0, tzinfo=apia))
    assert shown(thirtieth, apia) == "2011-12-31T12:00:00+14:00"


def test_one_instant_reckoned_in_two_zones_in_turn_gives_each_its_own_time():
    """12:00 UTC is 14:00 in Paris (09:00 is tomorrow's) and 08:00 in New York (09:00 is
    within the hour), however the two are interleaved."""
    daily = {"kind": "cron", "expr": "0 9 * * *"}
    moment = at(UTC, 2024, 6, 1, 12, 0)
    for _ in range(2):
        assert shown(next_after(daily, moment, anchor=0, zone=PARIS), PARIS) == \
            "2024-06-02T09:00:00+02:00"
        assert shown(next_after(daily, moment, anchor=0, zone=NEW_YORK), NEW_YORK) == \
            "2024-06-01T09:00:00-04:00"
