"""The tests' way to run the command (``tests/commands.py``) sees what a real process
shows: the same exit code, stdout and stderr, and the test's process as it was."""

from __future__ import annotations

import logging
import os
import signal

import pytest

from commands import workbench

COMMANDS = [
    ("--version",),
    ("nope",),
    ("config", "get", "model"),
    ("call", "word_count", "--args", '{"text": "a b"}', "--json"),
    ("call", "word_count", "--args", '{"text": '),
    ("sessions", "show", "nope"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_in_this_process_as_in_a_real_one(home, args):
    here = workbench(*args)
    there = workbench(*args, process=True)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr)


def test_the_process_is_left_as_it_was(home, tmp_path):
    environment, folder = dict(os.environ), os.getcwd()
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    last_resort, root_handlers = logging.lastResort, list(logging.getLogger().handlers)
    done = workbench("call", "word_count", "--args", '{"text": "a"}', cwd=tmp_path,
                     env={"WORKBENCH_SOMETHING": "1"})
    assert done.returncode == 0, done.stderr
    assert (dict(os.environ), os.getcwd()) == (environment, folder)
    assert {signum: signal.getsignal(signum) for signum in handlers} == handlers
    assert (logging.lastResort, logging.getLogger().handlers) == (last_resort, root_handlers)
