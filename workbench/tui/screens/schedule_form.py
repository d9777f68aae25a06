"""A form for a scheduled prompt: its title, its prompt and when it runs.

The schedule is typed the way ``workbench schedule add`` takes it: a kind (``at``,
``every``, ``weekly``, ``monthly``, ``yearly``, ``cron``) and its text
(``mon,wed@09:00``), read by ``scheduler.spec.from_flags``. Saving runs the caller's
``save`` in a worker thread; when the core refuses (a past time, an empty prompt),
the form stays open with everything typed and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static, TextArea

from workbench.errors import WorkbenchError
from workbench.scheduler.spec import from_flags, to_flag
from workbench.scheduler.zone import local_zone

KINDS: dict[str, tuple[str, str]] = {
    "at": ("once, at", "2030-03-01T09:00"),
    "every": ("every N minutes", "15"),
    "weekly": ("weekly", "mon,wed@09:00 or weekdays@08:30"),
    "monthly": ("monthly", "31@08:00 (the last day in shorter months)"),
    "yearly": ("yearly", "02-29@07:00"),
    "cron": ("cron", "*/5 9-17 * * 1-5"),
}
"""Each kind of schedule: its name in the list, and an example for the text box."""


@dataclass(frozen=True)
class ScheduleDraft:
    """What the form holds when saved.

    Attributes:
        title: The schedule's name.
        instruction: The prompt each run sends.
        schedule: The checked schedule shape.
        run_missed: Whether a window missed while nothing ran fires once later.
    """

    title: str
    instruction: str
    schedule: dict[str, Any]
    run_missed: bool


def read_schedule(kind: str, text: str) -> dict[str, Any]:
    """The schedule a kind and its text give.

    Raises:
        WorkbenchError: The text cannot be read as that kind.
    """
    text = text.strip()
    if not text:
        raise WorkbenchError(f"say when: {KINDS[kind][0]}, e.g. {KINDS[kind][1]}")
    if kind == "every":
        if not text.isdigit() or int(text) < 1:
            raise WorkbenchError(f"every: the minutes must be a whole number above 0, not {text!r}")
    try:
        return from_flags(**{kind: int(text) if kind == "every" else text}, zone=local_zone())
    except WorkbenchError as exc:
        # The flag language's messages name the flag (--weekly); the form names the kind.
        raise WorkbenchError(str(exc).replace(f"--{kind}", kind)) from None


class ScheduleFormScreen(ModalScreen[Any]):
    """Edit (or make) a scheduled prompt; dismisses with what ``save`` returned, or None.

    Args:
        heading: The dialog's title (``Edit: Daily digest``).
        save: Saves a ``ScheduleDraft`` through the core; runs in a thread and raises
            ``WorkbenchError`` when the core refuses.
        current: The schedule as ``Host.schedule`` gives it, or None for a new one.

    | Key | Action |
    | --- | --- |
    | ctrl+s | Save |
    | escape | Cancel |
    | tab, shift+tab | Move between the fields |
    """

    CSS_PATH = "schedule_form.tcss"
    AUTO_FOCUS = "#form-title"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, heading: str, save: Callable[[ScheduleDraft], Any],
                 current: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.heading = heading
        self.save = save
        self.current = current
        self.saving = False

    def compose(self) -> ComposeResult:
        current = self.current or {}
        kind, text = (to_flag(current["schedule"], local_zone()) if current.get("schedule")
                      else ("weekly", ""))
        with Vertical(id="form-dialog") as dialog:
            dialog.border_title = self.heading
            yield Label("Title", classes="form--label")
            yield Input(current.get("title", ""), placeholder="Daily digest", id="form-title",
                        compact=True)
            yield Label("Prompt each run sends", classes="form--label")
            yield TextArea(current.get("instruction", ""), id="form-prompt",
                           soft_wrap=True, show_line_numbers=False)
            yield Label("When", classes="form--label")
            with Horizontal(id="form-when"):
                yield Select([(label, name) for name, (label, _) in KINDS.items()], value=kind,
                             allow_blank=False, id="form-kind", compact=True)
                yield Input(text, placeholder=KINDS[kind][1], id="form-schedule", compact=True)
            yield Checkbox("Run once after a window missed while nothing ran",
                           bool(current.get("run_missed")), id="form-missed", compact=True)
            yield Static("", id="form-message")
            with Horizontal(id="form-buttons"):
                yield Button("Save (Ctrl+S)", id="form-save", variant="primary", compact=True)
                yield Button("Cancel (Esc)", id="form-cancel", compact=True)

    @on(Select.Changed, "#form-kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.query_one("#form-schedule", Input).placeholder = KINDS[event.value][1]

    def say(self, text: str) -> None:
        message = self.query_one("#form-message", Static)
        message.update(Content(text))
        message.set_class(bool(text), "-error")

    def draft(self) -> ScheduleDraft:
        """What the fields hold, checked.

        Raises:
            WorkbenchError: A field is empty or the schedule cannot be read.
        """
        title = self.query_one("#form-title", Input).value.strip()
        prompt = self.query_one("#form-prompt", TextArea).text
        if not title:
            raise WorkbenchError("give it a title")
        if not prompt.strip():
            raise WorkbenchError("write the prompt each run sends")
        kind = str(self.query_one("#form-kind", Select).value)
        schedule = read_schedule(kind, self.query_one("#form-schedule", Input).value)
        return ScheduleDraft(title, prompt, schedule, self.query_one("#form-missed", Checkbox).value)

    def action_save(self) -> None:
        """Check the fields and save them through the core."""
        if self.saving:
            return
        try:
            draft = self.draft()
        except WorkbenchError as exc:
            self.say(str(exc))
            return
        self.saving = True
        self.say("")
        self._save(draft)

    @work(thread=True, group="schedule-form")
    def _save(self, draft: ScheduleDraft) -> None:
        try:
            result = self.save(draft)
        except WorkbenchError as exc:
            self.app.call_from_thread(self._refused, exc)
            return
        self.app.call_from_thread(self.dismiss, result)

    def _refused(self, error: WorkbenchError) -> None:
        self.saving = False
        if self.is_attached:
            self.say(str(error))

    @on(Button.Pressed, "#form-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, "#form-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()

    def action_cancel(self) -> None:
        """Close the form without saving."""
        self.dismiss(None)
