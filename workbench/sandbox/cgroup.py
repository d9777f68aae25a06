"""Bounds on a worker's processes and memory, all its processes together.

Memory: ``RLIMIT_AS`` is per process, so four children of a tool granted ``run``
could each hold the whole limit. A worker that may start processes (a ``run``
grant) is put, before it runs anything, in a memory cgroup of its own whose limit is
the worker's memory limit,
swap included; the kernel's OOM killer acts inside that group alone, and the
supervisor reports it. cgroup v1 (``/sys/fs/cgroup/memory``) and v2 (a ``memory``
controller the host may delegate) are used when writable; where neither is,
``doctor`` says so and only the per-process limit applies.

Processes:
``RLIMIT_NPROC`` counts every process of the user, and root is exempt from it, so a
worker of a root host needs the pids controller: a cgroup per worker with
``pids.max``. The supervisor child joins it before forking the worker, so the tool
and everything it starts count against the same limit. Both cgroup v2 (a ``pids``
controller in ``cgroup.controllers``) and v1 (``/sys/fs/cgroup/pids``) are used
when writable; where neither is, ``doctor`` says so and only the rlimit applies.
"""

from __future__ import annotations

import os
from pathlib import Path

V1_ROOT = Path("/sys/fs/cgroup/pids")
V2_ROOTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def _own_v2_cgroup(root: Path) -> Path | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return root / line[3:].lstrip("/")
    except OSError:
        return None
    return None


def pids_root() -> Path | None:
    """A writable folder under which per-worker pids cgroups can be made, or None."""
    if (V1_ROOT / "cgroup.procs").exists() and os.access(V1_ROOT, os.W_OK):
        return V1_ROOT / "workbench"
    for root in V2_ROOTS:
        controllers = root / "cgroup.controllers"
        if controllers.exists() and "pids" in controllers.read_text().split():
            base = _own_v2_cgroup(root)
            if base is not None and os.access(base, os.W_OK):
                return base / "workbench"
    return None


def limit_processes(name: str, maximum: int) -> Path | None:
    """Put the calling process in a new cgroup limited to ``maximum`` processes.

    Returns:
        The cgroup's folder (remove it with ``remove`` once empty), or None where
        no pids cgroup can be made.
    """
    root = pids_root()
    if root is None:
        return None
    try:
        root.mkdir(exist_ok=True)
        group = root / name
        group.mkdir()
        (group / "pids.max").write_text(str(maximum))
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


MEMORY_V1_ROOT = Path("/sys/fs/cgroup/memory")


def memory_root() -> Path | None:
    """A writable folder under which per-worker memory cgroups can be made, or None."""
    if (MEMORY_V1_ROOT / "cgroup.procs").exists() and os.access(MEMORY_V1_ROOT, os.W_OK):
        return MEMORY_V1_ROOT / "workbench"
    for root in V2_ROOTS:
        controllers = root / "cgroup.controllers"
        if controllers.exists() and "memory" in controllers.read_text().split():
            base = _own_v2_cgroup(root)
            if base is not None and os.access(base, os.W_OK):
                return base / "workbench"
    return None


def limit_memory(name: str, megabytes: int) -> Path | None:
    """Make a new cgroup of ``megabytes`` (the worker joins it with ``join``).

    Returns:
        The cgroup's folder, or None where no memory cgroup can be made.
    """
    root = memory_root()
    if root is None:
        return None
    limit = str(megabytes * 1024 * 1024)
    try:
        if not root.exists():
            root.mkdir(exist_ok=True)
            if root.parent != MEMORY_V1_ROOT:
                (root / "cgroup.subtree_control").write_text("+memory")
        group = root / name
        group.mkdir()
        if (group / "memory.limit_in_bytes").exists():
            (group / "memory.limit_in_bytes").write_text(limit)
            swap = group / "memory.memsw.limit_in_bytes"
            if swap.exists():
                swap.write_text(limit)
        else:
            (group / "memory.max").write_text(limit)
            if (group / "memory.swap.max").exists():
                (group / "memory.swap.max").write_text("0")
    except OSError:
        return None
    return group


def join(group: Path) -> None:
    """Move the calling process (and all it will start) into ``group``.

    Raises:
        OSError: The kernel refused (the caller fails closed).
    """
    (group / "cgroup.procs").write_text("0")


def memory_exceeded(group: Path) -> bool:
    """Whether the kernel killed a process of the group for going over its limit."""
    for name in ("memory.oom_control", "memory.events"):
        try:
            for line in (group / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                    return True
        except OSError:
            continue
    return False


def remove(group: Path) -> bool:
    """Remove an empty worker cgroup; False while processes are still in it."""
    try:
        group.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
