"""A process and everything it started: found through ``/proc``, killed together.

Sandboxed workers leave their parent's process group and session (each has its
own), so killing a group is not enough: the tree is walked by parent pid, frozen
with SIGSTOP from the top (a stopped process cannot start another), then killed
with SIGKILL, until nothing of it is left.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _parents() -> dict[int, int]:
    """Every visible process's parent pid."""
    found: dict[int, int] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = (PROC / entry.name / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields start after the last ")".
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[0] != "Z":
            found[int(entry.name)] = int(fields[1])
    return found


def descendants(pid: int) -> list[int]:
    """The living processes ``pid`` started, and theirs, parents before children."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    order, queue = [], list(children.get(pid, ()))
    while queue:
        current = queue.pop(0)
        order.append(current)
        queue.extend(children.get(current, ()))
    return order


def alive(pid: int) -> bool:
    """Whether ``pid`` is a living (not zombie) process."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[:1] != ["Z"]


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_tree(pid: int, *, rounds: int = 50) -> list[int]:
    """Kill ``pid`` and every process under it; returns the pids that were signalled.

    Nothing is killed until the whole tree is stopped, so no member is orphaned (and
    lost from the walk) while another is still starting processes. The process
    group ``pid`` leads is killed too.
    """
    tree: list[int] = []
    for _ in range(rounds):
        current = [p for p in [pid, *descendants(pid)] if alive(p)]
        new = [p for p in current if p not in tree]
        if not new:
            break
        for member in new:
            _signal(member, signal.SIGSTOP)
        tree.extend(new)
    for member in tree:
        _signal(member, signal.SIGKILL)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    return tree
