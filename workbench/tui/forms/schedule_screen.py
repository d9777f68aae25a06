"""The form of a scheduled prompt: a tool's proposal to review, or a person's own.

A tool proposes one through ``ctx.schedulePrompt``; the responder shows it here with no
``save``: nothing is saved until the person presses Save, and the form dismisses with
the draft as the core saves it (checked with the core's own ``checked_draft``), or None.
The Tasks screen opens it to make or edit a schedule, with a ``save`` that goes through
the ``Host`` and with cron offered too, a shape a tool may not propose; a refusal by
the core is said in the form, which keeps everything typed.

Every part of the draft can be edited: the title, the prompt, how it repeats and when,
and whether a run missed while the computer was off happens later. Times are the host's
local time, as the scheduler reckons them.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea

from workbench.errors import WorkbenchError
from workbench.core.schedule_forms import (
    ScheduleError,
    check_schedule,
    checked_draft,
    describe,
    from_ms,
    local_zone,
    wall_instant,
)
from workbench.tui.forms.form_screen import FormProblem, FormScreen

KINDS = [("Once", "once"), ("Every N minutes", "interval"), ("Weekly", "weekly"),
         ("Monthly", "monthly"), ("Yearly", "yearly")]
"""The kinds a tool may propose, as the list names them."""
CRON = ("Cron expression", "cron")
"""The kind only a person may choose (the Tasks screen's form)."""
WEEKDAYS = [(1, "Mon"), (2, "Tue"), (3, "Wed"), (4, "Thu"), (5, "Fri"), (6, "Sat"), (0, "Sun")]
"""Shown Monday first; the numbers are the format's (0 is Sunday)."""
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
FIELDS = {"once": ("date", "time"), "interval": ("every",), "weekly": ("days", "time"),
          "monthly": ("day", "time"), "yearly": ("month", "day", "time"), "cron": ("cron",)}
"""Which rows each kind of schedule shows."""

_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


class ScheduleProblem(FormProblem):
    """A field of the form that cannot be read; the message names it."""


def _clock(text: str) -> tuple[int, int]:
    match = _CLOCK.match(text)
    if not match or int(match[1]) > 23 or int(match[2]) > 59:
        raise ScheduleProblem("the time must be HH:MM, from 00:00 to 23:59")
    return int(match[1]), int(match[2])


def _whole(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ScheduleProblem(f"{what} must be a whole number") from None


class ScheduleScreen(FormScreen):
    """A scheduled prompt's title, prompt and schedule, to save.

    Without ``save`` it dismisses with the checked draft, or None; with one, with what
    ``save`` returned, or None.

    | Key | Does |
    | --- | --- |
    | tab, shift+tab | Next or previous field |
    | ctrl+s | Save |
    | escape | Cancel: nothing is saved |

    Args:
        draft: ``{title, instruction, schedule, runMissed}``; None for a new one.
        heading: The dialog's title (``Schedule a prompt?``, ``Edit: Daily digest``).
        subtitle: On the lower border (``proposed by notes.remind``).
        save: Saves the checked draft through the core; runs in a thread and raises
            ``WorkbenchError`` when the core refuses.
        cron: Whether a cron expression may be chosen; a tool's proposal never offers it.
    """

    CSS_PATH = "schedule_screen.tcss"
    AUTO_FOCUS = "#schedule-title"

    def __init__(self, draft: dict[str, Any] | None, *, heading: str, subtitle: str = "",
                 save: Callable[[dict[str, Any]], Any] | None = None, cron: bool = False) -> None:
        super().__init__(save)
        self.draft = draft or {}
        self.heading = heading
        self.subtitle = subtitle
        self.kinds = [*KINDS, CRON] if cron else KINDS
        """The kinds the list offers."""
        self.zone = local_zone()
        self._untouched: tuple[Any, ...] = ()
        """The fields as the form opened; while they hold the same, so does the schedule."""

    # --- building ------------------------------------------------------------

    def _initial(self) -> dict[str, Any]:
        """Every field's first value: the draft's, and sensible ones for the other kinds."""
        schedule = self.draft.get("schedule") or {}
        kind = schedule.get("kind", "weekly")
        if kind == "once" and isinstance(schedule.get("atMs"), int):
            when = from_ms(schedule["atMs"], self.zone)
        else:
            when = (dt.datetime.now(self.zone) + dt.timedelta(days=1)).replace(
                hour=schedule.get("hour", 9), minute=schedule.get("minute", 0))
        return {
            "kind": kind,
            "date": f"{when:%Y-%m-%d}",
            "time": f"{schedule.get('hour', when.hour):02d}:{schedule.get('minute', when.minute):02d}",
            "every": str(schedule.get("everyMinutes", 60)),
            "days": set(schedule.get("weekdays") or [1, 2, 3, 4, 5]),
            "day": str(schedule.get("day", when.day)),
            "month": schedule.get("month", when.month),
            "cron": schedule.get("expr", "0 9 * * 1-5"),
        }

    def compose(self) -> ComposeResult:
        first = self._initial()
        with Vertical(id="schedule-dialog") as dialog:
            dialog.border_title = self.heading
            dialog.border_subtitle = self.subtitle
            with VerticalScroll(id="schedule-fields", can_focus=False):
                with Horizontal(classes="schedule--row"):
                    yield Label("Title", classes="schedule--label")
                    yield Input(str(self.draft.get("title", "")), placeholder="Daily digest",
                                id="schedule-title", compact=True)
                with Horizontal(classes="schedule--row -tall"):
                    yield Label("Prompt", classes="schedule--label")
                    yield TextArea(str(self.draft.get("instruction", "")), id="schedule-prompt",
                                   compact=True, soft_wrap=True, show_line_numbers=False)
                with Horizontal(classes="schedule--row"):
                    yield Label("Repeats", classes="schedule--label")
                    yield Select(self.kinds, value=first["kind"], allow_blank=False, compact=True,
                                 id="schedule-kind")
                with Horizontal(classes="schedule--row", id="row-date"):
                    yield Label("Date", classes="schedule--label")
                    yield Input(first["date"], placeholder="YYYY-MM-DD", id="schedule-date", compact=True)
                with Horizontal(classes="schedule--row", id="row-every"):
                    yield Label("Every", classes="schedule--label")
                    yield Input(first["every"], id="schedule-every", compact=True, type="integer")
                    yield Label("minutes", classes="schedule--unit")
                with Horizontal(classes="schedule--row", id="row-days"):
                    yield Label("Days", classes="schedule--label")
                    for number, name in WEEKDAYS:
                        yield Checkbox(name, number in first["days"], compact=True, name=str(number),
                                       classes="schedule--weekday")
                with Horizontal(classes="schedule--row", id="row-month"):
                    yield Label("Month", classes="schedule--label")
                    yield Select([(name, index) for index, name in enumerate(MONTHS, start=1)],
                                 value=first["month"], allow_blank=False, compact=True,
                                 id="schedule-month")
                with Horizontal(classes="schedule--row", id="row-day"):
                    yield Label("Day", classes="schedule--label")
                    yield Input(first["day"], id="schedule-day", compact=True, type="integer")
                    yield Label("of the month (past its end: the last day)", classes="schedule--unit")
                with Horizontal(classes="schedule--row", id="row-time"):
                    yield Label("Time", classes="schedule--label")
                    yield Input(first["time"], placeholder="HH:MM", id="schedule-time", compact=True)
                    yield Label("local time", classes="schedule--unit")
                with Horizontal(classes="schedule--row", id="row-cron"):
                    yield Label("Cron", classes="schedule--label")
                    yield Input(first["cron"], placeholder="*/5 9-17 * * 1-5", id="schedule-cron",
                                compact=True)
                    yield Label("minute hour day month weekday", classes="schedule--unit")
                with Horizontal(classes="schedule--row"):
                    yield Label("", classes="schedule--label")
                    yield Checkbox("Run it later if the computer was off when it was due",
                                   bool(self.draft.get("runMissed")), compact=True,
                                   id="schedule-missed")
            yield Static("", id="schedule-summary")
            yield Static("", id="schedule-message", classes="form--message")
            with Horizontal(id="schedule-buttons"):
                yield Static(Content.styled("Ctrl+S saves · Esc cancels", "$text-muted"),
                             id="schedule-keys")
                yield Button("Save", id="schedule-save", classes="form--save", variant="primary",
                             compact=True)
                yield Button("Cancel", id="schedule-cancel", classes="form--cancel", compact=True)

    def on_mount(self) -> None:
        self._untouched = self._field_values()
        self._show_rows()
        self._summarize()

    # --- reading the fields --------------------------------------------------

    @property
    def kind(self) -> str:
        return str(self.query_one("#schedule-kind", Select).value)

    def schedule(self) -> dict[str, Any]:
        """The schedule the fields describe, checked by the scheduler.

        Raises:
            ScheduleProblem: A field cannot be read, or holds what would be refused.
        """
        try:
            return check_schedule(self._read_schedule())
        except ScheduleError as exc:
            raise ScheduleProblem(exc.message) from None

    def _field_values(self) -> tuple[Any, ...]:
        """What every field of the schedule holds now."""
        days = tuple(box.value for box in self.query(".schedule--weekday").results(Checkbox))
        texts = tuple(self.query_one(f"#schedule-{name}", Input).value
                      for name in ("date", "every", "day", "time", "cron"))
        return self.kind, self.query_one("#schedule-month", Select).value, days, *texts

    def _read_schedule(self) -> dict[str, Any]:
        original = self.draft.get("schedule")
        if original and self._field_values() == self._untouched:
            # Untouched: the schedule as it was, to the second (the fields show minutes).
            return dict(original)
        kind = self.kind

        def value(selector: str) -> str:
            return self.query_one(selector, Input).value

        if kind == "cron":
            return {"kind": kind, "expr": value("#schedule-cron")}
        if kind == "interval":
            return {"kind": kind, "everyMinutes": _whole(value("#schedule-every"), "the minutes")}
        hour, minute = _clock(value("#schedule-time"))
        if kind == "once":
            try:
                day = dt.date.fromisoformat(value("#schedule-date").strip())
            except ValueError:
                raise ScheduleProblem("the date must be YYYY-MM-DD") from None
            return {"kind": kind, "atMs": wall_instant(day, hour, minute, self.zone)}
        if kind == "weekly":
            days = sorted(int(box.name or 0) for box in self.query(".schedule--weekday").results(Checkbox)
                          if box.value)
            if not days:
                raise ScheduleProblem("tick at least one day")
            return {"kind": kind, "weekdays": days, "hour": hour, "minute": minute}
        day = _whole(value("#schedule-day"), "the day")
        if kind == "monthly":
            return {"kind": kind, "day": day, "hour": hour, "minute": minute}
        month = int(self.query_one("#schedule-month", Select).value)  # type: ignore[arg-type]
        return {"kind": kind, "month": month, "day": day, "hour": hour, "minute": minute}

    def checked(self) -> dict[str, Any]:
        """The draft as the form has it, checked as the core will check it.

        Raises:
            ScheduleProblem: Something in it would be refused.
        """
        title = self.query_one("#schedule-title", Input).value
        prompt = self.query_one("#schedule-prompt", TextArea).text
        # Named as the form names them; checked_draft (the tools' words) checks the rest.
        if not title.strip():
            raise ScheduleProblem("give it a title")
        if not prompt.strip():
            raise ScheduleProblem("write the prompt each run sends")
        schedule = self.schedule()
        draft = {"title": title, "instruction": prompt, "schedule": schedule,
                 "runMissed": self.query_one("#schedule-missed", Checkbox).value}
        try:
            return checked_draft(draft)
        except WorkbenchError as exc:
            raise ScheduleProblem(exc.message) from None

    # --- reacting ------------------------------------------------------------

    def _show_rows(self) -> None:
        shown = FIELDS.get(self.kind, ())
        for field in ("date", "every", "days", "month", "day", "time", "cron"):
            self.query_one(f"#row-{field}").display = field in shown

    def _summarize(self) -> None:
        summary = self.query_one("#schedule-summary", Static)
        try:
            schedule = self.schedule()
        except ScheduleProblem as exc:
            summary.update(Content.styled(f"✗ {exc}", "$text-error"))
            return
        line = Content.assemble(("→ ", "$text-success"), (describe(schedule, self.zone), "bold"))
        if schedule["kind"] == "once" and schedule["atMs"] < time.time() * 1000:
            line = Content.assemble(line, ("  ⚠ that is in the past", "$text-warning"))
        summary.update(line)

    @on(Select.Changed, "#schedule-kind")
    def _kind_changed(self) -> None:
        self._show_rows()
        self._summarize()

    @on(Input.Changed)
    @on(Checkbox.Changed)
    @on(Select.Changed, "#schedule-month")
    def _field_changed(self) -> None:
        self._summarize()

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()
