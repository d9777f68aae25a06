"""Runs that go wrong, with real processes: a daemon killed with -9 in the middle of a run
(nothing of it survives; its run is interrupted as soon as any process looks), a run that wedges past its
time limit (killed with its whole tree), a run that needs a permission its card lacks
(fails fast with a notification; or pauses, and resumes once approved), the daily limit."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from commands import workbench

from workbench.supervisor.proctree import alive, descendants

NAPPER = {
    "name": "napper", "displayName": "Napper", "description": "Waits, for tests of time limits.",
    "entry": "main.py",
    "tools": [{"name": "nap", "description": "Wait for a number of seconds. Use when asked to wait.",
               "parameters": {"type": "object", "properties": {"seconds": {"type": "number"}},
                              "additionalProperties": False},
               "function": "nap", "triggers": ["wait a while"]}],
}


def cli(*args: str, check: bool = True, process: bool = False) -> subprocess.CompletedProcess:
    done = workbench(*args, process=process)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def configure(home: Path, text: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('model = "echo"\n' + text)


def script(tmp_path: Path, replies: list) -> str:
    path = tmp_path / f"model-{len(list(tmp_path.glob('model-*')))}.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def install_napper(tmp_path: Path) -> None:
    folder = tmp_path / "napper"
    folder.mkdir()
    (folder / "loca.json").write_text(json.dumps(NAPPER))
    (folder / "main.py").write_text(textwrap.dedent("""
        import time


        def nap(args, ctx):
            time.sleep(args.get("seconds", 60))
            return {"slept": args.get("seconds", 60)}
    """))
    cli("ext", "install", str(folder), "--yes")


def start_daemon() -> tuple[subprocess.Popen, list[dict]]:
    process = subprocess.Popen([sys.executable, "-m", "workbench", "daemon", "--jsonl"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ))
    events: list[dict] = []
    threading.Thread(target=lambda: events.extend(json.loads(line) for line in process.stdout),
                     daemon=True).start()
    return process, events


def wait_for(predicate, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s")


def run_of(run_id: int) -> dict:
    return json.loads(cli("runs", "show", str(run_id), "--json").stdout)


def soon(seconds: float = 2.0) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(time.time() + seconds).isoformat(timespec="milliseconds")


def nap_started(log: Path) -> bool:
    return log.is_file() and '"tool_call_started"' in log.read_text()


@pytest.mark.timeout(90)
def test_a_daemon_killed_mid_run_has_its_run_interrupted_as_soon_as_anyone_looks(tmp_path):
    configure(tmp_path / "home")
    install_napper(tmp_path)
    model = script(tmp_path, [{"tool_calls": [{"name": "nap", "arguments": {"seconds": 120}}]}, {"text": "rested"}])
    sid = json.loads(cli("schedule", "add", "--title", "Long nap", "--prompt", "wait", "--at", soon(2.5),
                         "--model", model, "--json").stdout)["id"]
    daemon, events = start_daemon()
    try:
        fired = wait_for(lambda: next((e for e in events if e["type"] == "schedule_fired"), None))
        run = run_of(fired["run_id"])
        wait_for(lambda: nap_started(Path(run["log"])))  # the tool is sleeping in its sandboxed worker
        run = run_of(fired["run_id"])
        tree = [run["pid"], *descendants(run["pid"])]
        assert run["status"] == "running" and len(tree) >= 3  # the run, its zygote, the worker…
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        wait_for(lambda: not any(alive(pid) for pid in tree), timeout=10)  # nothing of it survives
    finally:
        daemon.kill()
    # No daemon runs: the first process that looks settles the run (its owner is gone).
    [listed] = json.loads(cli("runs", "list", "--json").stdout)
    assert (listed["id"], listed["status"]) == (fired["run_id"], "interrupted")
    assert listed["error"].startswith("interrupted:") and f"{daemon.pid}@" in listed["error"]
    assert listed["ended_at"]
    shown = json.loads(cli("schedule", "show", str(sid), "--json").stdout)
    assert shown["failures"] == 1 and shown["last_run"]["status"] == "interrupted"
    notes = json.loads(subprocess.run(
        [sys.executable, "-c", "import json; from workbench.core.host import Host\n"
         "with Host.open(defer_extensions=True) as h: print(json.dumps(h.schedules.notifications()))"],
        capture_output=True, text=True, env=dict(os.environ), check=True).stdout)
    assert [n["title"] for n in notes] == ["Scheduled run interrupted: Long nap"]
    # The call the run was making is settled too, and its session answers it.
    [session] = json.loads(cli("sessions", "list", "--json").stdout)
    shown = json.loads(cli("sessions", "show", session["id"], "--json").stdout)
    assert [m["role"] for m in shown["messages"]][-1] == "tool"
    assert json.loads(shown["messages"][-1]["content"])["error"]["kind"] == "interrupted"
    # A daemon started later finds nothing left to settle.
    restarted, events = start_daemon()
    try:
        wait_for(lambda: any(e["type"] == "process_state_changed" and e["new"] == "running"
                             for e in events))
        assert not [e for e in events if e["type"] == "schedule_run_ended"]
        assert run_of(fired["run_id"])["status"] == "interrupted"
    finally:
        restarted.send_signal(signal.SIGTERM)
        assert restarted.wait(timeout=20) == 0


@pytest.mark.timeout(120)
def test_a_wedged_run_is_killed_with_its_whole_tree_and_recorded_timed_out(tmp_path):
    configure(tmp_path / "home", "[schedule]\nrun_timeout_s = 8.0\n")
    install_napper(tmp_path)
    model = script(tmp_path, [{"tool_calls": [{"name": "nap", "arguments": {"seconds": 120}}]}, {"text": "rested"}])
    sid = json.loads(cli("schedule", "add", "--title", "Wedged", "--prompt", "wait", "--every", "600",
                         "--model", model, "--json").stdout)["id"]
    seen: list[int] = []

    def watch() -> None:  # the run's processes, as they appear, read off the store directly
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with sqlite3.connect(tmp_path / "home" / "workbench.db", timeout=5) as db:
                    row = db.execute("SELECT pid, status FROM schedule_runs ORDER BY id DESC LIMIT 1").fetchone()
                    napping = db.execute("SELECT count(*) FROM tool_calls WHERE tool LIKE '%nap' "
                                         "AND status = 'running'").fetchone()[0]
            except sqlite3.OperationalError:  # the store is not made yet
                row, napping = None, 0
            if row and row[0] and row[1] == "running":
                seen.extend(p for p in [row[0], *descendants(row[0])] if p not in seen)
                if napping and len(seen) >= 3:
                    return
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    started = time.monotonic()
    # A process of its own: the watcher reads the store while the run is on, which one
    # process must not do beside the command's connections (closing a descriptor of the
    # file drops every lock this process holds on it).
    done = cli("schedule", "run-now", str(sid), "--json", check=False, process=True)
    took = time.monotonic() - started
    watcher.join()
    run = json.loads(done.stdout)
    assert done.returncode == 1 and run["status"] == "timed_out"
    # Not killed before its time; a run left to its 120 s nap would meet the test's time-out.
    assert "longer than 8 s" in run["error"] and took >= 8
    assert len(seen) >= 3 and not any(alive(pid) for pid in seen)
    [note] = json.loads(subprocess.run(
        [sys.executable, "-c", "import json; from workbench.core.host import Host\n"
         "with Host.open(defer_extensions=True) as h: print(json.dumps(h.schedules.notifications()))"],
        capture_output=True, text=True, env=dict(os.environ), check=True).stdout)
    assert note["title"] == "Scheduled run timed out: Wedged" and note["run_id"] == run["id"]


@pytest.mark.timeout(90)
def test_a_run_needing_an_unapproved_permission_fails_fast_and_the_next_is_not_blocked(tmp_path):
    configure(tmp_path / "home", "[extensions]\nsamples = true\n")
    memories = [{"tool_calls": [{"name": "sample_memory", "arguments": {"action": "list"}}]},
                {"text": "listed"}]
    sid = json.loads(cli("schedule", "add", "--title", "Needs a grant", "--prompt", "list my memories",
                         "--at", soon(2.5), "--model", script(tmp_path, memories), "--json").stdout)["id"]
    other = json.loads(cli("schedule", "add", "--title", "Plain", "--prompt", "hi", "--at", soon(3.0),
                           "--json").stdout)["id"]
    daemon, events = start_daemon()
    try:
        ended = {e["title"]: e for e in wait_for(lambda: [e for e in events if e["type"] == "schedule_run_ended"]
                                                 if len([e for e in events if e["type"] == "schedule_run_ended"]) >= 2
                                                 else None, timeout=25)}
        failed = run_of(ended["Needs a grant"]["run_id"])
        assert failed["status"] == "failed" and failed["error"].startswith("needs approval:")
        assert "samples.sample_memory asked for a permission outside the card: memories write" \
            in failed["error"]
        assert failed["ended_at"] - failed["started_at"] < 10_000  # it did not wait for anyone
        assert failed["needs"][0]["permissions"][0]["kind"] == "memories"
        assert any(e["type"] == "notice" and e["level"] == "error" and "Needs a grant" in e["message"]
                   for e in events)
        assert ended["Plain"]["status"] == "ok"  # the other schedule ran all the same
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)
    # The same schedule with the permission approved on its card runs through.
    cli("schedule", "edit", str(sid), "--grant", "sample_memory:memories", "--model", script(tmp_path, memories))
    granted = json.loads(cli("schedule", "run-now", str(sid), "--json").stdout)
    assert (granted["status"], granted["result"]) == ("ok", "listed")
    assert other


@pytest.mark.timeout(90)
def test_a_paused_run_resumes_once_approved(tmp_path):
    configure(tmp_path / "home", "[extensions]\nsamples = true\n")
    listing = {"tool_calls": [{"name": "sample_memory", "arguments": {"action": "list"}}]}
    calls = [listing, listing, {"text": "listed"}]
    sid = json.loads(cli("schedule", "add", "--title", "Pausing", "--prompt", "list my memories",
                         "--every", "600", "--on-need", "pause", "--model", script(tmp_path, calls),
                         "--json").stdout)["id"]
    paused = cli("schedule", "run-now", str(sid), "--json", check=False)
    run = json.loads(paused.stdout)
    assert paused.returncode == 3 and run["status"] == "paused"
    assert f"workbench runs resume {run['id']} --approve" in run["error"]
    refused = cli("runs", "resume", str(run["id"] + 1000), check=False)
    assert refused.returncode == 1
    resumed = json.loads(cli("runs", "resume", str(run["id"]), "--approve", "--json").stdout)
    assert (resumed["status"], resumed["fired_by"], resumed["resumes"]) == ("ok", "resume", run["id"])
    assert resumed["session_id"] == run["session_id"] and resumed["result"] == "listed"
    card = json.loads(cli("schedule", "show", str(sid), "--json").stdout)["card"]
    assert [(g["tool"], g["kind"], g["value"]) for g in card["grants"]] == [
        ("samples.sample_memory", "memories", "write")]


@pytest.mark.timeout(60)
def test_past_the_daily_limit_a_run_is_refused_and_recorded(tmp_path):
    configure(tmp_path / "home", "[schedule]\ndaily_limit = 1\n")
    sid = str(json.loads(cli("schedule", "add", "--title", "Often", "--prompt", "hi", "--every", "5",
                             "--json").stdout)["id"])
    assert json.loads(cli("schedule", "run-now", sid, "--json").stdout)["status"] == "ok"
    refused = cli("schedule", "run-now", sid, "--json", check=False)
    run = json.loads(refused.stdout)
    assert refused.returncode == 1 and run["status"] == "refused" and run["started_at"] is None
    assert "daily limit of 1" in run["error"]
    listed = [r["status"] for r in json.loads(cli("runs", "list", "--json").stdout)]
    assert listed == ["refused", "ok"]
