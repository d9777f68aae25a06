"""Optional permissions as a script meets them: an extension installed with ``ext
install``, called by ``workbench run`` under each approvals policy and by ``workbench
call`` with grant flags, and explained by ``grants explain`` — real processes, real
sandboxed workers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from commands import workbench as run_workbench

CODE = '''
import os

def peek(args, ctx):
    try:
        with open(args["path"]) as handle:
            text = handle.read()
    except OSError as exc:
        text = "refused: " + str(exc.strerror)
    return {"text": text, "token": os.environ.get("WORKBENCH_TEST_TOKEN")}

def token(args, ctx):
    return {"token": os.environ.get("WORKBENCH_TEST_TOKEN")}
'''

TOKEN = {"key": "WORKBENCH_TEST_TOKEN", "reason": "Sign in when you have a token.", "optional": True}


def workbench(*args: str) -> subprocess.CompletedProcess:
    return run_workbench(*args, env={"WORKBENCH_TEST_TOKEN": "s3cret"})


def lines(done: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """An extension ``peek`` (a folder required, a token optional) and ``token`` (a
    token optional only), installed; returns the file ``peek`` may read."""
    folder = tmp_path / "peek-src"
    folder.mkdir()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("the docs")
    (folder / "main.py").write_text(CODE)
    (folder / "package.json").write_text(json.dumps({"name": "peek", "version": "1.0.0"}))
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    (folder / "loca.json").write_text(json.dumps({
        "name": "peek", "displayName": "Peek", "description": "Peek.", "entry": "main.py",
        "tools": [{"name": "peek", "description": "Peek at a file.", "function": "peek", "parameters": schema,
                   "permissions": {"read": [{"path": str(docs), "reason": "Read the docs."}], "env": [TOKEN]}},
                  {"name": "token", "description": "Show the token.", "function": "token",
                   "parameters": {"type": "object"}, "permissions": {"env": [TOKEN]}}]}))
    installed = workbench("ext", "install", str(folder), "--yes")
    assert installed.returncode == 0, installed.stderr
    return docs / "a.txt"


def script(tmp_path: Path, name: str, arguments: dict) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"tool_calls": [{"name": name, "arguments": arguments}]}, {"text": "done"}]))
    return f"scripted:{path}"


def ended(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr
    return [e for e in lines(done) if e["type"] == "tool_call_ended"][0]


def test_approvals_deny_runs_a_tool_without_its_optional_entries(docs, tmp_path):
    done = workbench("run", "--model", script(tmp_path, "token", {}), "--jsonl", "go")
    call = ended(done)
    assert call["ok"] and call["result"] == {"token": None}
    [request] = [e for e in lines(done) if e["type"] == "request"]
    assert request["answer"] == "once" and request["declined"] == ["env:WORKBENCH_TEST_TOKEN"]
    # With a required entry missing, deny still refuses the call.
    refused = ended(workbench("run", "--model", script(tmp_path, "peek", {"path": str(docs)}), "--jsonl", "go"))
    assert not refused["ok"] and refused["error"]["kind"] == "permission"


def test_a_delegate_sees_the_optional_flag_and_declines_one(docs, tmp_path):
    seen = tmp_path / "seen.json"
    approve = tmp_path / "approve.py"
    approve.write_text(textwrap.dedent(f"""
        import json, sys
        request = json.load(sys.stdin)
        open({str(seen)!r}, "w").write(json.dumps(request))
        declined = [p["key"] for p in request["permissions"] if p["optional"]]
        print(json.dumps({{"decision": "once", "declined": declined}}))
    """))
    done = workbench("run", "--model", script(tmp_path, "peek", {"path": str(docs)}), "--jsonl",
                     "--approvals", f"delegate:{sys.executable} {approve}", "go")
    call = ended(done)
    assert call["ok"] and call["result"] == {"text": "the docs", "token": None}
    asked = json.loads(seen.read_text())["permissions"]
    assert [(p["kind"], p["optional"], p["key"]) for p in asked] == [
        ("read", False, f"read:{docs.parent}"), ("env", True, "env:WORKBENCH_TEST_TOKEN")]


def test_call_grant_flags_grant_optional_entries(docs):
    assert json.loads(workbench("call", "token", "--json").stdout) == {"ok": True, "result": {"token": None}}
    granted = workbench("call", "token", "--grant", "env:WORKBENCH_TEST_TOKEN", "--json")
    assert json.loads(granted.stdout)["result"] == {"token": "s3cret"}
    every = workbench("call", "peek", "--args", json.dumps({"path": str(docs)}), "--grant-all", "--json")
    assert json.loads(every.stdout)["result"] == {"text": "the docs", "token": "s3cret"}


def test_grants_explain_shows_optional_entries_and_their_state(docs, tmp_path):
    before = workbench("grants", "explain", "peek")
    assert "not granted  read" in before.stdout
    assert "undecided    env WORKBENCH_TEST_TOKEN (optional)" in before.stdout
    approve = tmp_path / "approve.py"
    approve.write_text('import json, sys\njson.load(sys.stdin)\n'
                       'print(json.dumps({"decision": "always", "declined": ["env:WORKBENCH_TEST_TOKEN"]}))\n')
    ended(workbench("run", "--model", script(tmp_path, "peek", {"path": str(docs)}), "--jsonl",
                    "--approvals", f"delegate:{sys.executable} {approve}", "go"))
    rows = {row["kind"]: row for row in json.loads(workbench("grants", "explain", "peek", "--json").stdout)}
    assert (rows["read"]["state"], rows["env"]["state"], rows["env"]["optional"]) == ("granted", "denied", True)
    # Declined always: a later run is not asked and the tool still runs without it.
    call = ended(workbench("run", "--model", script(tmp_path, "peek", {"path": str(docs)}), "--jsonl", "go"))
    assert call["result"] == {"text": "the docs", "token": None}
    assert workbench("grants", "revoke", "peek", "env").returncode == 0
    assert "undecided    env" in workbench("grants", "explain", "peek").stdout
