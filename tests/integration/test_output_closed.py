"""Output whose reader goes away (``| head -1``): the real ``workbench`` command writing
into a real pipe whose reader closes it, in every output mode. The command ends
quietly with exit code 141, prints no traceback, and what it was doing is settled in
the store: the turn kept whole and answered, no tool call left ``running``."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.errors import ExitCode

COMMAND = [sys.executable, "-m", "workbench"]
NOISE = ("Traceback", "BrokenPipe", "Exception ignored", "Broken pipe")


def into_closed_pipe(*args: str) -> subprocess.CompletedProcess:
    """Run ``workbench ARGS`` with stdout a pipe whose reader has already closed it."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*COMMAND, *args], stdout=write, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True, env=dict(os.environ),
                              timeout=120)
    finally:
        os.close(write)
    return done


def into_head(*args: str) -> tuple[subprocess.CompletedProcess, bytes]:
    """Run ``workbench ARGS | head -c1``: a reader that takes one byte and leaves."""
    command = subprocess.Popen([*COMMAND, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=dict(os.environ))
    head = subprocess.run(["head", "-c1"], stdin=command.stdout, capture_output=True, timeout=120)
    command.stdout.close()
    _, err = command.communicate(timeout=120)
    return subprocess.CompletedProcess(command.args, command.returncode, "", err.decode()), head.stdout


def quiet(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == ExitCode.OUTPUT_CLOSED, (done.returncode, done.stderr)
    for word in NOISE:
        assert word not in done.stderr, done.stderr


def settled(db: Path) -> list[str]:
    """The statuses of every tool call; asserts each session's calls are all answered."""
    from workbench.store import Store

    with sqlite3.connect(db) as conn:
        statuses = [row[0] for row in conn.execute("SELECT status FROM tool_calls")]
        sessions = [row[0] for row in conn.execute("SELECT id FROM sessions")]
    with Store.open(db) as store:
        for session_id in sessions:
            assert store.unanswered_calls(session_id) == [], session_id
            assert store.list_messages(session_id)[0]["role"] == "user"
    assert "running" not in statuses, statuses
    return statuses


@pytest.fixture
def script(tmp_path: Path, home) -> Path:
    """A scripted model that says much (more than a pipe holds), calls a tool, then
    answers again."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps([
        {"text": "line\n" * 30_000, "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]},
        {"text": "done\n"}]))
    return path


@pytest.mark.parametrize("mode", [[], ["--jsonl"]], ids=["plain", "jsonl"])
def test_a_run_into_a_closed_pipe_ends_quietly_and_is_kept_cancelled(script, home, mode):
    done = into_closed_pipe("run", *mode, "--model", f"scripted:{script}", "hello")
    quiet(done)
    settled(home.db_path)
    with sqlite3.connect(home.db_path) as conn:
        roles = [row[0] for row in conn.execute("SELECT role FROM messages ORDER BY rowid")]
    # Stopped as ctrl+c stops it: what you typed is kept, the model's second answer never came.
    assert roles[0] == "user" and roles.count("assistant") <= 1, roles


@pytest.mark.parametrize("mode", [[], ["--jsonl"]], ids=["plain", "jsonl"])
def test_a_run_piped_to_head_ends_quietly_with_its_turn_whole(script, home, mode):
    done, taken = into_head("run", *mode, "--model", f"scripted:{script}", "hello")
    assert len(taken) == 1
    quiet(done)
    settled(home.db_path)


@pytest.mark.parametrize("mode", [[], ["--json"], ["--jsonl"]], ids=["plain", "json", "jsonl"])
def test_a_call_into_a_closed_pipe_ends_quietly_with_its_record_settled(home, mode):
    done = into_closed_pipe("call", "word_count", "--args", '{"text": "a b c"}', *mode)
    quiet(done)
    statuses = settled(home.db_path)
    assert set(statuses) <= {"ok", "cancelled"} and len(statuses) <= 1, statuses


def test_a_listing_piped_to_head_ends_quietly(home, script):
    for number in range(3):
        assert subprocess.run([*COMMAND, "run", "--model", "echo", f"hello {number}"],
                              capture_output=True, timeout=120).returncode == 0
    done = into_closed_pipe("sessions", "list")
    quiet(done)
    done, taken = into_head("sessions", "list")
    assert len(taken) == 1
    assert done.returncode in (0, ExitCode.OUTPUT_CLOSED)  # it may fit the pipe whole
    for word in NOISE:
        assert word not in done.stderr, done.stderr


@pytest.mark.parametrize("mode", [[], ["--jsonl"]], ids=["plain", "jsonl"])
def test_the_daemon_stops_cleanly_when_its_output_is_closed(home, mode):
    # It says it started at once; a daemon that went on with nobody reading would
    # run past the time limit.
    done = into_closed_pipe("daemon", *mode)
    quiet(done)
