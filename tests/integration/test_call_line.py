"""``workbench call`` read without typer (``workbench/cli/calling.py``): a plainly
well-formed line is read by hand, any other is left to typer; both answer alike, and
the call keeps every promise on that path (a standing grant revoked is refused; the
hooks, the manifest checks and the closed-output and ctrl+c cases have their own tests,
which run ``workbench call`` this same way).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commands import COMMAND, workbench

from workbench.cli.calling import CallLine, parse
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import PermissionAnswer, PermissionRequest, RequestDenied

TYPER = (sys.executable, "-c", "import sys\nfrom workbench.cli.app import main\nmain(sys.argv[1:])")
"""The same command line read by typer (the root app's own ``main``, with no quick path)."""


@pytest.mark.parametrize(("argv", "line"), [
    (["call", "word_count"], CallLine("word_count")),
    (["call", "-a", "{}", "x", "--json"], CallLine("x", as_json=True)),
    (["call", "--args={\"a\": 1}", "ext.tool", "--jsonl", "--json"],
     CallLine("ext.tool", args='{"a": 1}', as_json=True, jsonl=True)),
    (["call", "t", "-g", "read", "--grant", "env:A=B", "--grant=net:x", "--grant-all"],
     CallLine("t", grant=("read", "env:A=B", "net:x"), grant_all=True)),
    (["call", "t", "--answers", "a.json"], CallLine("t", answers=Path("a.json"))),
])
def test_a_plainly_well_formed_call_line_is_read_without_typer(argv, line):
    assert parse(argv) == line


@pytest.mark.parametrize("argv", [
    [], ["run", "x"], ["--model", "echo", "call", "t"], ["call"], ["call", "--help"], ["call", "t", "-h"],
    ["call", "a", "b"], ["call", ""], ["call", "t", "--"], ["call", "t", "--args"],
    ["call", "t", "--args", "--json"], ["call", "t", "--args", "{}", "--args", "{}"],
    ["call", "t", "-a{}"], ["call", "t", "--json=1"], ["call", "t", "--nosuch"], ["call", "t", "--answers="],
    ["call", "-", "x"],
])
def test_any_other_line_is_left_to_typer(argv):
    assert parse(argv) is None


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# app\nhello\n")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["word_count", "--args", '{"text": "one two"}'],
    ["word_count", "-a", '{"text": ', "--json"],
    ["nosuch", "--jsonl"],
    ["read_file", "--args", '{"path": "README.md"}'],
    ["read_file", "--args={\"path\": \"README.md\"}", "--grant", "read", "--json"],
])
def test_typer_and_the_quick_path_answer_alike(home, project, args):
    """The same output, errors and exit code, read by hand or by typer (real processes)."""
    def run(command):
        return subprocess.run([*command, "call", *args], capture_output=True, text=True, cwd=project,
                              env=dict(os.environ), timeout=120)

    quick, typer = run(COMMAND), run(TYPER)
    assert (quick.returncode, quick.stderr) == (typer.returncode, typer.stderr)
    assert "Traceback" not in quick.stdout + quick.stderr
    if "--jsonl" in args:  # the same lines, but for what is new at each run (a time, a call's id)
        lines = [[_steady(json.loads(line)) for line in done.stdout.splitlines()] for done in (quick, typer)]
        assert lines[0] == lines[1] and lines[0][-1]["type"] == "outcome"
    else:
        assert quick.stdout == typer.stdout


def _steady(value):
    """``value`` without what differs at every run: times (``…_at``) and ids (``call_id``)."""
    if isinstance(value, dict):
        return {key: _steady(item) for key, item in value.items()
                if not key.endswith("_at") and key != "call_id"}
    if isinstance(value, list):
        return [_steady(item) for item in value]
    return value


class Always:
    """Answers each permission request with a lasting grant."""

    async def answer(self, request):
        if isinstance(request, PermissionRequest):
            return PermissionAnswer("always")
        raise RequestDenied("not asked here")


def test_a_standing_grant_revoked_is_refused_on_the_quick_path(home, project):
    args = ("read_file", "--args", json.dumps({"path": "README.md"}), "--json")
    refused = workbench("call", *args, cwd=project)
    assert refused.returncode == 3 and json.loads(refused.stdout)["error"]["kind"] == "permission"
    with Host.open(cwd=project, responder=Always()) as host:
        outcome = asyncio.run(host.tools.call("read_file", {"path": "README.md"}, CallOptions()))
        assert outcome.ok, outcome.error
    granted = workbench("call", *args, cwd=project)
    assert granted.returncode == 0, granted.stderr
    assert "hello" in json.dumps(json.loads(granted.stdout)["result"])
    assert workbench("grants", "revoke", "read_file").returncode == 0
    again = workbench("call", *args, cwd=project)
    assert again.returncode == 3, again.stdout
    assert json.loads(again.stdout)["error"]["kind"] == "permission"
