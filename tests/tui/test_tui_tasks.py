"""Pilot tests of the Tasks screen and of the scheduler the app runs: schedules made by
the core shown with their next time, paused, resumed, made and edited in the schedule
form with the keyboard, run and deleted from the screen and seen by the core; the
holder of the home's scheduler named."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from shell_helpers import open_screen, options_of, settle, text_of
from textual.widgets import Input, OptionList, Select, TextArea
from textual.widgets._select import SelectOverlay

from visible import settled, until_screen, until_shown

from workbench.tui.forms.schedule_screen import ScheduleScreen
from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.screens.tasks import TasksScreen
from workbench.tui.times import when

SIZE = (80, 24)
WEEKLY = {"kind": "weekly", "weekdays": [1, 3], "hour": 9, "minute": 0}


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")


def add(app, title: str = "Daily digest", schedule: dict | None = None) -> dict:
    return app.host.schedules.add_schedule(title=title, instruction="Summarize my notes.",
                                 schedule=schedule or WEEKLY)


async def open_tasks(pilot, until) -> TasksScreen:
    screen = await open_screen(pilot, until, "f2", TasksScreen)
    await until(pilot, lambda: screen.holder is not None or screen.schedules
                or "No scheduled prompts" in text_of(screen.query_one("#tasks-detail")))
    await settle(pilot, until)
    return screen


def listed(screen: TasksScreen) -> list[str]:
    return options_of(screen.query_one(OptionList))


async def test_a_schedule_made_by_the_core_is_listed_with_its_next_time(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        assert listed(screen) == [f"Daily digest\nnext {when(made['next_due_at'])}"]
        detail = text_of(screen.query_one("#tasks-detail"))
        assert "Mon, Wed at 09:00" in detail and "Summarize my notes." in detail
        assert "model      scripted:replies.json" in detail
        assert "none yet" in detail


async def test_pausing_and_resuming_from_the_screen_is_seen_by_the_core(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        await pilot.press("p")
        await until(pilot, lambda: not app.host.schedules.schedule(made["id"])["enabled"])
        await until(pilot, lambda: listed(screen) == ["Daily digest\npaused"])
        assert "Paused Daily digest." in text_of(screen.query_one("#tasks-message"))
        await pilot.press("p")
        await until(pilot, lambda: app.host.schedules.schedule(made["id"])["enabled"])
        next_due = app.host.schedules.schedule(made["id"])["next_due_at"]
        await until(pilot, lambda: listed(screen) == [f"Daily digest\nnext {when(next_due)}"])


async def open_form(pilot, until, key: str) -> ScheduleScreen:
    """Press ``key`` (``n`` or ``e``) on the Tasks screen; returns the form it opens."""
    return await open_screen(pilot, until, key, ScheduleScreen)


def seen(form: ScheduleScreen, selector: str) -> str:
    """What a line of the form shows (``#schedule-summary``, ``#schedule-message``)."""
    return text_of(form.query_one(selector))


async def pick_kind(pilot, form: ScheduleScreen, label: str) -> list[str]:
    """Open the Repeats list with the keyboard and pick ``label``; returns the kinds it showed."""
    select = form.query_one("#schedule-kind", Select)
    select.focus()
    await pilot.press("enter")
    await until_shown(pilot, lambda: select.expanded)
    offered = options_of(form.query_one(SelectOverlay))
    await pilot.press("home", *["down"] * offered.index(label), "enter")
    await until_shown(pilot, lambda: not select.expanded)
    await settled(pilot)  # the form has handled the choice (Select.Changed)
    return offered


async def test_a_new_weekly_schedule_made_with_the_keyboard(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        assert "No scheduled prompts yet" in text_of(screen.query_one("#tasks-detail"))
        form = await open_form(pilot, until, "n")
        assert form.query_one("#schedule-dialog").border_title == "New scheduled prompt"
        assert seen(form, "#schedule-summary") == "→ Mon, Tue, Wed, Thu, Fri at 09:00"
        await pilot.press(*"Stretch", "tab", *"Remind me to stretch.", "tab", "tab")
        # Mon Tue Wed Thu Fri Sat Sun, Monday first: untick Mon, Wed and Fri, tick Sat.
        await pilot.press("space", "tab", "tab", "space", "tab", "tab", "space", "tab", "space",
                          "tab", "tab", *"07:30")
        assert seen(form, "#schedule-summary") == "→ Tue, Thu, Sat at 07:30"
        assert form.query_one("#schedule-dialog").region.bottom <= SIZE[1]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        [made] = app.host.schedules()
        assert (made["title"], made["instruction"], made["schedule"], made["run_missed"]) == (
            "Stretch", "Remind me to stretch.",
            {"kind": "weekly", "weekdays": [2, 4, 6], "hour": 7, "minute": 30}, False)
        await until(pilot, lambda: listed(screen) == [f"Stretch\nnext {when(made['next_due_at'])}"])
        assert "Saved Stretch: Tue, Thu, Sat at 07:30" in text_of(screen.query_one("#tasks-message"))


async def test_a_cron_schedule(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        form = await open_form(pilot, until, "n")
        await pilot.press(*"Office hours", "tab", *"Check the inbox.")
        offered = await pick_kind(pilot, form, "Cron expression")
        assert offered == ["Once", "Every N minutes", "Weekly", "Monthly", "Yearly", "Cron expression"]
        visible = [row.id for row in form.query(".schedule--row") if row.id and row.display]
        assert visible == ["row-cron"]
        await pilot.press("tab", *"61 * * * *")
        assert seen(form, "#schedule-summary") == \
            "✗ schedule.expr: '61 * * * *' is not a valid cron expression"
        await pilot.press("ctrl+u", *"*/15 9-17 * * 1-5")
        assert seen(form, "#schedule-summary") == "→ cron */15 9-17 * * 1-5"
        await pilot.click("#schedule-save")
        await until(pilot, lambda: app.screen is screen)
        [made] = app.host.schedules()
        assert made["schedule"] == {"kind": "cron", "expr": "*/15 9-17 * * 1-5"}
        await until(pilot, lambda: "cron */15 9-17 * * 1-5" in text_of(screen.query_one("#tasks-detail")))


async def test_editing_title_prompt_and_schedule(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        form = await open_form(pilot, until, "e")
        assert form.query_one("#schedule-dialog").border_title == "Edit: Daily digest"
        assert form.query_one("#schedule-title", Input).value == "Daily digest"
        assert form.query_one("#schedule-prompt", TextArea).text == "Summarize my notes."
        assert seen(form, "#schedule-summary") == "→ Mon, Wed at 09:00"
        await pilot.press("end", "ctrl+u", *"Evening digest", "tab",
                          "end", "ctrl+u", *"Summarize today's notes.", "tab", "tab",
                          "space", "tab", "tab", "space", "tab", "tab", "space", "tab", "tab", "tab",
                          *"18:30")
        assert seen(form, "#schedule-summary") == "→ Fri at 18:30"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        edited = app.host.schedules.schedule(made["id"])
        assert (edited["title"], edited["instruction"], edited["description"]) == (
            "Evening digest", "Summarize today's notes.", "Fri at 18:30")
        await until(pilot, lambda: listed(screen) == [
            f"Evening digest\nnext {when(edited['next_due_at'])}"])
        assert "Saved Evening digest: Fri at 18:30" in text_of(screen.query_one("#tasks-message"))


async def test_an_edit_that_keeps_the_schedule_keeps_its_next_time(make_app, until) -> None:
    app = make_app([])
    now = [app.host.store.clock()]
    app.host.store.clock = lambda: now[0]
    made = add(app, schedule={"kind": "interval", "everyMinutes": 60})
    now[0] += 5 * 60_000  # a schedule sent again would count its hour from here
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        form = await open_form(pilot, until, "e")
        assert form.query_one("#schedule-every", Input).value == "60"
        assert seen(form, "#schedule-summary") == "→ every 60 minutes"
        await pilot.press("end", "ctrl+u", *"Hourly digest", "ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        edited = app.host.schedules.schedule(made["id"])
        assert edited["title"] == "Hourly digest"
        assert edited["next_due_at"] == made["next_due_at"]
        await until(pilot, lambda: listed(screen) == [
            f"Hourly digest\nnext {when(made['next_due_at'])}"])


async def test_a_once_schedule_set_to_the_second_is_renamed_without_moving(make_app, until) -> None:
    """The form shows minutes; a time made to the second elsewhere (``--at …:30``) is
    kept as it was while its fields are not touched."""
    app = make_app([])
    at_ms = (app.host.store.clock() // 60_000 + 120) * 60_000 + 30_000  # in 2 hours, :30
    made = add(app, schedule={"kind": "once", "atMs": at_ms})
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        await open_form(pilot, until, "e")
        await pilot.press("end", "ctrl+u", *"Later digest", "ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        edited = app.host.schedules.schedule(made["id"])
        assert (edited["title"], edited["schedule"]["atMs"]) == ("Later digest", at_ms)


async def test_a_schedule_the_core_refuses_keeps_the_form_and_what_was_typed(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        await open_tasks(pilot, until)
        form = await open_form(pilot, until, "e")
        await pilot.press("end", "ctrl+u", *"Renamed")
        await pick_kind(pilot, form, "Once")
        await pilot.press("tab", *"2001-01-01", "tab", *"09:00")
        assert seen(form, "#schedule-summary") == "→ once at 2001-01-01 09:00  ⚠ that is in the past"
        # The form lets a time in the past through; the core refuses it, and the form stays.
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "that time has passed" in seen(form, "#schedule-message"))
        assert seen(form, "#schedule-message").startswith("Not saved: that time has passed")
        assert app.screen is form
        assert form.query_one("#schedule-title", Input).value == "Renamed"
        assert form.query_one("#schedule-date", Input).value == "2001-01-01"
        assert app.host.schedules.schedule(made["id"])["title"] == "Daily digest"
        await pilot.press("escape")
        await until_screen(pilot, TasksScreen)
        assert app.host.schedules.schedule(made["id"])["title"] == "Daily digest"


async def test_a_field_problem_is_said_in_the_form_before_any_save(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await open_tasks(pilot, until)
        form = await open_form(pilot, until, "n")
        assert seen(form, "#schedule-message") == ""
        await pilot.press("ctrl+s")
        await until_shown(pilot, lambda: seen(form, "#schedule-message") == "Not saved: give it a title")
        await pilot.press(*"Stretch", "ctrl+s")
        await until_shown(pilot, lambda: seen(form, "#schedule-message") == "Not saved: write the prompt each run sends")
        await pilot.press("tab", *"Remind me to stretch.")
        form.query_one("#schedule-time", Input).focus()
        await pilot.press(*"25:00")
        assert seen(form, "#schedule-summary") == "✗ the time must be HH:MM, from 00:00 to 23:59"
        await pilot.press("ctrl+s")
        await until_shown(pilot, lambda: (seen(form, "#schedule-message") == \
            "Not saved: the time must be HH:MM, from 00:00 to 23:59"))
        assert form.problem == "the time must be HH:MM, from 00:00 to 23:59"
        assert app.screen is form and form.query_one("#schedule-title", Input).value == "Stretch"
        await settle(pilot, until)
        assert app.host.schedules() == []


async def test_the_form_fits_and_scrolls_to_the_field_with_focus(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await open_tasks(pilot, until)
        form = await open_form(pilot, until, "n")
        await pick_kind(pilot, form, "Yearly")  # the kind with the most rows
        form.query_one("#schedule-title", Input).value = "Birthday"
        form.query_one("#schedule-prompt", TextArea).text = "Remind me."
        form.query_one("#schedule-day", Input).value = "32"
        await pilot.press("ctrl+s")  # and the message line shown
        await until_shown(pilot, lambda: (seen(form, "#schedule-message") == \
            "Not saved: schedule.day must be a whole number from 1 to 31"))
        dialog, fields = form.query_one("#schedule-dialog"), form.query_one("#schedule-fields")
        assert dialog.region.bottom <= SIZE[1] and fields.max_scroll_y == 0
        await pilot.resize_terminal(80, 16)
        await until_shown(pilot, lambda: dialog.region.bottom <= 16 and fields.max_scroll_y > 0)
        missed = form.query_one("#schedule-missed")
        form.query_one("#schedule-title", Input).focus()
        await pilot.press(*["tab"] * 6)  # prompt, repeats, month, day, time, run missed
        await until_shown(pilot, lambda: missed.has_focus)
        assert fields.scroll_y > 0 and fields.content_region.contains_region(missed.region)
        await pilot.press("tab", "tab")
        assert app.focused is form.query_one("#schedule-cancel")
        await pilot.press("enter")
        await until_screen(pilot, TasksScreen)
        assert app.host.schedules() == []


async def test_deleting_asks_first(make_app, until) -> None:
    app = make_app([])
    add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        await pilot.press("d")
        await until_screen(pilot, ConfirmScreen)
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        assert len(app.host.schedules()) == 1
        await pilot.press("d")
        await until_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: not app.host.schedules())
        await until(pilot, lambda: listed(screen) == [])
        assert "Deleted Daily digest." in text_of(screen.query_one("#tasks-message"))


async def test_run_now_runs_it_and_lists_the_run(make_app, until) -> None:
    app = make_app([{"text": "Here is your digest."}])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        await pilot.press("r")
        await until(pilot, lambda: any(run["status"] == "ok"
                                       for run in app.host.schedules.runs(made["id"])), timeout=60)
        run = app.host.schedules.runs(made["id"])[0]
        assert run["fired_by"] == "manual" and run["result"] == "Here is your digest."
        await until(pilot, lambda: "✔ ok" in text_of(screen.query_one("#tasks-detail")))
        assert "(manual)" in text_of(screen.query_one("#tasks-detail"))


async def test_the_app_runs_the_scheduler_and_lets_it_go_at_exit(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: (app.host.schedules.scheduler_holder() or {}).get("pid") == os.getpid())
        screen = await open_tasks(pilot, until)
        await until(pilot, lambda: "runs in this window" in text_of(
            screen.query_one("#tasks-scheduler")))
    assert app.host.schedules.scheduler_holder() is None


LOCK_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from workbench.supervisor.lock import SchedulerLock
    lock = SchedulerLock(Path(sys.argv[1]))
    assert lock.acquire()
    print("held", flush=True)
    sys.stdin.read()
""")


async def test_another_holder_is_named_and_the_app_takes_over_when_it_goes(make_app, until) -> None:
    app = make_app([])
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER,
                               str(app.host.home.root / "scheduler.lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_tasks(pilot, until)
            scheduler = screen.query_one("#tasks-scheduler")
            await until(pilot, lambda: f"held by pid {holder.pid}" in text_of(scheduler))
            holder.stdin.close()
            holder.wait(timeout=10)
            await until(pilot, lambda: "runs in this window" in text_of(scheduler))
            assert app.host.schedules.scheduler_holder()["pid"] == os.getpid()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


async def test_a_refusal_by_the_core_is_said_on_the_screen(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        app.host.schedules.remove_schedule(made["id"])  # by another hand, while the screen shows it
        await pilot.press("p")
        message = screen.query_one("#tasks-message")
        await until(pilot, lambda: f"no schedule {made['id']}" in text_of(message))
        assert "-error" in message.classes
