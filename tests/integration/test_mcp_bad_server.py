"""One MCP server that prints garbage and hangs does not stall the rest: a call of
another tool never starts it, and its own tools name the protocol error. The real
``workbench`` command with a real misbehaving server process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from processes import alive
from commands import workbench

from workbench.errors import ExitCode


@pytest.fixture
def junk(tmp_path: Path, home) -> Path:
    """A server ``junk`` that notes each start, writes a line that is not JSON-RPC on
    stdout and then hangs; returns the folder its starts are noted in."""
    starts = tmp_path / "starts"
    starts.mkdir()
    script = tmp_path / "junk.py"
    script.write_text(
        "import os, sys, time\n"
        f"open(os.path.join({str(starts)!r}, str(os.getpid())), 'w').close()\n"
        "print('this is not json-rpc', flush=True)\n"
        "time.sleep(1000)\n")
    home.config_file.write_text(
        f'[mcp.servers.junk]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(script))}]\n'
        "sandbox = false\n")
    return starts


def started(starts: Path) -> list[int]:
    return [int(path.name) for path in starts.iterdir()]


def test_a_call_of_another_tool_never_starts_the_server(junk):
    done = workbench("call", "word_count", "--args", '{"text": "a b"}', "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["words"] == 2
    assert started(junk) == []


def test_the_servers_own_tool_names_the_protocol_error(junk):
    done = workbench("call", "mcp__junk__anything")
    assert done.returncode == ExitCode.USAGE
    assert ("the MCP server junk could not start: a protocol error: instead of answering "
            "initialize it wrote 'this is not json-rpc', which is not a JSON-RPC message") in done.stderr
    assert "exited with status" not in done.stderr
    pids = started(junk)
    assert len(pids) == 1 and not alive(pids[0])


def test_a_run_goes_on_and_says_why_the_server_is_missing(junk):
    done = workbench("run", "--model", "echo", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "You said: hello\n"
    assert "MCP server junk could not start: a protocol error" in done.stderr
    assert all(not alive(pid) for pid in started(junk))


def test_a_silent_server_is_given_up_on_at_its_start_time_and_killed(tmp_path, home):
    starts = tmp_path / "starts"
    starts.mkdir()
    script = tmp_path / "silent.py"
    script.write_text("import os, time\n"
                      f"open(os.path.join({str(starts)!r}, str(os.getpid())), 'w').close()\n"
                      "time.sleep(1000)\n")
    home.config_file.write_text(
        "[mcp]\nstartup_timeout_ms = 2000\n\n"
        f'[mcp.servers.quiet]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(script))}]\n'
        "sandbox = false\n")
    done = workbench("run", "--model", "echo", "hello")
    assert done.returncode == 0, done.stderr
    assert "MCP server quiet could not start: it did not list its tools in time" in done.stderr
    pids = started(starts)
    assert len(pids) == 1 and not alive(pids[0])
