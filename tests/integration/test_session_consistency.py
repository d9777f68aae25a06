"""Sessions stay whole across kills and concurrent runs, with real processes: a `workbench
run` killed with SIGKILL during a call leaves a session a strict OpenAI-compatible server
accepts; a turn that died holding its session is settled by the next process that looks;
two `workbench run --session S` never interleave (the second waits, or with --no-wait is
refused with exit code 75); a model that reuses a call id in another session, or twice
in one message, has every call recorded."""

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

from processes import alive
from strict_models import StrictModelServer

WAITER = {
    "name": "waiter", "displayName": "Waiter", "description": "Waits for a gate, for tests.",
    "entry": "main.py",
    "tools": [{"name": "wait_for_gate", "description": "Wait until the gate file exists.",
               "parameters": {"type": "object", "properties": {"gate": {"type": "string"}},
                              "required": ["gate"]},
               "function": "wait_for_gate",
               "permissions": {"read": [{"path": "$home/gate", "reason": "to see the gate"}]}}],
}
CODE = """
import os
import time


def wait_for_gate(args, ctx):
    while not os.path.exists(args["gate"]):
        time.sleep(0.02)
    return {"passed": True}
"""


def cli(*args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    done = workbench(*args, env=env, timeout=90)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "workbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


class Lines:
    """The JSON lines a process prints, read as they come."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.items: list[dict] = []
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            self.items.append(json.loads(line))

    def done(self) -> list[dict]:
        self._thread.join(timeout=60)
        return self.items


def wait_for(predicate, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s")


def script(tmp_path: Path, replies: list) -> str:
    path = tmp_path / f"model-{len(list(tmp_path.glob('model-*')))}.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def rows(tmp_path: Path, sql: str, params: tuple = ()) -> list[dict]:
    conn = sqlite3.connect(f"file:{tmp_path / 'home' / 'workbench.db'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute(sql, params)]
    except sqlite3.OperationalError:
        return []  # not made yet
    finally:
        conn.close()


def messages(session_id: str) -> list[dict]:
    return json.loads(cli("sessions", "show", session_id, "--json").stdout)["messages"]


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    """The waiter installed and allowed; the file its calls wait for (not there yet)."""
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "echo"\n[headless]\napprovals = "allowlisted"\nallowlist = ["wait_for_gate"]\n')
    folder = tmp_path / "waiter"
    folder.mkdir()
    (folder / "loca.json").write_text(json.dumps(WAITER))
    (folder / "main.py").write_text(textwrap.dedent(CODE))
    cli("ext", "install", str(folder), "--yes")
    (tmp_path / "gate").mkdir()
    return tmp_path / "gate" / "open"


def wait_call(gate: Path, model_id: str = "call_0") -> dict:
    return {"tool_calls": [{"id": model_id, "name": "wait_for_gate", "arguments": {"gate": str(gate)}}]}


@pytest.mark.timeout(180)
def test_a_run_killed_during_a_call_leaves_a_session_a_strict_server_accepts(tmp_path, gate):
    model = script(tmp_path, [wait_call(gate), {"text": "never said"}])
    run = start("run", "--model", model, "--jsonl", "wait at the gate")
    try:
        [call] = wait_for(lambda: rows(tmp_path, "SELECT * FROM tool_calls WHERE status = 'running'"))
        assert (call["owner_pid"], call["model_call_id"]) == (run.pid, "call_0")
        run.send_signal(signal.SIGKILL)
        run.wait()
    finally:
        run.kill()
        gate.touch()  # lets go of anything of it still waiting
    session = call["session_id"]
    # Any process that looks settles it: the call is interrupted, the session answers it.
    shown = messages(session)
    [record] = rows(tmp_path, "SELECT * FROM tool_calls WHERE id = ?", (call["id"],))
    assert record["status"] == "interrupted" and record["ended_at"]
    assert json.loads(record["error"])["kind"] == "interrupted"
    assert [m["role"] for m in shown] == ["user", "assistant", "tool"]
    answer = shown[-1]
    assert (answer["tool_call_id"], answer["call_id"]) == ("call_0", call["id"])
    error = json.loads(answer["content"])["error"]
    assert error["kind"] == "interrupted" and f"pid {run.pid}" in error["message"]
    audit = rows(tmp_path, "SELECT action, detail FROM audit_log WHERE action = 'tool.interrupted'")
    assert [json.loads(a["detail"])["call_id"] for a in audit] == [call["id"]]
    # A model that refuses what OpenAI refuses takes the session's next turn.
    with StrictModelServer() as server:
        with (tmp_path / "home" / "config.toml").open("a") as config:
            config.write(f'[openai]\nbase_url = "{server.base_url}"\n')
        again = cli("run", "--session", session, "--model", "openai:gpt-test", "and now?",
                    check=False)
        assert (again.returncode, again.stdout) == (0, "accepted\n"), again.stderr
        assert server.refusals == []
        sent = server.requests[0]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]


@pytest.mark.timeout(120)
def test_a_turn_that_died_holding_its_session_is_settled_by_the_next_process(tmp_path):
    """Killed after the model asked for a call and before any record of it was kept."""
    cli("sessions", "list")  # makes the store
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from workbench.store import Store
        store = Store.open({str(tmp_path / 'home' / 'workbench.db')!r})
        session = store.create_session(title="held")["id"]
        store.add_message(session, "user", "count")
        store.add_message(session, "assistant", "", tool_calls=[
            {{"id": "t1", "name": "word_count", "arguments": {{"text": "a"}}, "call_id": "call_mine"}}])
        assert store.take_lease(session, "turn-1", "workbench run") is None
        print(session, flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    session = holder.stdout.readline().strip()
    try:
        [lease] = rows(tmp_path, "SELECT * FROM session_leases")
        assert lease["owner_pid"] == holder.pid
        assert [m["role"] for m in messages(session)] == ["user", "assistant"]  # alive: left alone
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    finally:
        holder.kill()
    assert not alive(holder.pid)
    shown = messages(session)
    assert [m["role"] for m in shown] == ["user", "assistant", "tool"]
    assert (shown[2]["tool_call_id"], shown[2]["call_id"]) == ("t1", "call_mine")
    assert json.loads(shown[2]["content"])["error"]["kind"] == "interrupted"
    assert rows(tmp_path, "SELECT * FROM session_leases") == []


@pytest.mark.timeout(180)
def test_two_runs_on_one_session_never_interleave(tmp_path, gate):
    model = script(tmp_path, [wait_call(gate), {"text": "A done"}, {"text": "B done"}])
    first = start("run", "--model", model, "--jsonl", "from A")
    second = None
    try:
        first_lines = Lines(first)
        [call] = wait_for(lambda: rows(tmp_path, "SELECT * FROM tool_calls WHERE status = 'running'"))
        session = call["session_id"]
        before = messages(session)
        # Refused at once, with who holds it; nothing added.
        refused = cli("run", "--session", session, "--no-wait", "from B", check=False)
        assert refused.returncode == 75
        assert "is in use" in refused.stderr and f"pid {first.pid}" in refused.stderr
        assert "workbench run" in refused.stderr
        assert messages(session) == before
        # Waits, saying so, while the first turn runs; then runs after it.
        second = start("run", "--session", session, "--jsonl", "from B")
        second_lines = Lines(second)
        notice = wait_for(lambda: next((e for e in second_lines.items if e["type"] == "notice"
                                        and "waiting" in e["message"]), None))
        assert f"pid {first.pid}" in notice["message"]
        assert messages(session) == before
        gate.touch()
        assert first.wait(timeout=60) == 0 and second.wait(timeout=60) == 0
        assert first_lines.done()[-1]["text"] == "A done"
        assert second_lines.done()[-1]["text"] == "B done"
    finally:
        gate.touch()
        for process in (first, second):
            if process is not None:
                process.kill()
                process.wait()
    shown = messages(session)
    assert [(m["role"], m["content"] if m["role"] != "tool" else json.loads(m["content"])["ok"])
            for m in shown] == [
        ("user", "from A"), ("assistant", ""), ("tool", True), ("assistant", "A done"),
        ("user", "from B"), ("assistant", "B done")]
    assert rows(tmp_path, "SELECT * FROM session_leases") == []


@pytest.mark.timeout(120)
def test_a_model_id_reused_in_another_session_or_in_one_message_is_recorded(tmp_path):
    reused = script(tmp_path, [
        {"tool_calls": [{"id": "call_0", "name": "word_count", "arguments": {"text": "a b"}}]},
        {"text": "two"}])
    sessions = []
    for _ in range(2):
        done = cli("run", "--model", reused, "--jsonl", "count", check=False)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert done.returncode == 0 and lines[-1]["text"] == "two", done.stderr
        assert [e["ok"] for e in lines if e["type"] == "tool_call_ended"] == [True]
        sessions.append(lines[0]["session_id"])
    calls = rows(tmp_path, "SELECT * FROM tool_calls ORDER BY started_at")
    assert [(c["session_id"], c["model_call_id"], c["status"]) for c in calls] == [
        (sessions[0], "call_0", "ok"), (sessions[1], "call_0", "ok")]
    assert calls[0]["id"] != calls[1]["id"]
    twice = script(tmp_path, [
        {"tool_calls": [{"id": "c1", "name": "word_count", "arguments": {"text": "a"}},
                        {"id": "c1", "name": "word_count", "arguments": {"text": "b c"}}]},
        {"text": "done"}])
    done = cli("run", "--model", twice, "--jsonl", "count twice")
    session = json.loads(done.stdout.splitlines()[0])["session_id"]
    shown = messages(session)
    assert [c["id"] for c in shown[1]["tool_calls"]] == ["c1", "c1_2"]
    results = [(m["tool_call_id"], json.loads(m["content"])["result"]["words"])
               for m in shown if m["role"] == "tool"]
    assert results == [("c1", 1), ("c1_2", 2)]
    recorded = rows(tmp_path, "SELECT id, model_call_id FROM tool_calls WHERE session_id = ?", (session,))
    assert sorted(r["model_call_id"] for r in recorded) == ["c1", "c1_2"]
    assert {r["id"] for r in recorded} == {c["call_id"] for c in shown[1]["tool_calls"]}


@pytest.mark.timeout(120)
def test_a_session_two_old_runs_interleaved_is_sent_in_a_shape_a_strict_server_accepts(tmp_path):
    """What two concurrent runs wrote before turns were serialized: a call, the other
    run's message and call, then both results, one answering a call id reused."""
    cli("sessions", "list")  # makes the store
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import json
        from workbench.store import Store
        with Store.open({str(tmp_path / 'home' / 'workbench.db')!r}) as store:
            session = store.create_session(title="mixed", model="echo")["id"]
            def call(model_id):
                return [{{"id": model_id, "name": "word_count", "arguments": {{"text": "a"}}}}]
            def result(model_id, words):
                return json.dumps({{"ok": True, "result": {{"words": words}}}})
            store.add_message(session, "user", "from A")
            store.add_message(session, "assistant", "", tool_calls=call("c1"))
            store.add_message(session, "user", "from B")
            store.add_message(session, "assistant", "", tool_calls=call("c1"))
            store.add_message(session, "tool", result("c1", 1), tool_call_id="c1", name="word_count")
            store.add_message(session, "tool", result("c1", 2), tool_call_id="c1", name="word_count")
            store.add_message(session, "tool", result("gone", 3), tool_call_id="gone", name="word_count")
            print(session)
    """)], capture_output=True, text=True, env=dict(os.environ), check=True)
    session = done.stdout.strip()
    with StrictModelServer() as server:
        with (tmp_path / "home" / "config.toml").open("a") as config:
            config.write(f'[openai]\nbase_url = "{server.base_url}"\n')
        again = cli("run", "--session", session, "--model", "openai:gpt-test", "and now?",
                    check=False)
        assert (again.returncode, again.stdout) == (0, "accepted\n"), again.stderr
        assert server.refusals == []
        sent = [(m["role"], m.get("tool_call_id") or [c["id"] for c in m.get("tool_calls") or []]
                 or m["content"]) for m in server.requests[0]["messages"]]
        assert sent == [("user", "from A"), ("assistant", ["c1"]), ("tool", "c1"),
                        ("user", "from B"), ("assistant", ["c1_2"]), ("tool", "c1_2"),
                        ("user", "and now?")]
    # What was stored stays as it was, the new turn after it.
    assert [m["role"] for m in messages(session)][-2:] == ["user", "assistant"]
    assert len(messages(session)) == 9
