"""The Tasks screen: scheduled prompts, when they run next, their last runs and failures.

The list on the left is ``host.schedules``; the right side is the selected one in full
(``host.schedules.schedule``: its prompt, its run card and its recent runs). Pausing, resuming,
editing and deleting go through ``host.schedules`` in worker threads;
"run now" runs in an app worker, so a run outlives the screen being closed. The line
at the top says which process runs this home's scheduler (``host.schedules.scheduler_holder``):
this window, or another one that the app stands by for. Runs starting and ending, and
the scheduler changing state, arrive as core events and are shown as they happen.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.events import ProcessStateChanged, ScheduleFired, ScheduleRunEnded
from workbench.tui.core_event import CoreEvent
from workbench.tui.forms.schedule_screen import ScheduleScreen
from workbench.tui.screens.changes import ChangesInThread
from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.times import duration, when

REFRESH_EVERY_S = 10.0
"""How often the screen reads the schedules again, for runs made by another process."""

RECENT_RUNS = 10
"""How many of a schedule's runs its detail lists."""

RUN_MARKS = {"ok": ("✔", "$text-success"), "failed": ("✖", "$text-error"),
             "timed_out": ("✖", "$text-error"), "interrupted": ("✖", "$text-error"),
             "paused": ("▲", "$text-warning"),
             "refused": ("▲", "$text-warning"), "skipped": ("–", "$text-muted"),
             "running": ("▶", "$text-primary"), "pending": ("…", "$text-muted")}


def next_text(row: dict[str, Any]) -> Content:
    """When a schedule runs next: ``next 2025-03-01 09:00``, ``paused`` or ``no more runs``."""
    if not row["enabled"]:
        return Content.styled("paused", "bold $text-warning")
    if row["next_due_at"] is None:
        return Content.styled("no more runs", "$text-muted")
    return Content.assemble(("next ", "$text-muted"), when(row["next_due_at"]))


def run_line(run: dict[str, Any]) -> Content:
    """One run: its mark and status, when, how long, why it did not end well."""
    mark, style = RUN_MARKS.get(run["status"], ("·", ""))
    text = Content.assemble((f"{mark} {run['status'].replace('_', ' '):<9}", style), " ",
                            when(run["started_at"] or run["created_at"]))
    took = duration(run["started_at"], run["ended_at"])
    if took:
        text = Content.assemble(text, (f"  {took}", "$text-muted"))
    if run["fired_by"] not in ("schedule",):
        text = Content.assemble(text, (f"  ({run['fired_by']})", "$text-muted"))
    if run.get("error"):
        text = Content.assemble(text, "\n", (f"  {run['error']}", "$text-muted"))
    return text


def _prompt(row: dict[str, Any]) -> Content:
    line = Content.assemble((row["title"], "bold"), "\n", next_text(row))
    failures = row["failures"]
    if failures:
        line = Content.assemble(line, "\n", (f"{failures} failed run" + ("" if failures == 1 else "s"),
                                             "$text-error"))
    return line


def _field(label: str, value: str | Content) -> Content:
    return Content.assemble((f"{label:<11}", "$text-muted"), value)


def draft_of(row: dict[str, Any]) -> dict[str, Any]:
    """A schedule as ``host.schedules.schedule`` gives it, as the schedule form's draft."""
    return {"title": row["title"], "instruction": row["instruction"],
            "schedule": row["schedule"], "runMissed": bool(row["run_missed"])}


def scheduler_text(holder: dict[str, Any] | None) -> Content:
    """Who runs this home's scheduler, for the header."""
    if holder is None:
        return Content.styled("scheduler: not running", "$text-warning")
    if holder["pid"] == os.getpid():
        return Content.styled("scheduler: runs in this window", "$text-success")
    since = when(holder["since"]) if holder["since"] else "?"
    return Content.styled(f"scheduler: held by pid {holder['pid']} on {holder['host']} "
                          f"since {since}", "$text-warning")


