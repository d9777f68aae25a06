"""The scheduler loop with a controllable clock: firing, missed windows, one run at a time
per schedule, crash recovery, the lock's stand-by; the launcher with real child processes:
time limit, an exit without an outcome, the daily limit, a stop."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import socket
import subprocess
import sys

import pytest

from waits import until

from workbench.scheduler.arithmetic import to_ms
from workbench.store import Store
from workbench.events import ProcessStateChanged, ScheduleFired, ScheduleRunEnded
from workbench.supervisor.launch import LaunchSettings, RunLauncher
from workbench.supervisor.lock import SchedulerLock
from workbench.supervisor.supervisor import Supervisor, SupervisorSettings

UTC = dt.timezone.utc
MINUTE = 60_000
T0 = to_ms(dt.datetime(2025, 3, 3, 8, 0, tzinfo=UTC))
HOURLY = {"kind": "interval", "everyMinutes": 60}


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


class FakeLauncher:
    """Runs a pending run by marking it ok at once, or holds it until released."""

    def __init__(self, store, hold: bool = False) -> None:
        self.store = store
        self.hold = hold
        self.release = asyncio.Event()
        self.executed: list[int] = []
        self.owner = "test"

    async def execute(self, run_id: int):
        self.store.start_run(run_id, owner="test")
        self.executed.append(run_id)
        if self.hold:
            await self.release.wait()
        self.store.finish_run(run_id, "ok", only_if=("running",))
        return self.store.get_run(run_id)


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def store(tmp_path, clock):
    with Store.open(tmp_path / "w.db") as opened:
        opened.clock = clock
        yield opened


def make(store, clock, tmp_path, launcher=None, events=None, **settings) -> Supervisor:
    frozen = []
    supervisor = Supervisor(
        store=store, lock=SchedulerLock(tmp_path / "scheduler.lock"),
        launcher=launcher or FakeLauncher(store), publish=(events if events is not None else []).append,
        settings=SupervisorSettings(grace_ms=MINUTE, **settings), clock=clock, zone=lambda: UTC,
        prepare=lambda row: (frozen.append(row["id"]), store.set_schedule_card(row["id"], {"model": "echo"})))
    supervisor.frozen = frozen
    return supervisor


def add(store, schedule=HOURLY, run_missed=False, title="Hourly") -> int:
    return store.add_scheduled_prompt({"title": title, "instruction": "go", "schedule": schedule,
                                       "runMissed": run_missed}, source="samples.sample_schedule")


async def settle(supervisor: Supervisor) -> None:
    await supervisor.tick()
    await asyncio.gather(*[task for _, task in list(supervisor.active.values())])


def statuses(store, schedule_id=None) -> list[tuple[str, str]]:
    return [(r["status"], r["fired_by"]) for r in reversed(store.list_runs(schedule_id=schedule_id))]


async def test_a_proposal_gets_its_card_and_fires_at_each_window(store, clock, tmp_path):
    events = []
    supervisor = make(store, clock, tmp_path, events=events)
    schedule_id = add(store)
    await settle(supervisor)
    assert supervisor.frozen == [schedule_id]
    row = store.get_schedule(schedule_id)
    assert (row["last_due_at"], row["next_due_at"]) == (T0 - 1, T0 + 60 * MINUTE)  # counted from creation
    assert store.list_runs() == []
    clock.now = T0 + 60 * MINUTE + 300
    await settle(supervisor)
    [run] = store.list_runs()
    assert (run["status"], run["fired_by"], run["due_at"]) == ("ok", "schedule", T0 + 60 * MINUTE)
    await settle(supervisor)
    assert len(store.list_runs()) == 1  # the same window never fires twice
    assert store.get_schedule(schedule_id)["next_due_at"] == T0 + 120 * MINUTE


@pytest.mark.parametrize(("run_missed", "expected"), [(False, [("skipped", "missed")]),
                                                      (True, [("ok", "missed")])])
async def test_windows_missed_while_nothing_ran(store, clock, tmp_path, run_missed, expected):
    schedule_id = add(store, run_missed=run_missed)
    store.update_schedule(schedule_id, last_due_at=T0, next_due_at=T0 + 60 * MINUTE, anchor_at=T0)
    clock.now = T0 + 5 * 60 * MINUTE + 30 * MINUTE  # nothing ran for five windows
    events = []
    await settle(make(store, clock, tmp_path, events=events))
    assert statuses(store) == expected
    if not run_missed:
        assert "runMissed is off" in store.list_runs()[0]["error"]
        assert [e.status for e in events if isinstance(e, ScheduleRunEnded)] == ["skipped"]
    assert store.get_schedule(schedule_id)["next_due_at"] == T0 + 6 * 60 * MINUTE


async def test_one_run_at_a_time_per_schedule_and_one_waiting(store, clock, tmp_path):
    launcher = FakeLauncher(store, hold=True)
    supervisor = make(store, clock, tmp_path, launcher=launcher)
    schedule_id = add(store, {"kind": "interval", "everyMinutes": 1})
    other = add(store, {"kind": "interval", "everyMinutes": 1}, title="Other")
    await supervisor.tick()
    for minute in (1, 2, 3):
        clock.now = T0 + minute * MINUTE + 10
        await supervisor.tick()
        await asyncio.sleep(0)
    assert statuses(store, schedule_id) == [("running", "schedule"), ("pending", "schedule"),
                                            ("skipped", "schedule")]
    assert "had not started yet" in store.list_runs(schedule_id=schedule_id)[0]["error"]
    assert statuses(store, other)[0] == ("running", "schedule")  # schedules run side by side
    launcher.release.set()
    while supervisor.active:
        await asyncio.gather(*[task for _, task in list(supervisor.active.values())])
        await supervisor.tick()
    assert statuses(store, schedule_id) == [("ok", "schedule"), ("ok", "schedule"), ("skipped", "schedule")]


async def test_pending_runs_of_removed_or_paused_schedules_are_skipped(store, clock, tmp_path):
    gone, paused, manual = add(store), add(store), add(store)
    for schedule_id in (gone, paused, manual):
        store.add_run(schedule_id, "t", fired_by="manual" if schedule_id == manual else "schedule",
                      due_at=T0)
    store.remove_scheduled_prompt(gone)
    store.update_schedule(paused, enabled=False)
    store.update_schedule(manual, enabled=False)
    await settle(make(store, clock, tmp_path))
    runs = {r["id"]: r for r in store.list_runs()}
    assert [runs[i]["status"] for i in sorted(runs)] == ["skipped", "skipped", "ok"]
    assert "was removed" in runs[1]["error"] and "was paused" in runs[2]["error"]


async def test_recovery_fails_interrupted_runs_and_keeps_pending_ones(store, clock, tmp_path):
    schedule_id = add(store)
    interrupted = store.add_run(schedule_id, "Hourly", fired_by="schedule", due_at=T0)
    store.start_run(interrupted, owner=f"999999999@{socket.gethostname()}")
    # A run a live `workbench` process (run-now in a terminal) still owns is left alone.
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "workbench"])
    try:
        owned = store.add_run(schedule_id, "Hourly", fired_by="manual", due_at=None)
        store.start_run(owned, owner=f"{live.pid}@{socket.gethostname()}")
        waiting = store.add_run(schedule_id, "Hourly", fired_by="schedule", due_at=T0)
        events = []
        supervisor = make(store, clock, tmp_path, events=events)
        assert supervisor.recover(at_start=True) == [interrupted]
        run = store.get_run(interrupted)
        assert run["status"] == "interrupted" and "interrupted" in run["error"] and "999999999@" in run["error"]
        assert store.get_run(owned)["status"] == "running"
        [note] = store.list_notifications()
        assert note["run_id"] == interrupted and note["level"] == "error"
        assert [e.status for e in events if isinstance(e, ScheduleRunEnded)] == ["interrupted"]
        await settle(supervisor)
        assert store.get_run(waiting)["status"] == "ok"  # due but not started: runs once
    finally:
        live.kill()
        live.wait()


async def test_a_second_supervisor_stands_by_until_the_lock_is_free(store, clock, tmp_path):
    first_events, second_events = [], []
    first = make(store, clock, tmp_path, events=first_events, poll_s=0.02)
    second = make(store, clock, tmp_path, events=second_events, poll_s=0.02)
    stop_first, stop_second = asyncio.Event(), asyncio.Event()
    running_first = asyncio.ensure_future(first.run(stop_first))
    await until(lambda: first.state.name == "RUNNING", "the first supervisor running")
    running_second = asyncio.ensure_future(second.run(stop_second))
    await until(lambda: second.state.name == "BACKOFF", "the second supervisor standing by")
    assert first.state.name == "RUNNING"
    standing = [e for e in second_events if isinstance(e, ProcessStateChanged)][-1]
    assert f"held by pid {os.getpid()} on {socket.gethostname()}" in standing.reason
    stop_first.set()
    await running_first
    await until(lambda: second.state.name == "RUNNING", "the second supervisor taking over")
    stop_second.set()
    await running_second
    assert [e.new for e in second_events if isinstance(e, ProcessStateChanged)] == [
        "starting", "backoff", "starting", "running", "stopping", "stopped"]
    assert [e.new for e in first_events if isinstance(e, ProcessStateChanged)] == [
        "starting", "running", "stopping", "stopped"]


# --- the launcher, with real child processes ------------------------------------------------


def launcher(store, tmp_path, script: str, events, **settings) -> RunLauncher:
    return RunLauncher(store=store, command=lambda run_id: [sys.executable, "-c", script, str(run_id)],
                       env=dict(os.environ), logs=tmp_path / "runs", settings=LaunchSettings(**settings),
                       publish=events.append, clock=store.clock)


async def test_a_run_past_its_time_limit_is_killed_with_its_tree_and_recorded(store, tmp_path):
    store.clock = lambda: to_ms(dt.datetime.now(UTC))
    events = []
    script = "import subprocess, time; subprocess.Popen(['sleep', '60'], start_new_session=True); time.sleep(60)"
    run_id = store.add_run(add(store), "Slow", fired_by="schedule", due_at=None)
    run = await launcher(store, tmp_path, script, events, timeout_s=1.0).execute(run_id)
    assert run["status"] == "timed_out" and "longer than 1 s" in run["error"]
    assert "2 processes were killed" in run["error"]
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "ScheduleFired" and kinds[-3:] == ["ScheduleRunEnded", "Notice", "NotificationPosted"]
    states = [e.new for e in events if isinstance(e, ProcessStateChanged)]
    assert states == ["starting", "running", "stopping", "stopped"]
    assert store.list_notifications()[0]["title"] == "Scheduled run timed out: Slow"
    assert (events[-1].id, events[-1].run_id) == (store.list_notifications()[0]["id"], run_id)


async def test_a_run_process_that_dies_without_an_outcome_is_failed_with_its_last_words(store, tmp_path):
    events = []
    run_id = store.add_run(add(store), "Crash", fired_by="manual", due_at=None)
    script = "import sys; print('something broke', file=sys.stderr); sys.exit(7)"
    run = await launcher(store, tmp_path, script, events).execute(run_id)
    assert run["status"] == "failed"
    assert "status 7 without an outcome: something broke" in run["error"]
    assert run["pid"] and run["owner"].endswith(socket.gethostname())


async def test_a_run_that_records_its_own_outcome_keeps_it(store, tmp_path):
    events = []
    run_id = store.add_run(add(store), "Fine", fired_by="manual", due_at=None)
    script = (f"import sys; from workbench.store import Store; s = Store.open({str(store.path)!r}); "
              "s.finish_run(int(sys.argv[1]), 'ok', result='done')")
    run = await launcher(store, tmp_path, script, events).execute(run_id)
    assert (run["status"], run["result"]) == ("ok", "done")
    assert isinstance(events[0], ScheduleFired) and store.list_notifications() == []


async def test_past_the_daily_limit_runs_are_refused_and_noted_once(store, clock, tmp_path):
    events = []
    schedule_id = add(store)
    done = store.add_run(schedule_id, "Hourly", fired_by="schedule", due_at=None)
    store.start_run(done, owner="test")
    store.finish_run(done, "ok")
    runner = launcher(store, tmp_path, "raise SystemExit(0)", events, daily_limit=1)
    first = await runner.execute(store.add_run(schedule_id, "Hourly", fired_by="schedule", due_at=None))
    second = await runner.execute(store.add_run(schedule_id, "Hourly", fired_by="schedule", due_at=None))
    assert (first["status"], second["status"]) == ("refused", "refused")
    assert first["started_at"] is None and "daily limit of 1" in first["error"]
    assert len(store.list_notifications()) == 1
    clock.now += 24 * 60 * MINUTE + 1  # a day later the limit has room again
    assert not runner.over_limit()


async def test_a_supervisor_that_stops_kills_the_run_and_records_it(store, tmp_path):
    store.clock = lambda: to_ms(dt.datetime.now(UTC))
    events = []
    run_id = store.add_run(add(store), "Long", fired_by="schedule", due_at=None)
    task = asyncio.ensure_future(launcher(store, tmp_path, "import time; time.sleep(60)", events).execute(run_id))
    while not any(isinstance(e, ProcessStateChanged) and e.new == "running" for e in events):
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    run = store.get_run(run_id)
    assert run["status"] == "failed" and "supervising it stopped" in run["error"]


async def test_one_schedules_trouble_does_not_stop_the_others(store, clock, tmp_path):
    supervisor = make(store, clock, tmp_path)
    calls = []

    def broken(row):
        calls.append(row["id"])
        if row["title"] == "Broken":
            raise RuntimeError("cannot freeze")
        store.set_schedule_card(row["id"], {"model": "echo"})

    supervisor.prepare = broken
    bad, good = add(store, title="Broken"), add(store, {"kind": "once", "atMs": T0 + 10}, title="Good")
    clock.now = T0 + 20
    await settle(supervisor)
    assert statuses(store, good) == [("ok", "schedule")] and statuses(store, bad) == []
    await settle(supervisor)
    assert calls == [bad, good]  # not retried at once…
    clock.now += 60_000
    await settle(supervisor)
    assert calls == [bad, good, bad]  # …but a minute later
    assert supervisor._delay() == supervisor.settings.poll_s
