"""One slow MCP server does not stall every run: a server that failed its last start is
not waited on again (its failure is kept, reported, and it is started again in the
background), a call of one of its own tools still waits for it, and what it listed
once it works is kept for the next runs. The real ``workbench`` command with real
misbehaving server processes (and the real time server once it is mended)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from processes import alive

from commands import workbench
from commands import workbench as run_workbench

ROOT = Path(__file__).resolve().parents[2]
TIME = ROOT / ".mcp-servers/venv/bin/mcp-server-time"
LONG_MS = 600_000
"""A start bound far past the time each command is given (``workbench``'s timeout):
a command that waited for it would not return."""


def configure(home, name: str, script: Path, startup_ms: int) -> None:
    home.config_file.write_text(
        f"[mcp]\nstartup_timeout_ms = {startup_ms}\n\n"
        f"[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(script))}]\nsandbox = false\n")


def server_script(tmp_path: Path, garbage: bool) -> tuple[Path, Path]:
    """A server that notes each start (its pid) and hangs, silent or after a line that
    is not JSON-RPC; once ``mended`` exists beside it, it is the real time server."""
    starts = tmp_path / "starts"
    starts.mkdir()
    script = tmp_path / "server.py"
    script.write_text(
        "import os, sys, time\n"
        f"open(os.path.join({str(starts)!r}, str(os.getpid())), 'w').close()\n"
        f"if os.path.exists({str(tmp_path / 'mended')!r}):\n"
        f"    os.execv({str(TIME)!r}, [{str(TIME)!r}, '--local-timezone', 'UTC'])\n"
        + ("print('this is not json-rpc', flush=True)\n" if garbage else "")
        + "time.sleep(1000)\n")
    return script, starts


def pids(starts: Path) -> list[int]:
    return [int(path.name) for path in starts.iterdir()]


@pytest.fixture
def scripted(tmp_path: Path) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"text": "Nothing to call."}] * 8))
    return f"scripted:{path}"


def events(done: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_silent_server_that_failed_is_not_waited_on_again(home, tmp_path, scripted):
    # Real processes: what a command started in the background ends with it.
    workbench = functools.partial(run_workbench, process=True)
    script, starts = server_script(tmp_path, garbage=False)
    configure(home, "quiet", script, 2000)
    first = workbench("run", "--model", scripted, "hello")
    assert first.returncode == 0, first.stderr
    assert "MCP server quiet could not start: it did not list its tools in time" in first.stderr

    # Now a start may take longer than the command is given: a run that waited for it
    # would never return. It reports the kept failure first, then the turn, then ends.
    configure(home, "quiet", script, LONG_MS)
    second = workbench("run", "--jsonl", "--model", scripted, "hello", process=True)
    assert second.returncode == 0, second.stderr
    lines = events(second)
    notice = next(i for i, e in enumerate(lines) if e["type"] == "notice"
                  and "MCP server quiet could not start" in e["message"])
    assert ("it did not list its tools in time (at its last start; starting it again in "
            "the background)") in lines[notice]["message"]
    assert lines[-1]["type"] == "turn_ended" and lines[-1]["status"] == "done"
    assert notice < len(lines) - 1
    assert all(not alive(pid) for pid in pids(starts))

    listed = workbench("mcp", "list", "--json")
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "quiet")
    assert row["state"] in ("fatal", "starting") and "did not list its tools in time" in row["reason"]

    # A call of another tool never starts it.
    before = set(pids(starts))
    called = workbench("call", "word_count", "--args", '{"text": "a b"}', "--json")
    assert called.returncode == 0 and json.loads(called.stdout)["result"]["words"] == 2
    assert set(pids(starts)) == before
    assert all(not alive(pid) for pid in pids(starts))


def test_a_garbage_server_is_reported_as_a_protocol_error_on_every_run(home, tmp_path, scripted):
    script, starts = server_script(tmp_path, garbage=True)
    configure(home, "junk", script, LONG_MS)
    for number in range(2):
        done = workbench("run", "--model", scripted, f"hello {number}")
        assert done.returncode == 0, done.stderr
        assert ("MCP server junk could not start: a protocol error: instead of answering "
                "initialize it wrote 'this is not json-rpc'") in done.stderr, done.stderr
        assert "exited with status" not in done.stderr
    assert "(at its last start; starting it again in the background)" in done.stderr
    shown = workbench("mcp", "list")
    assert "a protocol error" in shown.stdout and "exited with status" not in shown.stdout
    assert all(not alive(pid) for pid in pids(starts))


def test_a_call_of_its_own_tool_waits_for_it_and_its_listing_is_kept(home, tmp_path, scripted):
    assert TIME.exists(), f"the MCP test servers are missing ({TIME}); `make test` installs them"
    script, starts = server_script(tmp_path, garbage=True)
    configure(home, "flaky", script, LONG_MS)
    assert "a protocol error" in workbench("run", "--model", scripted, "hello").stderr
    (tmp_path / "mended").touch()

    called = workbench("call", "mcp__flaky__get_current_time", "--args", '{"timezone": "UTC"}',
                       "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["ok"] is True

    # The listing it gave is kept: the next run offers its tools without waiting on it
    # and reports no failure.
    done = workbench("run", "--model", scripted, "hello again")
    assert done.returncode == 0 and "could not start" not in done.stderr, done.stderr
    listed = workbench("mcp", "list", "--json")
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "flaky")
    assert row["reason"] == "" and "mcp__flaky__get_current_time" in {t["name"] for t in row["tools"]}
    assert all(not alive(pid) for pid in pids(starts))
