"""``workbench sessions tools|disable-extension|enable-extension``: one chat's tools."""

from __future__ import annotations

import json
import os
from pathlib import Path

from commands import workbench


def _session() -> str:
    assert workbench("run", "hello").returncode == 0
    return json.loads(workbench("sessions", "list", "--json").stdout)[0]["id"]


def _tools(session: str) -> dict:
    done = workbench("sessions", "tools", session, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_switching_the_builtin_extension_off_and_on_in_one_session() -> None:
    session = _session()
    before = _tools(session[:8])
    assert before["session"] == session and before["switched_off"] == []
    names = {t["qualified_name"] for t in before["tools"]}
    assert "builtin.read_file" in names and "workbench.extensions_status" in names

    done = workbench("sessions", "disable-extension", session[:8], "builtin")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Switched builtin off in session {session[:12]}\n"
    after = _tools(session)
    assert after["switched_off"] == ["builtin"]
    assert {t["extension"] for t in after["tools"]} == {"workbench"}
    plain = workbench("sessions", "tools", session)
    assert plain.stdout.rstrip().endswith("Switched off in this session: builtin")
    assert plain.stdout.startswith("extensions_status  workbench  ")

    other = _session()
    assert {t["qualified_name"] for t in _tools(other)["tools"]} == names

    assert workbench("sessions", "enable-extension", session, "builtin").returncode == 0
    assert {t["qualified_name"] for t in _tools(session)["tools"]} == names


def test_bad_input_says_what_and_where() -> None:
    session = _session()
    done = workbench("sessions", "disable-extension", session, "nope")
    assert done.returncode == 1
    assert done.stderr == "error: no extension named 'nope'; `workbench ext status` lists them\n"
    done = workbench("sessions", "tools", "nosuch")
    assert done.returncode == 1 and "error: no session 'nosuch'" in done.stderr
    db = Path(os.environ["WORKBENCH_HOME"]) / "workbench.db"
    assert db.exists()
    assert _tools(session)["switched_off"] == []
