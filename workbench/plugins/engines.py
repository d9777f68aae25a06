"""Whether a container engine can run a plugin's image here, and why not.

A plugin's folder with ``run.command`` runs as a sandboxed process (``launch.py``),
whatever engine there is. A container runtime would need an engine that runs: a Docker
daemon (its socket), or podman able to start a container. This probe says which, and
why not, for ``workbench doctor`` and ``workbench plugin list``; the process runtime is
chosen in either case (this version drives no engine).

Measured on the machine this was written on: the Docker client is installed but no
daemon runs (no ``/var/run/docker.sock``); podman 4.3.1 from Debian installs, but no
image registry is reachable, and a container from a local root (``--rootfs``) does not
start: crun cannot raise ``RLIMIT_NOFILE``/``RLIMIT_NPROC`` (no ``CAP_SYS_RESOURCE``), and
with lower limits it refuses the hybrid cgroup layout ("cgroups in hybrid mode not
supported").
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

PROBE_TIMEOUT_S = 15.0
DOCKER_SOCKET = "/var/run/docker.sock"


@functools.lru_cache(maxsize=1)
def engine_status() -> tuple[str | None, str]:
    """``(engine, what was seen)``: the engine that runs containers here (None: none
    does), and what the probe saw. Probed once per process."""
    seen = []
    if shutil.which("docker"):
        if os.path.exists(DOCKER_SOCKET):
            return "docker", f"a Docker daemon answers at {DOCKER_SOCKET}"
        seen.append(f"docker is installed but no daemon runs (no {DOCKER_SOCKET})")
    podman = shutil.which("podman")
    if podman:
        try:
            done = subprocess.run([podman, "run", "--rm", "--network=none", "--rootfs", "/", "/bin/true"],
                                  capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            seen.append(f"podman could not be asked ({exc})")
        else:
            if done.returncode == 0:
                return "podman", "podman starts containers"
            lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
            seen.append(f"podman cannot start a container here ({lines[-1][:200] if lines else done.returncode})")
    if not seen:
        seen.append("no container engine (podman or docker) is installed")
    return None, "; ".join(seen)


def runtime_note() -> str:
    """What ``plugin list`` and ``doctor`` say of the runtime plugins get here."""
    engine, seen = engine_status()
    if engine is None:
        return f"plugins run as sandboxed processes: {seen}"
    return (f"plugins run as sandboxed processes ({seen}; this version does not drive it, so a plugin "
            "needs run.command)")