class TasksScreen(ChangesInThread, Screen):
    """Scheduled prompts: the list, the selected one with its runs, and what to do.

    | Key | Action |
    | --- | --- |
    | up, down | Move between schedules |
    | n | New scheduled prompt |
    | e | Edit the title, prompt and schedule |
    | p | Pause or resume |
    | r | Run now |
    | d | Delete (asks first) |
    | escape, f2 | Back |
    """

    CSS_PATH = "tasks.tcss"
    shell_name = "tasks"
    """The name the app opens it by."""
    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("f2", "close", "Back", show=False),
        Binding("n", "new", "New"),
        Binding("e", "edit", "Edit"),
        Binding("p", "pause", "Pause"),
        Binding("p", "resume", "Resume"),
        Binding("r", "run_now", "Run now"),
        Binding("d", "delete", "Delete"),
    ]

    working: reactive[str] = reactive("")
    """What the screen is doing in the background; empty when idle."""

    def __init__(self, host: Host) -> None:
        super().__init__(id="tasks")
        self.host = host
        self.schedules: list[dict[str, Any]] = []
        """The schedules listed, by id."""
        self.detail: dict[str, Any] | None = None
        """The selected schedule as ``host.schedules.schedule`` gave it, with its recent runs."""
        self.holder: dict[str, Any] | None = None
        """Who holds this home's scheduler, at the last look."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="tasks-header"):
            yield Label(Content.assemble(("workbench", "bold"), "  ·  Tasks"), id="tasks-title")
            yield Label("", id="tasks-scheduler")
        with Horizontal(id="tasks-body"):
            yield OptionList(id="tasks-list")
            yield VerticalScroll(id="tasks-detail")
        yield Static("", id="tasks-message")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.refresh_tasks()
        # A scheduler in another process sends no events here: look again now and then.
        self.set_interval(REFRESH_EVERY_S, self.refresh_tasks)

    # --- what is shown -------------------------------------------------------------

    @property
    def selected(self) -> dict[str, Any] | None:
        """The schedule under the cursor (none while the list is not mounted yet)."""
        lists = self.query(OptionList)
        if not lists:
            return None
        index = lists.first().highlighted
        if index is None or not 0 <= index < len(self.schedules):
            return None
        return self.schedules[index]

    def say(self, text: str, level: str = "info") -> None:
        message = self.query_one("#tasks-message", Static)
        message.update(Content(text))
        message.set_classes(f"-{level}" if text else "")

    def refresh_tasks(self, select: int | None = None) -> None:
        """Read the schedules, the selected one's runs and the scheduler's holder again."""
        keep = select if select is not None else (self.selected or {}).get("id")
        self._read(keep)

    @work(thread=True, exclusive=True, group="tasks-read")
    def _read(self, select: int | None) -> None:
        host = self.host
        try:
            schedules = host.schedules()
            holder = host.schedules.scheduler_holder()
            ids = [row["id"] for row in schedules]
            chosen = select if select in ids else (ids[0] if ids else None)
            detail = host.schedules.schedule(chosen, runs=RECENT_RUNS) if chosen is not None else None
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._show, schedules, holder, detail)

    async def _show(self, schedules: list[dict[str, Any]], holder: dict[str, Any] | None,
                    detail: dict[str, Any] | None) -> None:
        if not self.is_attached:
            return
        self.holder = holder
        self.query_one("#tasks-scheduler", Label).update(scheduler_text(holder))
        self.schedules = schedules
        listed = self.query_one(OptionList)
        with self.prevent(OptionList.OptionHighlighted):
            listed.set_options(Option(_prompt(row), id=str(row["id"])) for row in schedules)
            ids = [row["id"] for row in schedules]
            listed.highlighted = ids.index(detail["id"]) if detail and detail["id"] in ids else None
        await self._show_detail(detail)

    async def _show_detail(self, detail: dict[str, Any] | None) -> None:
        self.detail = detail
        box = self.query_one("#tasks-detail", VerticalScroll)
        with self.app.batch_update():
            await box.remove_children()
            await box.mount_all(self._detail_widgets(detail))
        self.refresh_bindings()

    def _detail_widgets(self, row: dict[str, Any] | None) -> Iterable[Widget]:
        if row is None:
            yield Static("No scheduled prompts yet. Press n to make one, or ask the model: a "
                         "tool can propose one for you to accept.", classes="tasks--muted")
            return
        yield Static(Content.styled(row["title"], "bold"), classes="tasks--title")
        state = next_text(row)
        yield Static(Content.assemble(_field("runs", Content.styled(row["description"], "bold")),
                                      "\n", _field("", state)), classes="tasks--line")
        yield Static(Content(row["instruction"]), classes="tasks--prompt")
        card = row.get("card") or {}
        if card:
            grants = card.get("grants", [])
            yield Static(Content.assemble(
                _field("model", str(card.get("model", ""))), "\n",
                _field("extensions", ", ".join(card.get("extensions", [])) or "none"), "\n",
                _field("grants", ", ".join(f"{g.get('kind')} {g.get('value')}".strip()
                                           for g in grants) or "none"), "\n",
                _field("needs more", f"{card.get('on_need', '')} the run")),
                classes="tasks--line")
        else:
            yield Static("Its run card is made when it first runs.", classes="tasks--muted")
        failures = row["failures"]
        yield Static(Content.assemble(
            _field("made by", str(row["source"])), "\n",
            _field("failed", Content.styled(f"{failures} run" + ("" if failures == 1 else "s"),
                                             "$text-error" if failures else ""))),
            classes="tasks--line")
        yield Static(Content.styled("Recent runs", "bold $text-primary"), classes="tasks--heading")
        runs = row.get("runs") or []
        if not runs:
            yield Static("none yet", classes="tasks--muted")
        for run in runs:
            yield Static(run_line(run), classes="tasks--run")

    @on(OptionList.OptionHighlighted, "#tasks-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        chosen = self.selected
        if chosen is not None and (self.detail is None or self.detail["id"] != chosen["id"]):
            self._read_detail(chosen["id"])

    @work(thread=True, exclusive=True, group="tasks-detail")
    def _read_detail(self, schedule_id: int) -> None:
        try:
            detail = self.host.schedules.schedule(schedule_id, runs=RECENT_RUNS)
        except WorkbenchError as exc:
            self.app.call_from_thread(self.say, str(exc), "error")
            return
        self.app.call_from_thread(self._detail_read, detail)

    async def _detail_read(self, detail: dict[str, Any]) -> None:
        chosen = self.selected
        if self.is_attached and chosen is not None and chosen["id"] == detail["id"]:
            await self._show_detail(detail)

    def on_core_event(self, message: CoreEvent) -> None:
        event = message.event
        if isinstance(event, (ScheduleFired, ScheduleRunEnded)) or (
                isinstance(event, ProcessStateChanged) and event.name == "scheduler"):
            self.refresh_tasks()

    # --- what can be done ------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        selected = self.selected
        if action == "pause":  # one key: Pause for a running schedule, Resume for a paused one
            return None if selected is None else bool(selected["enabled"])
        if action == "resume":
            return selected is not None and not selected["enabled"]
        if action in ("edit", "run_now", "delete"):
            return None if selected is None or self.working else True
        if action == "new":
            return None if self.working else True
        return True

    def watch_working(self) -> None:
        self.refresh_bindings()

    def _changed(self, text: str, select: int | None = None) -> None:
        self.say(text, "success")
        self.refresh_tasks(select)

    def action_pause(self) -> None:
        """Stop the selected schedule firing until it is resumed."""
        row = self.selected
        if row is not None:
            self._start(f"Pausing {row['title']}", lambda: self.host.schedules.pause_schedule(row["id"]),
                        lambda _: self._changed(f"Paused {row['title']}."))

    def action_resume(self) -> None:
        """Fire the selected schedule again (windows missed while paused are not run)."""
        row = self.selected
        if row is not None:
            self._start(f"Resuming {row['title']}", lambda: self.host.schedules.resume_schedule(row["id"]),
                        lambda shown: self._changed(f"Resumed {row['title']}; next run "
                                                    f"{when(shown['next_due_at'])}."))

    def action_run_now(self) -> None:
        """Run the selected schedule once, now, in the background."""
        row = self.selected
        if row is None:
            return
        self.say(f"Running {row['title']} now; its run is listed as it goes.", "working")
        self.app.run_worker(self._run_now(row["id"], row["title"]), group="run-now",
                            exit_on_error=False)

    async def _run_now(self, schedule_id: int, title: str) -> None:
        try:
            run = await self.host.schedules.run_schedule_now(schedule_id)
        except WorkbenchError as exc:
            self.app.notify(f"{title} could not run: {exc}", severity="error")
            return
        if self.is_attached:
            level = "success" if run.get("status") == "ok" else "error"
            self.say(f"Run {run.get('id')} of {title}: {run.get('status')}.", level)
            self.refresh_tasks(schedule_id)

    def action_new(self) -> None:
        """Make a new scheduled prompt."""

        def save(draft: dict[str, Any]) -> dict[str, Any]:
            return self.host.schedules.add_schedule(title=draft["title"], instruction=draft["instruction"],
                                          schedule=draft["schedule"], run_missed=draft["runMissed"])

        self.app.push_screen(ScheduleScreen(None, heading="New scheduled prompt", save=save,
                                            cron=True), self._saved)

    def action_edit(self) -> None:
        """Change the selected schedule's title, prompt or schedule."""
        row = self.detail if self.detail is not None else self.selected
        if row is None:
            return
        schedule_id, current = row["id"], draft_of(row)

        def save(draft: dict[str, Any]) -> dict[str, Any]:
            # A schedule sent again starts counting from now: send it only when it changed.
            changed = draft["schedule"] != current["schedule"]
            return self.host.schedules.edit_schedule(schedule_id, title=draft["title"],
                                           instruction=draft["instruction"],
                                           schedule=draft["schedule"] if changed else None,
                                           run_missed=draft["runMissed"])

        self.app.push_screen(ScheduleScreen(current, heading=f"Edit: {row['title']}", save=save,
                                            cron=True), self._saved)

    def _saved(self, shown: dict[str, Any] | None) -> None:
        if shown:
            self._changed(f"Saved {shown['title']}: {shown['description']}, next run "
                          f"{when(shown['next_due_at'])}.", shown["id"])

    def action_delete(self) -> None:
        """Delete the selected schedule (its runs stay listed), after asking."""
        row = self.selected
        if row is None:
            return
        question = ConfirmScreen("Delete scheduled prompt", f"Delete {row['title']}?",
                                 f"It runs {row['description']}. Its past runs stay recorded.",
                                 yes="delete")
        self.app.push_screen(question, lambda yes: self._delete(row, bool(yes)))

    def _delete(self, row: dict[str, Any], yes: bool) -> None:
        if not yes:
            self.say(f"{row['title']} was not deleted.")
            return
        self._start(f"Deleting {row['title']}", lambda: self.host.schedules.remove_schedule(row["id"]),
                    lambda _: self._changed(f"Deleted {row['title']}."))

    def action_close(self) -> None:
        """Back to the chat."""
        self.app.pop_screen()
