"""A bound on how many processes a worker may have, where the kernel lets us set one.

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


def remove(group: Path) -> bool:
    """Remove an empty worker cgroup; False while processes are still in it."""
    try:
        group.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
