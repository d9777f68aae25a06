"""How fast the scheduler finds what is due, and how late a due run starts, in one run.

Run with ``.venv/bin/python bench/scheduler.py``. It prints:

- the next due time of 10,000 schedules of every shape (a sixth of them cron),
  reckoned from scratch in a zone with daylight saving, beside the floor of merely
  looping over them — goal: at most 50 ms;
- one tick of the supervisor over a store holding those 10,000 schedules, none due
  (the query for due ones and for the soonest next time);
- a real ``workbench daemon`` firing once-schedules: the delay from each one's due
  time to its run's start (recorded by the supervisor before the child process is
  started) — goal: at most 1 s.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

from workbench.scheduler.arithmetic import next_after, to_ms

COUNT = 10_000
REPEATS = int(os.environ.get("BENCH_RUNS", "15"))
FIRES = int(os.environ.get("BENCH_FIRES", "6"))
PARIS = ZoneInfo("Europe/Paris")


def shapes(now: int) -> list[dict]:
    """10,000 schedules: each shape in turn, with varied days and times."""
    made = []
    for i in range(COUNT):
        hour, minute = i % 24, (i * 7) % 60
        made.append([
            {"kind": "once", "atMs": now + (i + 1) * 60_000},
            {"kind": "interval", "everyMinutes": 1 + i % 240},
            {"kind": "weekly", "weekdays": sorted({i % 7, (i + 3) % 7}), "hour": hour, "minute": minute},
            {"kind": "monthly", "day": 1 + i % 31, "hour": hour, "minute": minute},
            {"kind": "yearly", "month": 1 + i % 12, "day": 1 + i % 31, "hour": hour, "minute": minute},
            {"kind": "cron", "expr": f"{minute} {hour % 12}-{hour % 12 + 8} * * {1 + i % 5}"},
        ][i % 6])
    return made


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(samples) * 1000:7.2f} ms  p95 {p95 * 1000:7.2f} ms"


def bench_next_due() -> None:
    now = to_ms(dt.datetime.now(PARIS))
    schedules = shapes(now)
    floor, full = [], []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for schedule in schedules:
            schedule["kind"]
        floor.append(time.perf_counter() - started)
        started = time.perf_counter()
        soonest = min(t for t in (next_after(s, now, anchor=now - 1, zone=PARIS) for s in schedules)
                      if t is not None)
        full.append(time.perf_counter() - started)
    assert soonest > now
    p50 = statistics.median(full) * 1000
    print(f"{'loop over 10,000 (floor)':<40} {ms(floor)}")
    print(f"{'next due of 10,000, every shape':<40} {ms(full)}   "
          f"x{statistics.median(full) / statistics.median(floor):.0f} the floor   "
          f"goal <= 50 ms  {'ok' if p50 <= 50 else 'OVER'}")


def bench_tick(root: Path) -> None:
    from workbench.store import Store

    now = to_ms(dt.datetime.now(PARIS))
    with Store.open(root / "tick.db") as store:
        with store.transaction():
            for i, schedule in enumerate(shapes(now)):
                sid = store.add_scheduled_prompt({"title": f"s{i}", "instruction": "go", "schedule": schedule,
                                                  "runMissed": False}, source="bench")
                store.update_schedule(sid, last_due_at=now, anchor_at=now - 1,
                                      next_due_at=next_after(schedule, now, anchor=now - 1, zone=PARIS))
        samples = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            due = store.list_schedules(due_by=now)
            soonest = store.soonest_due()
            samples.append(time.perf_counter() - started)
        assert due == [] and soonest > now
    print(f"{'a tick over 10,000 stored, none due':<40} {ms(samples)}")


def bench_fire(root: Path) -> None:
    home = root / "home"
    home.mkdir()
    (home / "config.toml").write_text('model = "echo"\n')
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    workbench = [sys.executable, "-m", "workbench"]
    daemon = subprocess.Popen([*workbench, "daemon", "--jsonl"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        for line in daemon.stdout:
            if '"new": "running"' in line and '"scheduler"' in line:
                break
        # Made in one process, a little ahead, so each is due after the daemon has seen it.
        base = time.time() + 4
        add = ("import sys, datetime as dt\nfrom workbench.core.host import Host\n"
               "with Host.open(defer_extensions=True) as host:\n"
               "    for i, at in enumerate(sys.argv[1:]):\n"
               "        host.schedules.add_schedule(title=f'fire {i}', instruction='hi', "
               "schedule={'kind': 'once', 'atMs': int(float(at) * 1000)}, extensions=[])\n")
        subprocess.run([sys.executable, "-c", add, *(str(base + i * 0.7) for i in range(FIRES))],
                       env=env, check=True)
        ended = 0
        for line in daemon.stdout:
            ended += '"schedule_run_ended"' in line
            if ended == FIRES:
                break
        runs = json.loads(subprocess.run([*workbench, "runs", "list", "--json"], env=env, check=True,
                                         capture_output=True, text=True).stdout)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
    late = [(run["started_at"] - run["due_at"]) / 1000 for run in runs]
    took = [(run["ended_at"] - run["started_at"]) / 1000 for run in runs]
    worst = max(late) * 1000
    print(f"{'due time -> run start (' + str(len(late)) + ' runs)':<40} {ms(late)}   "
          f"goal <= 1000 ms  {'ok' if worst <= 1000 else 'OVER'} (worst {worst:.1f} ms)")
    print(f"{'run start -> end (echo model, child)':<40} {ms(took)}   "
          f"statuses: {sorted({run['status'] for run in runs})}")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        bench_next_due()
        bench_tick(Path(folder))
        bench_fire(Path(folder))


if __name__ == "__main__":
    main()
