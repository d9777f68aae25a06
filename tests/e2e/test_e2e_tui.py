"""The real ``workbench`` TUI in a real pseudo-terminal: start, chat, quit.

The program's output is fed into a ``pyte`` screen, and the assertions read the
visible lines, as a person would.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte
import pytest

ROWS, COLUMNS = 30, 100
LEAVE_SCREEN = "\x1b[?1049l"
"""What a program writes as it leaves the alternate screen (Textual's, as it exits)."""
CONTROL = re.compile(r"\x1b\[[0-9;?<>=]*[A-Za-z]")
"""A control sequence (terminal modes Textual sets back as it exits)."""

pytestmark = pytest.mark.e2e


class Terminal:
    """A child process in a pty, with a ``pyte`` screen that follows its output."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)

    def pump(self) -> None:
        """Feed whatever output is waiting into the screen."""
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                return
            except pexpect.EOF:
                return
            self.stream.feed(data)

    @property
    def text(self) -> str:
        return "\n".join(self.screen.display)

    def look(self, words: str) -> tuple:
        """How the first line showing ``words`` is drawn: each cell's character, colours
        and attributes (focus and a picked option show only in those)."""
        for row, line in enumerate(self.screen.display):
            if words in line:
                cells = self.screen.buffer[row]
                return tuple((cells[x].data, cells[x].fg, cells[x].bg, cells[x].reverse, cells[x].bold)
                             for x in range(self.screen.columns))
        return ()

    def wait_for_change(self, words: str, before: tuple, what: str, timeout: float = 60.0) -> tuple:
        """Read output until the line showing ``words`` is drawn otherwise than ``before``."""
        self.wait_for(lambda _text: self.look(words) not in ((), before), what, timeout)
        return self.look(words)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 60.0) -> None:
        """Read output until ``predicate(visible text)`` holds."""
        deadline = time.monotonic() + timeout
        while True:
            self.pump()
            if predicate(self.text):
                return
            if time.monotonic() > deadline or not self.child.isalive():
                raise AssertionError(f"never saw {what}; the screen shows:\n{self.text}")


def spawn_workbench(tmp_path: Path, model: str) -> Terminal:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("TEXTUAL", "WORKBENCH", "XDG_")) and key not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm-256color", WORKBENCH_HOME=str(tmp_path / "home"))
    child = pexpect.spawn(sys.executable, ["-m", "workbench", "--model", model],
                          cwd=str(tmp_path / "work"), env=env, dimensions=(ROWS, COLUMNS),
                          timeout=60)
    return Terminal(child)


def test_chat_reply_and_quit(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    replies = work / "replies.json"
    replies.write_text(json.dumps([{"text": "Hello from the scripted model."}]), encoding="utf-8")
    term = spawn_workbench(tmp_path, f"scripted:{replies}")
    try:
        term.wait_for(lambda text: "Message the model" in text and "workbench" in text,
                      "the first paint")
        # The prompt box comes first; the header names the model once the host is open.
        term.wait_for(lambda text: "scripted:" in text.splitlines()[0], "the model in the header")

        term.child.send("hi there")
        term.wait_for(lambda text: "hi there" in text, "the typed prompt")
        term.child.send("\r")
        term.wait_for(lambda text: "Hello from the scripted model." in text, "the reply")
        lines = term.screen.display
        prompt_row = next(i for i, line in enumerate(lines) if "hi there" in line)
        reply_row = next(i for i, line in enumerate(lines) if "Hello from the scripted model." in line)
        assert prompt_row < reply_row
        term.wait_for(lambda text: "session " in text.splitlines()[0], "the session id in the header")

        term.child.send("\x11")  # ctrl+q
        term.child.expect(pexpect.EOF, timeout=60)
    finally:
        term.child.close(force=True)
    assert term.child.exitstatus == 0, term.text


@pytest.mark.parametrize(("config", "model", "expected"), [
    ("theme = [\n", "echo", "config.toml"),
    ("", "scripted:missing.json", "missing.json"),
])
def test_setup_errors_are_reported_once_the_screen_has_closed(
        tmp_path: Path, config: str, model: str, expected: str) -> None:
    """The prompt box is drawn before the config and the model are read: a broken one
    closes the screen, and the error is the first thing on the terminal after it."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(config, encoding="utf-8")
    (tmp_path / "work").mkdir(exist_ok=True)
    term = spawn_workbench(tmp_path, model)
    try:
        term.child.expect(pexpect.EOF, timeout=60)
    finally:
        term.child.close(force=True)
    output = term.child.before.decode(errors="replace")
    assert LEAVE_SCREEN in output, output
    output = CONTROL.sub("", output.rpartition(LEAVE_SCREEN)[2])
    assert output.lstrip().startswith("error: "), output
    assert expected in output
    assert term.child.exitstatus == 1


def test_model_switched_in_the_chat(tmp_path: Path) -> None:
    """Started on echo, the header says so; ``/model`` completed with Tab switches the
    chat to a scripted model at once, and the next reply is that model's."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "replies.json").write_text(json.dumps([{"text": "A real reply, replayed."}]),
                                       encoding="utf-8")
    term = spawn_workbench(tmp_path, "echo")
    try:
        term.wait_for(lambda text: "not a model" in text.splitlines()[0], "the echo header")
        term.child.send("/model repl")
        term.wait_for(lambda text: "scripted:replies.json" in text, "the model offered")
        term.child.send("\t")
        term.wait_for(lambda text: "/model scripted:replies.json" in text, "the completed name")
        term.child.send("\r")
        term.wait_for(lambda text: "now talks to scripted:replies.json" in text, "the switch said")
        term.wait_for(lambda text: "not a model" not in text.splitlines()[0]
                      and "scripted:replies.json" in text.splitlines()[0], "the new header")
        term.child.send("hello\r")
        term.wait_for(lambda text: "A real reply, replayed." in text, "the new model's reply")
        term.child.send("\x11")  # ctrl+q
        term.child.expect(pexpect.EOF, timeout=60)
    finally:
        term.child.close(force=True)
    assert term.child.exitstatus == 0, term.text
