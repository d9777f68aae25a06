"""A new person's first session, keyboard only, in a real pseudo-terminal at 80×24.

Install an extension from a folder on the Extensions screen, let the scripted model
call its tool, grant the permission it asks for, answer its choice form, see its
table and diff bubbles, and quit. What is asserted is what the screen shows, and
afterwards what the store kept.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pexpect
import pytest

from test_e2e_tui import Terminal

ROWS, COLUMNS = 24, 80
SURVEY = Path(__file__).resolve().parent / "fixtures" / "survey"

pytestmark = pytest.mark.e2e

DOWN, ESCAPE, CTRL_E, CTRL_Q, CTRL_S = "\x1b[B", "\x1b", "\x05", "\x11", "\x13"


def spawn(tmp_path: Path, replies: list[dict]) -> Terminal:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    script = work / "replies.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TEXTUAL", "WORKBENCH", "XDG_")) and key not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm-256color", WORKBENCH_HOME=str(tmp_path / "home"),
               SURVEY_GREETING="hello from the environment")
    child = pexpect.spawn(sys.executable, ["-m", "workbench", "--model", f"scripted:{script}"],
                          cwd=str(work), env=env, dimensions=(ROWS, COLUMNS), timeout=60)
    term = Terminal(child)
    term.screen.resize(ROWS, COLUMNS)
    return term


def test_install_grant_answer_and_see_the_bubbles(tmp_path: Path) -> None:
    term = spawn(tmp_path, [
        {"tool_calls": [{"name": "survey_colors", "arguments": {}}]},
        {"text": "Thanks, noted."},
    ])
    try:
        term.wait_for(lambda text: "Message the model" in text, "the first paint")

        # Install the extension from its folder, keyboard only.
        term.child.send(CTRL_E)
        term.wait_for(lambda text: "builtin" in text, "the Extensions screen")
        term.child.send("i")
        term.wait_for(lambda text: "Install an extension" in text, "the source prompt")
        term.child.send(str(SURVEY))
        term.child.send("\r")
        term.wait_for(lambda text: "survey_colors" in text and "SURVEY_GREETING" in text,
                      "the review naming the tool and its permission")
        term.child.send("a")
        term.wait_for(lambda text: "Installed survey" in text, "the install")
        term.child.send(ESCAPE)
        term.wait_for(lambda text: "Message the model" in text, "the chat again")

        # The model calls the tool; it asks for the environment variable first.
        term.child.send("run the survey")
        term.child.send("\r")
        term.wait_for(lambda text: "SURVEY_GREETING" in text and "Deny" in text,
                      "the permission prompt")
        term.child.send("s")  # this session

        # Its choice form: once the first option shows the focus, move to Blue, pick it, send
        # (each key after the screen shows what the last one did, as a person would).
        term.wait_for(lambda text: "Which color do you prefer?" in text, "the choice form")
        term.wait_for(lambda _text: term.look("Red")[2:] != term.look("Blue")[2:],
                      "the focus on the first option")
        blue = term.look("Blue")
        term.child.send(DOWN)
        blue = term.wait_for_change("Blue", blue, "the focus on Blue")
        term.child.send(" ")
        term.wait_for_change("Blue", blue, "Blue picked")
        term.child.send(CTRL_S)

        # The bubbles and the model's last reply.
        term.wait_for(lambda text: "Thanks, noted." in text, "the reply after the tool")
        term.wait_for(lambda text: "favorite: blue" in text or "votes" in text,
                      "a bubble on screen")
        term.child.send(CTRL_Q)
        term.child.expect(pexpect.EOF, timeout=60)
    finally:
        term.child.close(force=True)
    assert term.child.exitstatus == 0, term.text

    with sqlite3.connect(tmp_path / "home" / "workbench.db") as db:
        (status, result), = db.execute(
            "SELECT status, result FROM tool_calls WHERE tool LIKE '%survey_colors'").fetchall()
    assert status == "ok"
    assert json.loads(result) == {"greeting": "hello from the environment", "color": "blue"}
