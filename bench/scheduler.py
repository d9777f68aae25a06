"""How fast the scheduler finds what is due, and how late a due run starts, in one run.

Run with ``.venv/bin/python bench/scheduler.py``. It prints:

- for 10,000 daily crons, 10,000 February-29 crons, 10,000 crons of mixed kinds and
  10,000 schedules of every shape (a sixth of them cron), in a zone with daylight
  saving:

  - the soonest next due time reckoned from scratch, all from one instant as a tick
    or a listing does (each schedule's is reckoned once when it is made, changed or
    fires), beside croniter's own iteration over the same crons (the peer; timed over
    a sample of them and scaled) — goal: at most 50 ms;
  - the same found as the supervisor finds it each tick, from the next due times
    stored and indexed (the query for due ones and for the soonest), beside reckoning
    from scratch in the same run — goal: at most 50 ms;
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

from _report import report
from workbench.scheduler.arithmetic import next_after, to_ms

COUNT = 10_000
REPEATS = int(os.environ.get("BENCH_RUNS", "15"))
PEER_SAMPLE = 500
PEER_REPEATS = 3
GOAL_MS = 50
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


def daily(now: int) -> list[dict]:
    """10,000 daily crons at every minute of the day."""
    return [{"kind": "cron", "expr": f"{i % 60} {i // 60 % 24} * * *"} for i in range(COUNT)]


def leap_day(now: int) -> list[dict]:
    """10,000 crons on February 29th: the next one is years away."""
    return [{"kind": "cron", "expr": f"{i % 60} {i // 60 % 24} 29 2 *"} for i in range(COUNT)]


def mixed_cron(now: int) -> list[dict]:
    """10,000 crons of many kinds: steps, ranges, weekdays, last days, Friday the 13th,
    both day fields, a month or two a year."""
    made = []
    for i in range(COUNT):
        minute, hour = i % 60, i // 60 % 24
        made.append({"kind": "cron", "expr": [
            f"{minute} {hour} * * *", f"*/{1 + i % 30} {hour % 12}-{hour % 12 + 8} * * {1 + i % 5}",
            f"{minute} {hour} L * *", f"{minute} {hour} 13 * 5", f"{minute} {hour} 29 2 *",
            f"{minute} {hour} {1 + i % 28},15 */3 *", f"{minute} */{1 + i % 6} * * 0,6",
            f"{minute} {hour} 31 1,3,5,7 *",
        ][i % 8]})
    return made


SETS = [("daily crons", daily), ("February-29 crons", leap_day), ("mixed crons", mixed_cron),
        ("every shape (a sixth cron)", shapes)]


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def scratch(schedules: list[dict], now: int) -> int:
    """The soonest next due time of ``schedules``, each reckoned from scratch."""
    return min(t for t in (next_after(s, now, anchor=now - 1, zone=PARIS) for s in schedules)
               if t is not None)


def by_croniter(schedules: list[dict], now: int) -> float:
    """Seconds croniter's own iteration takes for ``schedules``' crons, over a sample
    of ``PEER_SAMPLE`` scaled to all of them (it is some 20 times slower)."""
    from croniter import croniter

    every = [s["expr"] for s in schedules if s["kind"] == "cron"]
    crons = every[:PEER_SAMPLE]
    start = dt.datetime.fromtimestamp(now / 1000, PARIS)
    began = time.perf_counter()
    for expr in crons:
        croniter(expr, start).get_next(float)
    return (time.perf_counter() - began) * len(every) / len(crons)


def stored(root: Path, name: str, schedules: list[dict], now: int):
    """A store holding ``schedules``, each planned (its next due time stored)."""
    from workbench.store import Store

    store = Store.open(root / f"{name.split()[0]}.db")
    with store.transaction():
        for i, schedule in enumerate(schedules):
            sid = store.add_scheduled_prompt({"title": f"s{i}", "instruction": "go", "schedule": schedule,
                                              "runMissed": False}, source="bench")
            store.update_schedule(sid, last_due_at=now, anchor_at=now - 1,
                                  next_due_at=next_after(schedule, now, anchor=now - 1, zone=PARIS))
    return store


def bench_next_due(root: Path) -> None:
    """For each set: the next due time reckoned from scratch (what is done once, when a
    schedule is made, changed or fires), beside croniter's own iteration; and as the
    supervisor finds it, from the stored and indexed next due times, beside reckoning
    from scratch."""
    now = to_ms(dt.datetime.now(PARIS))
    for name, make in SETS:
        schedules = make(now)
        store = stored(root, name, schedules, now)
        reckoned, ticks = [], []
        try:
            for _ in range(REPEATS):
                started = time.perf_counter()
                soonest = scratch(schedules, now)
                reckoned.append(time.perf_counter() - started)
                started = time.perf_counter()
                due = store.list_schedules(due_by=now)
                found = store.soonest_due()
                ticks.append(time.perf_counter() - started)
                assert due == [] and found == soonest, (found, soonest)
            peer = [by_croniter(schedules, now) for _ in range(PEER_REPEATS)]
        finally:
            store.close()
        report("scheduler", f"next due of 10,000 {name}, from scratch", p50_ms(reckoned),
               p50_ms(peer), "croniter get_next (peer)", max_ms=GOAL_MS)
        report("scheduler", f"next due of 10,000 {name}, stored (a tick)", p50_ms(ticks),
               p50_ms(reckoned), "from scratch, same run", max_ms=GOAL_MS)


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
    print(f"{'due time -> run start (' + str(len(late)) + ' runs)':<40} {ms(late)}")
    report("scheduler", f"due time -> run start, worst of {len(late)} runs", max(late) * 1000,
           max_ms=1000)
    print(f"{'run start -> end (echo model, child)':<40} {ms(took)}   "
          f"statuses: {sorted({run['status'] for run in runs})}")


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(samples) * 1000:7.2f} ms  p95 {p95 * 1000:7.2f} ms"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        bench_next_due(Path(folder))
        bench_fire(Path(folder))


if __name__ == "__main__":
    main()
