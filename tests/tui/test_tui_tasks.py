"""Pilot tests of the Tasks screen and of the scheduler the app runs: schedules made by
the core shown with their next time, paused, resumed, edited, run and deleted from the
screen and seen by the core; the holder of the home's scheduler named."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from shell_helpers import open_screen, options_of, settle, text_of
from textual.widgets import Input, OptionList, TextArea

from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.screens.schedule_form import ScheduleFormScreen
from workbench.tui.screens.tasks import TasksScreen
from workbench.tui.times import when

SIZE = (80, 24)
WEEKLY = {"kind": "weekly", "weekdays": [1, 3], "hour": 9, "minute": 0}


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")


def add(app, title: str = "Daily digest", schedule: dict | None = None) -> dict:
    return app.host.add_schedule(title=title, instruction="Summarize my notes.",
                                 schedule=schedule or WEEKLY)


async def open_tasks(pilot, until) -> TasksScreen:
    screen = await open_screen(pilot, until, "f2", TasksScreen)
    await until(pilot, lambda: screen.holder is not None or screen.schedules
                or "No scheduled prompts" in text_of(screen.query_one("#tasks-detail")))
    await settle(pilot)
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
        await until(pilot, lambda: not app.host.schedule(made["id"])["enabled"])
        await until(pilot, lambda: listed(screen) == ["Daily digest\npaused"])
        assert "Paused Daily digest." in text_of(screen.query_one("#tasks-message"))
        await pilot.press("p")
        await until(pilot, lambda: app.host.schedule(made["id"])["enabled"])
        next_due = app.host.schedule(made["id"])["next_due_at"]
        await until(pilot, lambda: listed(screen) == [f"Daily digest\nnext {when(next_due)}"])


async def test_editing_title_prompt_and_schedule(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ScheduleFormScreen))
        form = app.screen
        assert form.query_one("#form-schedule", Input).value == "mon,wed@09:00"
        form.query_one("#form-title", Input).value = "Evening digest"
        form.query_one("#form-prompt", TextArea).text = "Summarize today's notes."
        form.query_one("#form-schedule", Input).value = "fri@18:30"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is screen)
        edited = app.host.schedule(made["id"])
        assert (edited["title"], edited["instruction"], edited["description"]) == (
            "Evening digest", "Summarize today's notes.", "Fri at 18:30")
        await until(pilot, lambda: listed(screen) == [
            f"Evening digest\nnext {when(edited['next_due_at'])}"])
        assert "Saved Evening digest: Fri at 18:30" in text_of(screen.query_one("#tasks-message"))


async def test_a_schedule_the_core_refuses_keeps_the_form_and_what_was_typed(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        await open_tasks(pilot, until)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ScheduleFormScreen))
        form = app.screen
        form.query_one("#form-title", Input).value = "Renamed"
        form.query_one("#form-schedule", Input).value = "fri@25:00"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form
        assert "the time must be HH:MM" in text_of(form.query_one("#form-message"))
        # A time in the past is refused by the core itself; the form stays as typed.
        form.query_one("#form-kind").value = "at"
        form.query_one("#form-schedule", Input).value = "2001-01-01T09:00"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "that time has passed" in text_of(form.query_one("#form-message")))
        assert form.query_one("#form-title", Input).value == "Renamed"
        assert app.host.schedule(made["id"])["title"] == "Daily digest"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, TasksScreen))


async def test_a_new_schedule_from_the_screen(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        assert "No scheduled prompts yet" in text_of(screen.query_one("#tasks-detail"))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ScheduleFormScreen))
        await pilot.press(*"Stretch", "tab", *"Remind me to stretch.", "tab")
        app.screen.query_one("#form-kind").value = "every"
        app.screen.query_one("#form-schedule", Input).value = "45"
        await pilot.click("#form-save")
        await until(pilot, lambda: app.host.schedules())
        made = app.host.schedules()[0]
        assert (made["title"], made["instruction"], made["description"]) == (
            "Stretch", "Remind me to stretch.", "every 45 minutes")
        await until(pilot, lambda: listed(screen) == [f"Stretch\nnext {when(made['next_due_at'])}"])


async def test_deleting_asks_first(make_app, until) -> None:
    app = make_app([])
    add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        assert len(app.host.schedules()) == 1
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
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
                                       for run in app.host.runs(made["id"])), timeout=60)
        run = app.host.runs(made["id"])[0]
        assert run["fired_by"] == "manual" and run["result"] == "Here is your digest."
        await until(pilot, lambda: "✔ ok" in text_of(screen.query_one("#tasks-detail")), timeout=10)
        assert "(manual)" in text_of(screen.query_one("#tasks-detail"))


async def test_the_app_runs_the_scheduler_and_lets_it_go_at_exit(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: (app.host.scheduler_holder() or {}).get("pid") == os.getpid())
        screen = await open_tasks(pilot, until)
        await until(pilot, lambda: "runs in this window" in text_of(
            screen.query_one("#tasks-scheduler")))
    assert app.host.scheduler_holder() is None


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
            assert app.host.scheduler_holder()["pid"] == os.getpid()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


async def test_a_refusal_by_the_core_is_said_on_the_screen(make_app, until) -> None:
    app = make_app([])
    made = add(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tasks(pilot, until)
        app.host.remove_schedule(made["id"])  # by another hand, while the screen shows it
        await pilot.press("p")
        message = screen.query_one("#tasks-message")
        await until(pilot, lambda: f"no schedule {made['id']}" in text_of(message))
        assert "-error" in message.classes
