"""m009 on a store the previous schema made, without loss; calls keyed by our id with the
model's id unique only within its message; owners (pid and process start) that tell a
dead process from a live one; session leases taken by one turn at a time."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlite_utils import Database

from workbench.errors import StoreError
from workbench.store import MIGRATIONS, Store
from workbench.store.migrations import migrate
from workbench.store.owners import owner_alive, process_start, this_process

BEFORE_M009 = [m for m in MIGRATIONS if m.number < 9]


def old_store(path: Path) -> None:
    """A store as the code before m009 made it, with the rows that code wrote."""
    conn = sqlite3.connect(path)
    migrate(Database(conn), str(path), BEFORE_M009)
    calls = json.dumps([{"id": "call_0", "name": "word_count", "arguments": {"text": "a b"}}])
    conn.executescript(f"""
        INSERT INTO sessions (id, title, model, created_at, updated_at, folder)
            VALUES ('s1', 'first', 'echo', 1, 2, '/w'), ('s2', 'second', 'echo', 1, 2, NULL),
                   ('s3', 'third', 'echo', 1, 2, NULL);
        INSERT INTO messages (id, session_id, seq, role, content, tool_calls, tool_call_id, name, created_at)
            VALUES (1, 's1', 1, 'user', 'count', NULL, NULL, NULL, 1),
                   (2, 's1', 2, 'assistant', '', '{calls}', NULL, NULL, 1),
                   (3, 's1', 3, 'tool', '{{"ok": true, "result": 2}}', NULL, 'call_0', 'word_count', 1),
                   (4, 's2', 1, 'user', 'count', NULL, NULL, NULL, 1),
                   (5, 's2', 2, 'assistant', '', '{calls}', NULL, NULL, 1),
                   (6, 's3', 1, 'assistant', 'bad json kept', '[not json', NULL, NULL, 1);
        INSERT INTO tool_calls (id, session_id, tool, arguments, caller, status, result, error, started_at, ended_at)
            VALUES ('call_0', 's1', 'builtin.word_count', '{{"text": "a b"}}', 'model', 'ok', '2', NULL, 5, 6),
                   ('call_9', 's2', 'waiter.wait', '{{}}', 'model', 'running', NULL, NULL, 7, NULL),
                   ('direct', NULL, 'builtin.word_count', '{{}}', 'person', 'error', NULL, '{{"kind": "tool"}}', 8, 9);
        INSERT INTO scheduled_prompts (id, title, instruction, schedule, created_at)
            VALUES (1, 'Daily', 'hi', '{{"kind": "interval", "everyMinutes": 5}}', 1);
        INSERT INTO schedule_runs (id, schedule_id, title, fired_by, created_at, status, session_id, owner, pid, error)
            VALUES (1, 1, 'Daily', 'schedule', 1, 'paused', 's1', '1@h', 10, 'needs approval'),
                   (2, 1, 'Daily', 'resume', 2, 'running', 's2', '999999999@h', 11, NULL);
        UPDATE schedule_runs SET resumes = 1 WHERE id = 2;
        INSERT INTO notifications (id, at, level, title, body, run_id)
            VALUES (1, 3, 'warning', 'Scheduled run paused: Daily', 'needs approval', 1);
    """)
    conn.commit()
    conn.close()


def test_m009_keeps_every_row_and_ties_calls_to_their_messages(tmp_path):
    path = tmp_path / "w.db"
    old_store(path)
    with Store.open(path) as store:
        assert store.schema_version == MIGRATIONS[-1].number >= 9
        calls = {c["id"]: c for c in store.list_tool_calls()}
        assert set(calls) == {"call_0", "call_9", "direct"}
        assert (calls["call_0"]["model_call_id"], calls["call_0"]["message_id"],
                calls["call_0"]["status"], calls["call_0"]["result"]) == ("call_0", 2, "ok", 2)
        assert (calls["call_9"]["model_call_id"], calls["call_9"]["message_id"]) == ("call_9", None)
        assert (calls["direct"]["session_id"], calls["direct"]["error"]) == (None, {"kind": "tool"})
        assert calls["call_9"]["status"] == "running" and calls["call_9"]["owner_pid"] is None
        [result] = [m for m in store.list_messages("s1") if m["role"] == "tool"]
        assert (result["tool_call_id"], result["call_id"]) == ("call_0", "call_0")
        assert store._one("SELECT content, tool_calls FROM messages WHERE id = 6") == {
            "content": "bad json kept", "tool_calls": "[not json"}
        runs = {r["id"]: r for r in store.list_runs()}
        assert (runs[1]["status"], runs[1]["error"], runs[2]["resumes"], runs[2]["owner"]) == (
            "paused", "needs approval", 1, "999999999@h")
        [note] = store.list_notifications()
        assert note["run_id"] == 1  # the rebuild did not set it NULL
        assert store._all("PRAGMA foreign_key_check") == []
        assert store._one("PRAGMA foreign_keys") == {"foreign_keys": 1}
        # The call an old process left running has no owner any more: settled at once.
        [settled] = store.settle_interrupted_calls()
        assert (settled["id"], settled["status"]) == ("call_9", "interrupted")
        assert store.settle_session("s2")[0]["model_call_id"] == "call_0"


def test_a_model_id_is_unique_only_within_its_message(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        one, two = store.create_session()["id"], store.create_session()["id"]
        first = store.add_message(one, "assistant", "", tool_calls=[{"id": "c1", "name": "t"}])
        second = store.add_message(two, "assistant", "", tool_calls=[{"id": "c1", "name": "t"}])
        store.start_tool_call("call_a", "t", {}, "model", one, model_call_id="c1", message_id=first)
        store.start_tool_call("call_b", "t", {}, "model", two, model_call_id="c1", message_id=second)
        store.start_tool_call("call_c", "t", {}, "person", one, model_call_id="c1")
        with pytest.raises(StoreError, match=f"message {first} already made a call with the model's id 'c1'"):
            store.start_tool_call("call_d", "t", {}, "model", one, model_call_id="c1", message_id=first)
        assert sorted(c["id"] for c in store.list_tool_calls()) == ["call_a", "call_b", "call_c"]
        assert store.get_tool_call("call_b")["owner_pid"] == this_process().pid


def test_an_owner_is_its_pid_and_its_start(tmp_path):
    me = this_process()
    assert me.alive() and me.start == process_start(me.pid) and me.start.count("@") == 2
    child = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    start = process_start(child.pid)
    assert owner_alive(child.pid, start)
    boot, namespace = start.split("@")[1:]
    assert not owner_alive(child.pid, f"1@{boot}@{namespace}")  # the pid, reused by another
    assert not owner_alive(child.pid, f"{start.split('@')[0]}@an-earlier-boot@{namespace}")
    assert owner_alive(999_999_999, f"1@{boot}@another-namespace")  # cannot be seen: alive
    child.communicate(b"\n")
    assert not owner_alive(child.pid, start)
    assert not owner_alive(None, None)


def test_one_turn_holds_a_lease_until_it_lets_go_or_its_owner_dies(tmp_path):
    path = tmp_path / "w.db"
    with Store.open(path) as store:
        session = store.create_session()["id"]
        assert store.take_lease(session, "turn-1", "workbench run") is None
        assert store.take_lease(session, "turn-1", "workbench run") is None  # already ours
        held = store.take_lease(session, "turn-2", "the TUI")
        assert (held["token"], held["holder"], held["owner_pid"]) == ("turn-1", "workbench run",
                                                                       this_process().pid)
        assert not store.release_lease(session, "turn-2")
        assert store.release_lease(session, "turn-1")
        assert store.take_lease(session, "turn-2", "the TUI") is None
        store.release_lease(session, "turn-2")
        with pytest.raises(StoreError, match="no session 'nope'"):
            store.take_lease("nope", "t", "x")
    other = subprocess.Popen([sys.executable, "-c", f"""
