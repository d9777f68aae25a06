"""A Loca-format TypeScript extension and a Python one, installed and called as a user
would: ``ext install``, then ``workbench call`` with a form, progress, a private
database and a table bubble; then removed without a trace."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from commands import workbench

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extensions"


def lines(done: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("fixture, name", [("notes-ts", "loca-extension-notes"), ("notes-py", "notes-py")])
def test_install_call_with_form_db_and_table_then_remove(fixture, name, tmp_path):
    installed = workbench("ext", "install", str(FIXTURES / fixture), "--yes")
    assert installed.returncode == 0, installed.stderr
    answers = tmp_path / "answers.json"
    for body, tag in (("buy milk", "work"), ("call mum", "home")):
        answers.write_text(json.dumps([[tag]]))
        done = workbench("call", f"{name}.add_note", "--args", json.dumps({"text": body}),
                         "--answers", str(answers), "--jsonl")
        assert done.returncode == 0, done.stderr
        events = lines(done)
        assert [e["progress"] for e in events if e["type"] == "tool_call_progress"] == [0.2, 1.0]
        form = [e for e in events if e["type"] == "request"][0]
        assert form["request"]["questions"][0]["question"] == "Which tag?" and form["answer"] == [tag]
        assert events[-1]["ok"] and events[-1]["result"]["tag"] == tag

    listed = lines(workbench("call", f"{name}.list_notes", "--jsonl"))
    table = [e for e in listed if e["type"] == "display"][0]
    assert table["display"] == "table"
    assert table["payload"] == {"columns": ["id", "note", "tag"],
                                "rows": [["1", "buy milk", "work"], ["2", "call mum", "home"]]}
    assert listed[-1] == {"type": "outcome", "ok": True, "result": {"count": 2}}

    unanswered = workbench("call", f"{name}.add_note", "--args", '{"text": "x"}', "--json")
    outcome = json.loads(unanswered.stdout)
    assert not outcome["ok"] and outcome["error"]["kind"] == "cancelled"
    assert "no answers left" in outcome["error"]["message"]

    removed = workbench("ext", "remove", name, "--yes")
    assert removed.returncode == 0, removed.stderr
    home = Path(os.environ["WORKBENCH_HOME"])
    assert not (home / "extensions" / name).exists()
    assert not list((home / "databases").glob(f"{name}*"))
    gone = workbench("call", f"{name}.list_notes", "--json")
    assert gone.returncode == 2 and json.loads(gone.stdout)["error"]["kind"] == "not_found"
