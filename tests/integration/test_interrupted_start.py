"""ctrl+c at any moment of a command's start: exit code 4 (cancelled), never a traceback,
and ``workbench call`` prints its ``cancelled`` answer, as for a later ctrl+c.

A real process gets SIGINT as soon as it shows it has reached a moment of its start:
a module the command imports is loaded (pydantic's core, while the CLI's modules are
still being imported), then the store's (SQLite, as the home is opened). What a
process has loaded is read from ``/proc/PID/maps``. The signal may still land after
the command did its work (on a loaded machine it runs on between the look and the
signal): then it ends as usual, exit 0 and its output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from commands import COMMAND

from workbench.errors import ExitCode

MOMENTS = ("_pydantic_core", "_sqlite3")
"""Shared objects loaded in this order as a command starts."""

CANCELLED = {"ok": False, "error": {"kind": "cancelled", "message": "the call was cancelled (SIGINT)"}}


def loaded(pid: int, name: str, command: list[str]) -> bool:
    """Whether the command's own interpreter, ``command``, has loaded ``name``.

    Until it runs ``exec``, the child of ``Popen`` is a copy of this test's process and
    shows this process's maps (pydantic's core and SQLite's included): its command line
    is read first, and an ``exec`` is never undone, so the maps read after it are the
    command's."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            if handle.read().split(b"\0")[:-1] != [os.fsencode(word) for word in command]:
                return False
        with open(f"/proc/{pid}/maps") as handle:
            return name in handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return False


def interrupted_at(moment: str, *args: str, ignore_sigint: bool = False) -> tuple[subprocess.CompletedProcess, bool]:
    """Run ``workbench ARGS``, SIGINT it once ``moment`` is loaded; the outcome, and
    whether the signal was sent while it ran."""
    command = [*COMMAND, *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True, env=dict(os.environ),
                               preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
                               if ignore_sigint else None)
    sent = False
    try:
        deadline = time.monotonic() + 60
        while process.poll() is None and not loaded(process.pid, moment, command):
            assert time.monotonic() < deadline, f"{moment} was never loaded"
            time.sleep(0.002)  # a poll interval, not a wait for anything in particular
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            sent = True
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), sent


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("form", ["--json", "--jsonl", "plain"])
def test_ctrl_c_as_call_starts_answers_cancelled_and_exits_4(home, moment, form):
    flags = [] if form == "plain" else [form]
    done, sent = interrupted_at(moment, "call", "word_count", "--args", '{"text": "a b"}', *flags)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert sent, "the command ended before it was interrupted"
    if done.returncode == 0:  # the signal came after the call was done
        return
    assert done.returncode == ExitCode.CANCELLED, (done.returncode, done.stderr)
    if form == "--json":
        assert json.loads(done.stdout) == CANCELLED
    elif form == "--jsonl":
        assert json.loads(done.stdout.splitlines()[-1]) == {"type": "outcome", **CANCELLED}
    else:
        assert done.stderr.endswith("error (cancelled): the call was cancelled (SIGINT)\n"), done.stderr


@pytest.mark.parametrize("moment", MOMENTS)
def test_ctrl_c_as_a_call_started_with_sigint_ignored_starts_still_cancels_it(home, moment):
    done, sent = interrupted_at(moment, "call", "word_count", "--args", '{"text": "a"}', "--json",
                                ignore_sigint=True)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert sent and done.returncode in (0, ExitCode.CANCELLED), (done.returncode, done.stderr)
    if done.returncode:
        assert json.loads(done.stdout) == CANCELLED


@pytest.mark.parametrize("moment", MOMENTS)
def test_ctrl_c_as_another_command_starts_exits_4_quietly(home, moment):
    done, sent = interrupted_at(moment, "ext", "list", "--json")
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert sent and done.returncode in (0, ExitCode.CANCELLED), (done.returncode, done.stderr)
    if done.returncode:
        assert (done.stdout, done.stderr) == ("", "")


def test_ctrl_c_inside_an_evaluated_string_still_exits_4(home, tmp_path):
    # typer evaluates each command's annotations from strings, dataclasses exec their
    # methods: a ctrl+c landing there made `python -m workbench` end by SIGINT (-2,
    # nothing said) although it was caught and exit code 4 was asked for.
    (tmp_path / "interrupted_in_eval.py").write_text(
        "import sys, workbench.cli\n"
        "workbench.cli.main = lambda: eval('__import__(\"signal\").raise_signal(2)')\n"
        "sys.argv = ['workbench', 'ext', 'list']\n"
        "from workbench.__main__ import main\n"
        "main()\n")
    done = subprocess.run([COMMAND[0], "-m", "interrupted_in_eval"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (ExitCode.CANCELLED, "", "")


def test_ctrl_c_a_finalizer_swallowed_is_delivered_again_and_exits_4(home, tmp_path):
    # A ctrl+c that lands in a finalizer (or a callback) is one Python can only ignore;
    # the workbench delivers it again once Python's report hook has returned. Delivered
    # from inside the hook, it was itself reported ("Exception ignored in
    # sys.unraisablehook", a traceback) and the command went on as if never interrupted.
    (tmp_path / "interrupted_in_finalizer.py").write_text(
        "import sys, workbench.cli\n"
        "class Finalized:\n"
        "    def __del__(self):\n"
        "        raise KeyboardInterrupt\n"
        "def run():\n"
        "    Finalized()\n"
        "    while True:\n"
        "        pass\n"
        "workbench.cli.main = run\n"
        "sys.argv = ['workbench', 'ext', 'list']\n"
        "from workbench.__main__ import main\n"
        "main()\n")
    done = subprocess.run([COMMAND[0], "-m", "interrupted_in_finalizer"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (ExitCode.CANCELLED, "", "")
