"""Which process owns a record, and whether that process still runs.

A record that only its writer can finish — a tool call in progress, a turn holding its
session, a scheduled run — carries its owner: the process id and the process's start
(its start time in clock ticks after boot, from ``/proc/PID/stat``, the boot's id and
the pid namespace the pid is counted in). A pid alone is reused; a pid with its start
names one process for ever, so "the owner is gone" is a fact any process can check,
not a guess: no process with that pid, a zombie, a process with that pid that started
at another time, or a record of an earlier boot. A process in another pid namespace
(another container on this machine) cannot see the owner: to it, the owner is alive.

This module must not import anything above the store.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

PROC = "/proc"


@dataclass(frozen=True)
class Owner:
    """One process, named so that its pid's reuse is not taken for it.

    Attributes:
        pid: The process id.
        start: ``TICKS@BOOT@PIDNS``: the process's start time after boot, the boot id,
            and the pid namespace its pid is counted in.
    """

    pid: int
    start: str

    def alive(self) -> bool:
        """Whether this very process still runs (not a zombie, not a reused pid)."""
        return owner_alive(self.pid, self.start)


@cache
def _boot_id() -> str:
    try:
        with open(f"{PROC}/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


@cache
def _pid_namespace() -> str:
    try:
        return os.readlink(f"{PROC}/self/ns/pid").removeprefix("pid:").strip("[]")
    except OSError:
        return ""


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (the state first)."""
    try:
        with open(f"{PROC}/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: the fields start after the last ")".
    return text[text.rfind(")") + 2:].split()


def process_start(pid: int) -> str | None:
    """The start of the running process ``pid`` as ``TICKS@BOOT@PIDNS``; None when no
    process has that pid (in this process's pid namespace) or it is a zombie."""
    fields = _stat(pid)
    if not fields or len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return f"{fields[19]}@{_boot_id()}@{_pid_namespace()}"


_ME: dict[int, Owner] = {}


def this_process() -> Owner:
    """This process as an owner (looked up once per process; a forked child is another)."""
    pid = os.getpid()
    found = _ME.get(pid)
    if found is None:
        found = _ME[pid] = Owner(pid, process_start(pid) or "")
    return found


def owner_alive(pid: int | None, start: str | None) -> bool:
    """Whether the process ``pid`` that started at ``start`` still runs.

    An owner never recorded (``pid`` None, rows from before owners were kept) is gone;
    one recorded in an earlier boot is gone; one whose pid is counted in another pid
    namespace cannot be seen from here, and is taken to be alive.
    """
    if not pid:
        return False
    if start:
        _, boot, namespace = (start.split("@") + ["", ""])[:3]
        if boot and boot != _boot_id():
            return False
        if namespace and namespace != _pid_namespace():
            return True
    found = process_start(int(pid))
    if found is None:
        return False
    return not start or found == start
