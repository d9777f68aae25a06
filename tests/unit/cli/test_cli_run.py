"""``workbench run`` and ``workbench sessions`` as a script meets them: real processes."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap

import pytest

from commands import workbench


@pytest.fixture
def script(tmp_path):
    def write(replies):
        path = tmp_path / "script.json"
        path.write_text(json.dumps(replies))
        return f"scripted:{path}"
    return write


def test_jsonl_prints_one_object_per_line_ending_in_the_reply(script):
    model = script([{"text": "Counting.", "tool_calls": [{"name": "word_count", "arguments": {"text": "a b c"}}]},
                    {"text": "Three."}])
    done = workbench("run", "--model", model, "--jsonl", "hi")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["type"] == "session_started"
    assert lines[-1] == {"type": "turn_ended", "session_id": lines[0]["session_id"], "status": "done",
                         "text": "Three.", "error": None}
    ended = [e for e in lines if e["type"] == "tool_call_ended"]
    assert ended[0]["result"] == {"words": 3, "lines": 1, "characters": 5}


def test_plain_output_is_the_reply_and_sessions_resume(script):
    model = script([{"text": "first answer"}, {"text": "second answer"}])
    first = workbench("run", "--model", model, "one")
    assert (first.returncode, first.stdout) == (0, "first answer\n")
    listed = json.loads(workbench("sessions", "list", "--json").stdout)
    assert len(listed) == 1 and listed[0]["message_count"] == 2
    session_id = listed[0]["id"]
    second = workbench("run", "--model", model, "--session", session_id[:8], "two")
    assert second.stdout == "second answer\n"
    shown = json.loads(workbench("sessions", "show", session_id, "--json").stdout)
    assert [m["content"] for m in shown["messages"]] == ["one", "first answer", "two", "second answer"]
    human = workbench("sessions", "show", session_id[:10])
    assert "[assistant] second answer" in human.stdout


def test_a_permission_needed_in_headless_mode_is_denied_never_waited_for(script, workdir):
    (workdir / "notes.txt").write_text("hello")  # in the project: reading it asks
    model = script([{"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                    {"text": "I could not read it."}])
    done = workbench("run", "--model", model, "--jsonl", "read it", input="")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    requests = [e for e in lines if e["type"] == "request"]
    assert requests[0]["request"]["type"] == "permission"
    assert "policy is deny" in requests[0]["denied"]
    ended = [e for e in lines if e["type"] == "tool_call_ended"][0]
    message = ended["error"]["message"]
    assert ended["error"]["kind"] == "permission" and f"read this project ({workdir})" in message
    assert "Read the files of the project this chat works in" in message
    assert done.returncode == 6 and lines[-1]["text"] == "I could not read it."  # a refusal


def test_a_delegate_can_grant(script, tmp_path):
    approve = tmp_path / "approve.py"
    approve.write_text(textwrap.dedent("""
        import json, sys
        json.load(sys.stdin)
        print(json.dumps({"decision": "once"}))
    """))
    target = tmp_path / "work" / "note.txt"  # in the project, the folder it runs in
    target.write_text("hello from the note")
    model = script([{"tool_calls": [{"name": "read_file", "arguments": {"path": str(target)}}]}, {"text": "ok"}])
    done = workbench("run", "--model", model, "--jsonl", "--approvals", f"delegate:{sys.executable} {approve}", "go")
    ended = [json.loads(x) for x in done.stdout.splitlines() if '"tool_call_ended"' in x][0]
    assert ended["ok"] and ended["result"]["content"] == "hello from the note"


def test_usage_and_model_errors_have_their_exit_codes(script, tmp_path):
    assert workbench("run", "--approvals", "maybe", "x").returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text('[{"text": "a"},\n {"tool_calls": [{"name": 5}]}]')
    done = workbench("run", "--model", f"scripted:{bad}", "x")
    assert done.returncode == 1 and f"{bad}#/1/tool_calls/0/name" in done.stderr
    assert workbench("sessions", "show", "nope").returncode == 1
    assert "no session 'nope'" in workbench("sessions", "show", "nope").stderr


def test_a_store_from_a_newer_version_is_refused_with_its_exit_code_and_kept(tmp_path):
    home = tmp_path / "home"
    assert workbench("sessions", "list").returncode == 0
    db = home / "workbench.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 999")
    conn.close()
    before = db.read_bytes()
    done = workbench("run", "hello")
    assert done.returncode == 5 and "newer" in done.stderr and str(db) in done.stderr
    assert db.read_bytes() == before


def test_a_malformed_config_names_file_and_line_and_is_kept(tmp_path):
    config = tmp_path / "home" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("# mine\nmodel = \"echo\"\ntheme = [\n")
    before = config.read_bytes()
    done = workbench("run", "hello")
    assert done.returncode == 1 and f"{config}:3:" in done.stderr and "invalid TOML" in done.stderr
    assert config.read_bytes() == before


def test_version_is_printed():
    done = workbench("--version")
    assert done.returncode == 0 and done.stdout.startswith("workbench ")
