"""Bounds on a worker's processes and memory, all its processes together.

Memory: ``RLIMIT_AS`` is per process, so four children of a tool granted ``run``
could each hold the whole limit. A worker that may start processes (a ``run``
grant) is put, before it runs anything, in a memory cgroup of its own whose limit is
the worker's memory limit,
swap included; the kernel's OOM killer acts inside that group alone, and the
supervisor reports it. cgroup v1 (``/sys/fs/cgroup/memory``) and v2 (a ``memory``
controller the host may delegate) are used when writable; where neither is,
``doctor`` says so and only the per-process limit applies.

Where no memory cgroup can be made, a worker that may start processes is refused
(``runner`` and the supervisor fail closed), unless the person accepted per-process
bounds (the ``sandbox.per_process_memory`` setting, carried as
``Limits.per_process_memory``).

The cgroup filesystem is looked for under ``/sys/fs/cgroup``, or under the folder
``WORKBENCH_CGROUP_ROOT`` names (how a test makes a host with no writable cgroup;
the host passes it on to the zygote).

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

ROOT_ENV = "WORKBENCH_CGROUP_ROOT"
"""The environment variable naming the cgroup filesystem's folder, when not ``/sys/fs/cgroup``."""


def _root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or "/sys/fs/cgroup")


def _v2_roots() -> tuple[Path, Path]:
    return (_root() / "unified", _root())


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
    v1 = _root() / "pids"
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1 / "workbench"
    for root in _v2_roots():
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


NO_MEMORY_CGROUP = ("no writable memory cgroup: a tool that may start processes could hold its "
                    "memory limit once per process, so calls of tools granted `run` are refused; "
                    "delegate a cgroup with the memory controller to this user (for instance, start "
                    "workbench under `systemd-run --user --scope -p Delegate=yes`), or accept "
                    "per-process bounds with `workbench config set sandbox.per_process_memory true`")
"""What is missing, its consequence and what to do: ``doctor`` and the refusal say it."""


def memory_root() -> Path | None:
    """A writable folder under which per-worker memory cgroups can be made, or None."""
    v1 = _root() / "memory"
    if (v1 / "cgroup.procs").exists() and os.access(v1, os.W_OK):
        return v1 / "workbench"
    for root in _v2_roots():
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
            if root.parent != _root() / "memory":
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
