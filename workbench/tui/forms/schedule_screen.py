"""The review of a scheduled prompt a tool proposes (``ctx.schedulePrompt``).

Nothing is saved until the person presses Save; they may edit every part of the
draft first: the title, the prompt, how it repeats and when, and whether a run
missed while the computer was off happens later. The screen dismisses with the
draft as the core saves it (checked with the core's own ``check_draft``), or None.
Times are the host's local time, as the scheduler reckons them.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea

from workbench.capabilities.schedules import check_draft
from workbench.errors import ToolError
from workbench.scheduler.arithmetic import from_ms, wall_instant
from workbench.scheduler.shapes import describe
from workbench.scheduler.zone import local_zone

KINDS = [("Once", "once"), ("Every N minutes", "interval"), ("Weekly", "weekly"),
         ("Monthly", "monthly"), ("Yearly", "yearly")]
WEEKDAYS = [(1, "Mon"), (2, "Tue"), (3, "Wed"), (4, "Thu"), (5, "Fri"), (6, "Sat"), (0, "Sun")]
"""Shown Monday first; the numbers are the format's (0 is Sunday)."""
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
FIELDS = {"once": ("date", "time"), "interval": ("every",), "weekly": ("days", "time"),
          "monthly": ("day", "time"), "yearly": ("month", "day", "time")}
"""Which rows each kind of schedule shows."""

_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


class ScheduleProblem(ValueError):
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


class ScheduleScreen(ModalScreen[dict[str, Any] | None]):
    """Review ``draft`` before it is saved; dismisses with the draft to save, or None.

    | Key | Does |
    | --- | --- |
    | tab, shift+tab | Next or previous field |
    | ctrl+s | Save |
    | escape | Cancel: nothing is saved |

    Args:
        tool: The tool that proposes it.
        draft: ``{title, instruction, schedule, runMissed}`` as the core checked it.
    """

    CSS_PATH = "schedule_screen.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save", priority=True),
    ]

    def __init__(self, tool: str, draft: dict[str, Any]) -> None:
        super().__init__()
        self.tool = tool
        self.draft = draft
        self.zone = local_zone()
        self.problem = ""
        """Why the last Save was refused (empty: none yet)."""

    # --- building ------------------------------------------------------------

    def _initial(self) -> dict[str, Any]:
        """Every field's first value: the draft's, and sensible ones for the other kinds."""
        schedule = self.draft.get("schedule") or {}
        kind = schedule.get("kind", "once")
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
        }

    def compose(self) -> ComposeResult:
        first = self._initial()
        with Vertical(id="schedule-dialog") as dialog:
            dialog.border_title = "Schedule a prompt?"
            dialog.border_subtitle = f"proposed by {self.tool}"
            with VerticalScroll(id="schedule-fields", can_focus=False):
                with Horizontal(classes="schedule--row"):
                    yield Label("Title", classes="schedule--label")
                    yield Input(str(self.draft.get("title", "")), id="schedule-title", compact=True)
                with Horizontal(classes="schedule--row -tall"):
                    yield Label("Prompt", classes="schedule--label")
                    yield TextArea(str(self.draft.get("instruction", "")), id="schedule-prompt",
                                   compact=True, soft_wrap=True, show_line_numbers=False)
                with Horizontal(classes="schedule--row"):
                    yield Label("Repeats", classes="schedule--label")
                    yield Select(KINDS, value=first["kind"], allow_blank=False, compact=True,
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
                with Horizontal(classes="schedule--row"):
                    yield Label("", classes="schedule--label")
                    yield Checkbox("Run it later if the computer was off when it was due",
                                   bool(self.draft.get("runMissed")), compact=True,
                                   id="schedule-missed")
            yield Static("", id="schedule-summary")
            with Horizontal(id="schedule-buttons"):
                yield Static(Content.styled("Ctrl+S saves · Esc cancels", "$text-muted"),
                             id="schedule-keys")
                yield Button("Save", id="schedule-save", variant="primary", compact=True)
                yield Button("Cancel", id="schedule-cancel", compact=True)

    def on_mount(self) -> None:
        self._show_rows()
        self._summarize()
        self.query_one("#schedule-title", Input).focus()

    # --- reading the fields --------------------------------------------------

    @property
    def kind(self) -> str:
        return str(self.query_one("#schedule-kind", Select).value)

    def schedule(self) -> dict[str, Any]:
        """The schedule the fields describe.

        Raises:
            ScheduleProblem: A field cannot be read.
        """
        kind = self.kind

        def value(selector: str) -> str:
            return self.query_one(selector, Input).value

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

    def edited_draft(self) -> dict[str, Any]:
        """The draft as the form has it, checked as the core will check it.

        Raises:
            ScheduleProblem: Something in it would be refused.
        """
        draft = {"title": self.query_one("#schedule-title", Input).value,
                 "instruction": self.query_one("#schedule-prompt", TextArea).text,
                 "schedule": self.schedule(),
                 "runMissed": self.query_one("#schedule-missed", Checkbox).value}
        try:
            return check_draft(draft)
        except ToolError as exc:
            raise ScheduleProblem(exc.message) from None

    # --- reacting ------------------------------------------------------------

    def _show_rows(self) -> None:
        shown = FIELDS.get(self.kind, ())
        for field in ("date", "every", "days", "month", "day", "time"):
            self.query_one(f"#row-{field}").display = field in shown

    def _summarize(self) -> None:
        summary = self.query_one("#schedule-summary", Static)
        try:
            schedule = self.edited_draft()["schedule"]
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
    @on(TextArea.Changed)
    def _field_changed(self) -> None:
        self._summarize()

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()

    def action_save(self) -> None:
        """Save the draft as edited, unless something in it would be refused."""
        try:
            draft = self.edited_draft()
        except ScheduleProblem as exc:
            self.problem = str(exc)
            self.notify(f"Not saved: {exc}.", severity="error")
            return
        self.dismiss(draft)

    def action_cancel(self) -> None:
        """Close without saving anything."""
        self.dismiss(None)

    @on(Button.Pressed, "#schedule-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, "#schedule-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()
