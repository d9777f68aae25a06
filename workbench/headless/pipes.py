"""Output whose reader went away: ``workbench run … | head -1``.

When the reader of a pipe closes it, the next write fails with ``EPIPE`` (Python
ignores SIGPIPE, so it is a ``BrokenPipeError`` rather than the signal). A command then
ends the way well-behaved tools do: it stops writing, says nothing, and exits with
``ExitCode.OUTPUT_CLOSED`` (141, what a shell reports for a process SIGPIPE ended). The
work under way is stopped as ctrl+c would stop it, so its records are settled (a turn
``cancelled``, its running tool call ``cancelled``), never left half-written.

``drop_closed`` points each standard stream whose reader is gone at ``/dev/null``, so
what is still buffered in it (and the interpreter's flush at exit) goes nowhere
instead of raising again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys

from workbench.errors import ExitCode


def is_closed_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` says the reader of the stream written to is gone."""
    return isinstance(exc, BrokenPipeError) or (isinstance(exc, OSError) and exc.errno == errno.EPIPE)


def _reader_gone(fd: int) -> bool:
    poll = select.poll()
    poll.register(fd, 0)  # POLLERR and POLLHUP are reported whatever is asked
    with contextlib.suppress(OSError):
        return any(flags & (select.POLLERR | select.POLLHUP | select.POLLNVAL)
                   for _, flags in poll.poll(0))
    return False


def drop_closed() -> None:
    """Point stdout and stderr, each whose reader is gone, at ``/dev/null``."""
    for stream in (sys.__stdout__, sys.__stderr__):
        if stream is None:
            continue
        try:
            fd = stream.fileno()
        except (OSError, ValueError):
            continue
        if _reader_gone(fd):
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, fd)
            finally:
                os.close(null)


class OutputClosed(SystemExit):
    """Ends a command whose output's reader is gone: quietly, with exit code 141."""

    def __init__(self) -> None:
        super().__init__(int(ExitCode.OUTPUT_CLOSED))


def output_closed() -> OutputClosed:
    """Drop the closed streams and return the exit to raise."""
    drop_closed()
    return OutputClosed()
