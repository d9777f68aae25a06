"""Headless commands stop when told: a delegate past its time limit is killed with what it
started, and ``workbench call`` stopped by a signal answers ``cancelled`` with exit 4.

The real commands, in child processes with the test's own home. A command that waited
for a delegate's child (``sleep 100``) would run past the subprocess time limit.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from commands import COMMAND, workbench
from processes import alive

from workbench.errors import ExitCode
from workbench.supervisor.proctree import descendants


@pytest.fixture
def reading_model(tmp_path, home):
    home.config_file.write_text("[headless]\ndelegate_timeout_s = 1\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "/etc/hostname"}}]},
        {"text": "I could not read it."}]))
    return f"scripted:{script}"


def delegate(tmp_path: Path, start_child: str) -> tuple[Path, Path]:
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "delegate.sh"
    script.write_text(f"#!/bin/sh\n{start_child} &\necho $! > {pid_file}\nsleep 100\n")
    script.chmod(0o755)
    return script, pid_file


def test_a_delegate_past_its_time_is_killed_with_its_children(tmp_path, reading_model):
    script, pid_file = delegate(tmp_path, "sleep 100")
    # A real process: a run that waited for the delegate's child (or the pipes it holds)
    # would run past the time limit.
    done = workbench("run", "--model", reading_model, "--approvals", f"delegate:{script}", "read it",
                     process=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "the delegate did not answer within 1 s" in done.stderr
    assert done.stdout == "I could not read it.\n"
    assert not alive(int(pid_file.read_text()))


def test_a_child_that_left_the_delegates_group_is_not_waited_for(tmp_path, reading_model):
    script, pid_file = delegate(tmp_path, "setsid sleep 100")
    try:
        done = workbench("run", "--model", reading_model, "--approvals", f"delegate:{script}",
                         "read it", process=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "the delegate did not answer within 1 s" in done.stderr
    finally:
        if pid_file.exists():
            # The child left the group on purpose; it is this test's to end.
            child = int(pid_file.read_text())
            if alive(child):
                os.kill(child, signal.SIGKILL)


@pytest.fixture
def napping(tmp_path, home):
    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "loca.json").write_text(json.dumps({
        "name": "slow", "displayName": "Slow", "description": "A tool that takes its time.",
        "entry": "main.py",
        "tools": [{"name": "nap", "description": "sleeps", "function": "nap",
                   "parameters": {"type": "object"}}]}))
    (folder / "main.py").write_text("import time\n\ndef nap(args, ctx):\n    time.sleep(100)\n    return 1\n")
    assert workbench("ext", "install", "--yes", str(folder)).returncode == 0
    return home


@pytest.mark.parametrize("signum, sigint_ignored", [
    (signal.SIGINT, False), (signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)])
def test_call_stopped_by_a_signal_answers_cancelled_and_exits_4(napping, signum, sigint_ignored):
    def ignore_sigint():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    process = subprocess.Popen([*COMMAND, "call", "nap", "--jsonl"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ),
                               preexec_fn=ignore_sigint if sigint_ignored else None)
    try:
        # Read on until the call has started (the extensions' load may be told first).
        first = json.loads(process.stdout.readline())
        while first["type"] == "extension_status_changed":
            first = json.loads(process.stdout.readline())
        assert first["type"] == "tool_call_started"
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == ExitCode.CANCELLED, err
    assert "Traceback" not in out + err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[-1] == {"type": "outcome", "ok": False, "error": {
        "kind": "cancelled", "message": f"the call was cancelled ({signum.name})"}}
    assert lines[-2]["type"] == "tool_call_ended" and lines[-2]["error"]["kind"] == "cancelled"
    with sqlite3.connect(napping.db_path) as conn:
        assert conn.execute("SELECT status FROM tool_calls").fetchall() == [("cancelled",)]


def test_call_stopped_by_ctrl_c_prints_its_json_answer(napping):
    process = subprocess.Popen([*COMMAND, "call", "nap", "--json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        # Nothing is printed before the answer: wait for the tool's worker to be running.
        db = napping.db_path
        while True:
            if db.exists():
                with sqlite3.connect(db) as conn:
                    try:
                        if conn.execute("SELECT count(*) FROM tool_calls WHERE status = 'running'"
                                        ).fetchone()[0] and len(descendants(process.pid)) >= 3:
                            break  # recorded, and its worker runs (zygote, supervisor, worker)
                    except sqlite3.OperationalError:
                        pass
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)  # a poll interval, not a wait for anything in particular
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == ExitCode.CANCELLED, err
    assert json.loads(out) == {"ok": False, "error": {"kind": "cancelled",
                                                      "message": "the call was cancelled (SIGINT)"}}