import sys
from workbench.store import Store
store = Store.open({str(path)!r})
assert store.take_lease({session!r}, "theirs", "workbench run") is None
print("held", flush=True)
sys.stdin.read()
"""], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline() == "held\n"
        with Store.open(path) as store:
            assert store.take_lease(session, "mine", "workbench run")["owner_pid"] == other.pid
            other.kill()
            other.wait()
            assert store.lease(session) is None  # its owner is gone: expired
            assert store.take_lease(session, "mine", "workbench run") is None
            assert store.lease(session)["token"] == "mine"
    finally:
        other.kill()
        other.wait()


def test_settling_gives_each_unanswered_call_its_recorded_outcome_or_says_it_was_interrupted(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        session = store.create_session()["id"]
        store.add_message(session, "user", "go")
        message = store.add_message(session, "assistant", "", tool_calls=[
            {"id": "done", "name": "t", "arguments": {}, "call_id": "call_done"},
            {"id": "failed", "name": "t", "arguments": {}, "call_id": "call_failed"},
            {"id": "never", "name": "t", "arguments": {}, "call_id": "call_never"},
            {"id": "answered", "name": "t", "arguments": {}, "call_id": "call_answered"}])
        for ours, theirs in (("call_done", "done"), ("call_failed", "failed"),
                             ("call_answered", "answered")):
            store.start_tool_call(ours, "t", {}, "model", session, model_call_id=theirs,
                                  message_id=message)
        store.finish_tool_call("call_done", "ok", {"n": 1})
        store.finish_tool_call("call_failed", "error", error={"kind": "tool", "message": "boom"})
        store.finish_tool_call("call_answered", "ok", 2)
        store.add_message(session, "tool", '{"ok": true, "result": 2}', tool_call_id="answered",
                          name="t", call_id="call_answered")
        added = store.settle_session(session)
        assert [(a["call_id"], a["model_call_id"], a["result"]) for a in added] == [
            ("call_done", "done", {"ok": True, "result": {"n": 1}}),
            ("call_failed", "failed", {"ok": False, "error": {"kind": "tool", "message": "boom"}}),
            ("call_never", "never", added[2]["result"])]
        assert added[2]["result"]["error"]["kind"] == "interrupted"
        tools = [m for m in store.list_messages(session) if m["role"] == "tool"]
        assert [(m["tool_call_id"], m["call_id"]) for m in tools] == [
            ("answered", "call_answered"), ("done", "call_done"), ("failed", "call_failed"),
            ("never", "call_never")]
        assert store.settle_session(session) == []  # whole now: nothing more to add
