"""A disk that fills during a turn: the turn is saved whole or marked failed, never left
as half a turn that looks like a whole one. Real small filesystems (tmpfs) holding the
workbench home, filled part-way through a turn; the real ``workbench run``, the core
method the TUI sends through, and a scheduled run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from disks import fill

from commands import workbench

from workbench.errors import ExitCode

FILLED = "the disk is full (database or disk is full); the turn was cut short and is kept up to there, marked failed"


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """A model that calls a tool, then answers more than the disk has room for."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps([
        {"text": "Counting.", "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]},
        {"text": "x" * 400_000}]))
    return path


def turns(db: Path, session_id: str) -> list[list[dict]]:
    """The session's messages cut into turns, each from its user message on."""
    from workbench.store import Store

    with Store.open(db) as store:
        assert store.unanswered_calls(session_id) == []
        messages = store.list_messages(session_id)
    found: list[list[dict]] = []
    for message in messages:
        if message["role"] == "user":
            found.append([])
        assert found, messages
        found[-1].append(message)
    return found


def whole_or_failed(turn: list[dict]) -> str:
    """``whole`` (it ends in an answer asking for nothing) or ``failed`` (it ends in the
    marker of a failed turn); anything else fails the test."""
    last = turn[-1]
    if last["role"] == "system" and last["name"] == "turn_failed":
        assert "the disk holding the store was full" in last["content"]
        return "failed"
    assert last["role"] == "assistant" and not last["tool_calls"], turn
    return "whole"


def sessions(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return [row[0] for row in conn.execute("SELECT id FROM sessions ORDER BY created_at")]


def test_a_run_the_disk_cuts_short_is_kept_up_to_there_and_marked_failed(small_disk, script):
    env = {"WORKBENCH_HOME": str(small_disk / "home")}
    assert workbench("run", "--model", "echo", "hello", env=env).returncode == 0
    filler = fill(small_disk, 150_000)
    done = workbench("run", "--model", f"scripted:{script}", "count these", env=env)
    db = small_disk / "home" / "workbench.db"
    assert done.returncode == ExitCode.ERROR, done.stderr
    assert f"error: {db}: {FILLED}; free some space and send it again" in done.stderr, done.stderr
    filler.unlink()
    first, second = sessions(db)
    assert [whole_or_failed(t) for t in turns(db, first)] == ["whole"]
    (cut,) = turns(db, second)
    assert whole_or_failed(cut) == "failed"
    assert cut[0]["content"] == "count these"
    # The call that ran is answered with what it gave, and its record is not left running.
    answers = [json.loads(m["content"]) for m in cut if m["role"] == "tool"]
    assert answers == [{"ok": True, "result": {"words": 2, "lines": 1, "characters": 3}}]
    with sqlite3.connect(db) as conn:
        assert {row[0] for row in conn.execute("SELECT status FROM tool_calls")} == {"ok"}

    # With room again, the session goes on: the next turn is whole, and the failed one
    # is read as failed by whoever reads the session.
    again = workbench("run", "--session", second, "--model", "echo", "once more", env=env)
    assert again.returncode == 0, again.stderr
    assert [whole_or_failed(t) for t in turns(db, second)] == ["failed", "whole"]
    shown = workbench("sessions", "show", second, env=env)
    assert shown.returncode == 0 and "[turn failed]" in shown.stdout


async def test_the_core_send_the_tui_uses_marks_a_cut_turn_failed(small_disk, script, monkeypatch):
    from workbench.core.host import Host

    monkeypatch.setenv("WORKBENCH_HOME", str(small_disk / "home"))
    host = Host.open(model=f"scripted:{script}")
    try:
        filler = fill(small_disk, 150_000)
        result = await host.chats.send_prompt("count these")
        assert result.status == "error" and FILLED in (result.error or "")
        filler.unlink()
        (cut,) = turns(host.store.path, result.session_id)
        assert whole_or_failed(cut) == "failed" and cut[0]["content"] == "count these"
    finally:
        await host.aclose()


def test_a_scheduled_run_the_disk_cuts_short_ends_as_an_error_with_its_turn_marked(small_disk, script):
    home = small_disk / "home"
    env = {"WORKBENCH_HOME": str(home)}
    added = workbench("schedule", "add", "--title", "Count", "--prompt", "count these",
                      "--every", "60", "--model", f"scripted:{script}", "--json", env=env)
    assert added.returncode == 0, added.stderr
    schedule = str(json.loads(added.stdout)["id"])
    filler = fill(small_disk, 150_000)
    ran = workbench("schedule", "run-now", schedule, "--json", env=env)
    filler.unlink()
    runs = workbench("runs", "list", "--json", env=env)
    assert runs.returncode == 0, runs.stderr
    (run,) = json.loads(runs.stdout)
    assert run["status"] == "failed" and FILLED in run["error"], run
    (cut,) = turns(home / "workbench.db", run["session_id"])
    assert whole_or_failed(cut) == "failed" and cut[0]["content"] == "count these"
    assert ran.returncode == ExitCode.ERROR, ran.stderr
