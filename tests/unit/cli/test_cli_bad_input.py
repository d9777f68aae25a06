"""Bad input as a person meets it: the real ``workbench`` command, never a traceback.

Each case runs the command in a child process with the test's own home and checks the
message (what and where), the documented exit code, that no traceback was printed,
and that the store is as it was (or whole).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from disks import fill

from commands import workbench

from workbench.errors import ExitCode


def strict_json(text: str):
    """Parse as the JSON spec has it: NaN and Infinity are not JSON."""
    def refuse(name):
        raise ValueError(f"{name} in the output")
    return json.loads(text, parse_constant=refuse)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def store(home) -> Path:
    """A store holding one finished session."""
    done = workbench("run", "--model", "echo", "hello")
    assert done.returncode == 0, done.stderr
    return home.db_path


def messages(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT role, content FROM messages ORDER BY rowid").fetchall()


def test_arguments_nested_a_thousand_deep_are_refused_by_name(store):
    done = workbench("call", "word_count", "--args", json.dumps({"text": "x"})[:-1] + ', "n": '
                     + nested(1000) + "}")
    assert done.returncode == ExitCode.USAGE
    assert "error: --args: not readable: nested more than 100 lists or objects deep" in done.stderr


def test_an_answers_file_nested_deep_is_refused_with_its_path(store, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(nested(1000))
    done = workbench("call", "word_count", "--args", '{"text": "a"}', "--answers", str(answers))
    assert done.returncode == ExitCode.USAGE
    assert f"error: {answers}: not readable: nested" in done.stderr


@pytest.mark.parametrize("content, message", [
    (nested(1000).encode(), ": not readable: nested more than 100"),
    (b'[{"text": "ok"},\n {"text": "\xff\xfe"}]', ":2:12: not UTF-8 text (byte 0xff)"),
    (b'[{"text": "x", "tool_calls": [{"name": "word_count", "arguments": {"text": "\\ud800"}}]}]',
     "#/0/tool_calls/0/arguments/text: the text holds a lone surrogate"),
    (b'[{"text": "x", "tool_calls": [{"name": "word_count", "arguments": {"n": NaN}}]}]',
     ": not valid JSON: NaN is not a JSON number"),
])
def test_a_scripted_model_file_json_cannot_hold_is_refused_with_where(store, tmp_path, content, message):
    script = tmp_path / "script.json"
    script.write_bytes(content)
    before = messages(store)
    done = workbench("run", "--model", f"scripted:{script}", "hi")
    assert done.returncode == ExitCode.ERROR
    assert f"error: {script}{message}" in done.stderr
    assert messages(store) == before


def test_a_lone_surrogate_in_arguments_is_refused_before_the_tool_runs(store):
    done = workbench("call", "word_count", "--args", '{"text": "a \\ud800 b"}', "--json")
    assert done.returncode == ExitCode.USAGE
    assert "--args#/text: the text holds a lone surrogate" in done.stderr
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT count(*) FROM tool_calls").fetchone() == (0,)


def test_a_lone_surrogate_from_the_model_is_refused_as_invalid_arguments(home, tmp_path):
    # The model's arguments reach the gateway without passing a file reader.
    from workbench.core.gateway import CallOptions
    from workbench.core.host import Host
    from workbench.headless.responder import HeadlessResponder

    import asyncio

    with Host.open(responder=HeadlessResponder("deny")) as host:
        outcome = asyncio.run(host.tools.call("word_count", {"text": "a \ud800"},
                                             CallOptions(caller="model")))
        assert not outcome.ok and outcome.error["kind"] == "invalid_arguments"
        assert outcome.error["message"] == "/text: the text holds a lone surrogate, which is not Unicode text"
        outcome = asyncio.run(host.tools.call("word_count", {"text": "a", "n": float("nan")},
                                             CallOptions(caller="model")))
        assert outcome.error["message"] == "/n: nan is not a JSON number"


@pytest.fixture
def bad_tools(store, tmp_path):
    folder = tmp_path / "badtools"
    folder.mkdir()
    (folder / "loca.json").write_text(json.dumps({
        "name": "badtools", "displayName": "Bad tools", "description": "Tools that misbehave.",
        "entry": "main.py",
        "tools": [{"name": name, "description": name, "function": name, "parameters": {"type": "object"}}
                  for name in ("surrogate_error", "not_a_number", "surrogate_result")]}))
    (folder / "main.py").write_text(
        "def surrogate_error(args, ctx):\n    raise ValueError('bad \\ud800 thing')\n"
        "def not_a_number(args, ctx):\n    return {'x': 1.5, 'y': float('nan'), 'z': float('inf')}\n"
        "def surrogate_result(args, ctx):\n    return {'text': 'a \\udfff'}\n")
    done = workbench("ext", "install", "--yes", str(folder))
    assert done.returncode == 0, done.stderr
    return folder


def test_a_tool_error_holding_a_lone_surrogate_is_reported_and_recorded(bad_tools, store):
    done = workbench("call", "surrogate_error")
    assert done.returncode == ExitCode.ERROR
    assert done.stderr == "error (tool): ValueError: bad \\ud800 thing\n"
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT status, error FROM tool_calls").fetchall()
    assert [(status, json.loads(error)["message"]) for status, error in rows] == [
        ("error", "ValueError: bad \\ud800 thing")]


@pytest.mark.parametrize("flag", ["--json", "--jsonl"])
def test_a_result_holding_nan_is_refused_and_output_stays_json(bad_tools, flag):
    done = workbench("call", "not_a_number", flag)
    assert done.returncode == ExitCode.ERROR
    last = strict_json(done.stdout.splitlines()[-1])
    assert last["ok"] is False
    assert last["error"]["message"] in ("the result is not JSON: /y: nan is not a JSON number",
                                        "the result is not JSON: /z: inf is not a JSON number")
    for line in done.stdout.splitlines():
        strict_json(line)


def test_a_result_holding_a_lone_surrogate_is_refused(bad_tools):
    done = workbench("call", "surrogate_result", "--json")
    assert done.returncode == ExitCode.ERROR
    assert strict_json(done.stdout)["error"]["message"] == (
        "the result is not JSON: /text: the text holds a lone surrogate, which is not Unicode text")


def test_json_output_writes_nan_as_null():
    from workbench import jsontext

    text = jsontext.dumps({"a": float("nan"), "b": [float("-inf"), 1.0], "c": "\ud800"}, ensure_ascii=False)
    assert strict_json(text) == {"a": None, "b": [None, 1.0], "c": "\ud800"}
    text.encode("utf-8")


def test_a_store_with_garbage_in_its_middle_pages_is_named_on_every_command(store):
    for prompt in ("two", "three", "four"):
        assert workbench("run", "--model", "echo", prompt * 4000).returncode == 0
    assert not store.with_name(store.name + "-wal").exists() or \
        store.with_name(store.name + "-wal").stat().st_size == 0
    size = store.stat().st_size
    assert size >= 12 * 4096
    with store.open("r+b") as handle:
        handle.seek(4 * 4096)
        handle.write(bytes(range(256)) * (6 * 4096 // 256))
    damaged = store.read_bytes()
    for command in (["sessions", "list"], ["run", "--model", "echo", "hi"],
                    ["call", "word_count", "--args", '{"text": "a"}']):
        done = workbench(*command)
        assert done.returncode == ExitCode.ERROR, (command, done.stderr)
        assert f"error: {store}: the store is damaged" in done.stderr, (command, done.stderr)
        assert store.read_bytes() == damaged


def test_a_full_disk_during_install_leaves_nothing_behind(small_disk, tmp_path):
    env = {"WORKBENCH_HOME": str(small_disk / "home")}
    assert workbench("ext", "list", env=env).returncode == 0
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "loca.json").write_text(json.dumps({
        "name": "big", "displayName": "Big", "description": "A large file.", "entry": "main.py",
        "tools": [{"name": "t", "description": "t", "function": "t", "parameters": {"type": "object"}}]}))
    (folder / "main.py").write_text("def t(args, ctx):\n    return 1\n")
    (folder / "blob.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    done = workbench("ext", "install", "--yes", str(folder), env=env)
    assert done.returncode == ExitCode.ERROR
    assert "the disk is full" in done.stderr and "blob.bin" in done.stderr
    home = small_disk / "home"
    assert not (home / "extensions" / "big").exists()
    assert list((home / "staging").glob("*")) == [] if (home / "staging").exists() else True
    listed = workbench("ext", "list", env=env)
    assert listed.returncode == 0 and "big" not in listed.stdout


def test_a_full_disk_during_a_turn_is_named_and_the_store_stays_whole(small_disk, tmp_path):
    env = {"WORKBENCH_HOME": str(small_disk / "home")}
    assert workbench("run", "--model", "echo", "hello", env=env).returncode == 0
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"text": "Counting.", "tool_calls": [{"name": "word_count", "arguments": {"text": "a b"}}]},
        {"text": "x" * 400_000}]))
    filler = fill(small_disk, 150_000)
    done = workbench("run", "--model", f"scripted:{script}", "hi", env=env)
    assert done.returncode == ExitCode.ERROR
    assert "the disk is full" in done.stderr, done.stderr
    filler.unlink()
    db = small_disk / "home" / "workbench.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        sessions = [row[0] for row in conn.execute("SELECT id FROM sessions")]
    # What was saved before the disk filled is sent as a history a model accepts: every
    # call the wire carries is answered right after it (a call the disk left unanswered
    # is given an answer by the provider layer).
    from workbench.agent.loop import history
    from workbench.agent.openai_wire import to_wire
    from workbench.store import Store

    with Store.open(db) as store:
        for session_id in sessions:
            wire = to_wire(history(store, session_id))
            for index, message in enumerate(wire):
                asked = [call["id"] for call in message.get("tool_calls") or []]
                answers = [m.get("tool_call_id") for m in wire[index + 1:index + 1 + len(asked)]]
                assert answers == asked, wire
    assert workbench("sessions", "list", env=env).returncode == 0


def test_an_unexpected_error_is_one_line_and_a_log_file(home, capsys):
    from workbench.cli.errors import guarded

    with pytest.raises(SystemExit) as ended:
        with guarded():
            raise KeyError("no such thing")
    assert ended.value.code == ExitCode.INTERNAL == 70
    err = capsys.readouterr().err
    assert err.startswith("error: workbench failed unexpectedly (KeyError: 'no such thing'); "
                          "the details are in ")
    log = Path(err.strip().rsplit(" ", 1)[1])
    assert log.parent == home.logs_dir
    assert "Traceback" in log.read_text() and "KeyError" in log.read_text()


def test_an_argument_that_is_not_utf8_is_refused_by_position(store):
    before = messages(store)
    done = subprocess.run([sys.executable, "-m", "workbench", "run", "--model", "echo", b"a\xed\xa0\x80b"],
                          capture_output=True, env=dict(os.environ), timeout=90)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr.decode() == "error: argument 4 (a\\xed\\xa0\\x80b) is not UTF-8 text\n"
    assert messages(store) == before


@pytest.mark.parametrize("option", ["--answers", "--model"])
def test_a_fifo_or_device_named_as_a_json_file_is_refused_not_waited_on(store, tmp_path, option):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        if option == "--answers":
            done = workbench("call", "word_count", "--args", '{"text": "a"}', "--answers", str(path))
            assert done.returncode == ExitCode.USAGE
        else:
            done = workbench("run", "--model", f"scripted:{path}", "hi")
            assert done.returncode == ExitCode.ERROR
        assert done.stderr == f"error: {path}: not a regular file\n"
