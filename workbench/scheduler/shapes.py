"""The schedule shapes, checked, and said in words.

A schedule is one of ``once {atMs}``, ``interval {everyMinutes}``, ``weekly
{weekdays, hour, minute}`` (0 is Sunday), ``monthly {day, hour, minute}``, ``yearly
{month, day, hour, minute}`` — the shapes a tool may propose through
``ctx.schedulePrompt`` — or ``cron {expr}`` (five fields, for people and plugin
actions), all in the host's local time.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from workbench.errors import ExitCode, WorkbenchError
from workbench.scheduler.cron import CronSpec

# The shapes a tool may propose, each field with its bounds (cron is for people alone).
KINDS = {
    "once": {"atMs": (0, 2**53)},
    "interval": {"everyMinutes": (1, 525_600)},
    "weekly": {"hour": (0, 23), "minute": (0, 59)},
    "monthly": {"day": (1, 31), "hour": (0, 23), "minute": (0, 59)},
    "yearly": {"month": (1, 12), "day": (1, 31), "hour": (0, 23), "minute": (0, 59)},
}

DAY_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
ALL_KINDS = (*KINDS, "cron")


class ScheduleError(WorkbenchError):
    """A schedule that is not one of the shapes; the message names the field."""

    exit_code = ExitCode.USAGE


def _int(schedule: dict[str, Any], name: str, low: int, high: int) -> int:
    value = schedule.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ScheduleError(f"schedule.{name} must be a whole number from {low} to {high}")
    return value


LONGEST_MONTH = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
"""The most days each month (1–12) ever has: February 29th exists in leap years."""
MONTH_NAMES = ("", "January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")


def _cron_never(spec: CronSpec) -> str | None:
    """Why a cron expression never matches a date, or None when it does.

    Only a day-of-month field restricted alone can rule every date out (both restricted
    match either; a weekday alone comes in every month): it fires when one of its days
    exists in one of its months.
    """
    if spec.days_any or not spec.weekdays_any or spec.last_day:
        return None
    if any(day <= LONGEST_MONTH[month] for month in spec.months for day in spec.days):
        return None
    days = ", ".join(str(day) for day in sorted(spec.days))
    months = ", ".join(MONTH_NAMES[month] for month in spec.months)
    return f"no day {days} in {months}"


def never_fires(schedule: dict[str, Any]) -> str | None:
    """Why a stored schedule can never fire (one kept from before such schedules were
    refused), or None."""
    try:
        check_schedule(schedule)
    except ScheduleError as exc:
        return exc.message.partition("never fires: ")[2] or None
    return None


def check_schedule(schedule: Any) -> dict[str, Any]:
    """Return a clean copy of ``schedule`` or raise ``ScheduleError`` naming what is wrong,
    a schedule that would never fire included (a cron expression matching no date,
    ``--yearly 02-30``)."""
    if not isinstance(schedule, dict) or schedule.get("kind") not in ALL_KINDS:
        raise ScheduleError(f"schedule.kind must be one of {', '.join(ALL_KINDS)}")
    kind = schedule["kind"]
    if kind == "cron":
        expr = schedule.get("expr")
        if not isinstance(expr, str):
            raise ScheduleError("schedule.expr must be a cron expression of five fields "
                                "(minute hour day-of-month month day-of-week)")
        try:
            spec = CronSpec.parse(expr)
        except ValueError as exc:
            raise ScheduleError(f"schedule.expr: {exc}") from None
        said = " ".join(expr.split())
        reason = _cron_never(spec)
        if reason:
            raise ScheduleError(f"schedule.expr: {said!r} never fires: {reason}")
        return {"kind": "cron", "expr": said}
    clean: dict[str, Any] = {"kind": kind}
    for name, (low, high) in KINDS[kind].items():
        clean[name] = _int(schedule, name, low, high)
    if kind == "yearly" and clean["day"] > LONGEST_MONTH[clean["month"]]:
        raise ScheduleError(f"schedule: {clean['month']:02d}-{clean['day']:02d} never fires: "
                            f"{MONTH_NAMES[clean['month']]} has at most "
                            f"{LONGEST_MONTH[clean['month']]} days")
    if kind == "weekly":
        days = schedule.get("weekdays")
        if not isinstance(days, list) or not days:
            raise ScheduleError("schedule.weekdays must list days from 0 (Sunday) to 6")
        clean["weekdays"] = sorted({_int({"weekdays": d}, "weekdays", 0, 6) for d in days})
    return clean


def describe(schedule: dict[str, Any], zone: dt.tzinfo | None = None) -> str:
    """The schedule in words, e.g. ``Mon, Wed at 09:00`` or ``every 15 minutes``."""
    kind = schedule["kind"]
    at = f"{schedule.get('hour', 0):02d}:{schedule.get('minute', 0):02d}"
    if kind == "once":
        when = dt.datetime.fromtimestamp(schedule["atMs"] / 1000, tz=zone)
        return f"once at {when:%Y-%m-%d %H:%M}"
    if kind == "interval":
        minutes = schedule["everyMinutes"]
        return "every minute" if minutes == 1 else f"every {minutes} minutes"
    if kind == "weekly":
        days = schedule["weekdays"]
        named = "every day" if len(days) == 7 else ", ".join(DAY_NAMES[d] for d in days)
        return f"{named} at {at}"
    if kind == "monthly":
        clamp = " (the last day in shorter months)" if schedule["day"] > 28 else ""
        return f"monthly on day {schedule['day']} at {at}{clamp}"
    if kind == "yearly":
        clamp = " (Feb 28 in other years)" if (schedule["month"], schedule["day"]) == (2, 29) else ""
        return f"yearly on {schedule['month']:02d}-{schedule['day']:02d} at {at}{clamp}"
    return f"cron {schedule['expr']}"
