"""Exactly one scheduler per home: an exclusive ``flock`` on ``<home>/scheduler.lock``.

The holder writes who it is (pid, host, since) into the file; a second supervisor
that cannot take the lock reads it to say who holds it, and stands by. The kernel
drops the lock when the holder's process ends, however it ends (``kill -9``
included), so a stale lock cannot outlive its holder.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Holder:
    """Who holds the scheduler lock."""

    pid: int
    host: str
    since: int
    """Unix milliseconds."""

    def describe(self) -> str:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since / 1000))
        return f"pid {self.pid} on {self.host} since {started}"


class SchedulerLock:
    """The lock file of one home; see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> bool:
        """Take the lock without waiting; False when another process holds it."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time_ns() // 1_000_000}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        os.fsync(fd)
        self._fd = fd
        return True

    def release(self) -> None:
        """Let the lock go (the file stays, emptied)."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def holder(self) -> Holder | None:
        """Who holds the lock now (this process included); None when nobody does."""
        if self._fd is None and not self._taken_elsewhere():
            return None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "null")
            return Holder(pid=int(data["pid"]), host=str(data["host"]), since=int(data["since"]))
        except (OSError, ValueError, TypeError, KeyError):
            return Holder(pid=0, host="unknown", since=0)

    def _taken_elsewhere(self) -> bool:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False
