"""What the sandbox can enforce on this machine, found by trying it.

``probe()`` forks a throwaway child that makes each move a worker makes — new PID
and network namespaces, Landlock, the seccomp filter — and reports which worked.
``workbench doctor`` prints the result; the host refuses to run tools when a
required layer is missing, rather than running them with less than was promised.
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, dataclass, field

from workbench.sandbox import landlock, seccomp
from workbench.sandbox._libc import CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWUSER, unshare
from workbench.sandbox.deno import deno_binary


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


@dataclass
class Report:
    """The probe's findings; ``ready`` when every required layer works."""

    checks: list[Check] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return all(c.ok for c in self.checks if c.required)

    def problems(self) -> list[str]:
        return [f"{c.name}: {c.detail}" for c in self.checks if c.required and not c.ok]

    def to_json(self) -> dict:
        return {"ready": self.ready, "checks": [asdict(c) for c in self.checks]}


def _in_child(test) -> tuple[bool, str]:
    """Run ``test`` in a forked child; ``(ok, detail)`` from what it reports."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            detail = test() or "works"
            payload = {"ok": True, "detail": detail}
        except BaseException as exc:
            payload = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(payload).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 4096):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    try:
        payload = json.loads(data)
    except json.JSONDecodeError:
        return False, "the probe crashed"
    return bool(payload["ok"]), str(payload["detail"])


def _namespaces() -> str:
    flags = CLONE_NEWPID | CLONE_NEWNET
    if os.getuid() != 0:
        flags |= CLONE_NEWUSER
    unshare(flags)
    return "PID and network namespaces" + ("" if os.getuid() == 0 else " (through a user namespace)")


def _landlock() -> str:
    rules = landlock.Ruleset()
    rules.allow("/", landlock.READ)
    abi = rules.restrict()
    return f"ABI {abi}"


def _seccomp() -> str:
    seccomp.load(seccomp.build_filter(allow_processes=False))
    try:
        os.setsid()
    except PermissionError:
        return f"filter loaded ({platform.machine()})"
    raise RuntimeError("the filter did not refuse setsid")


def _proxy() -> tuple[bool, str]:
    """The proxy's address rules judge the tricky forms internal (no child needed)."""
    import ipaddress

    from workbench.sandbox.proxy import MAX_CONCURRENT, MAX_CONNECTIONS, internal

    missed = [a for a in ("127.0.0.1", "::ffff:127.0.0.1", "100.64.0.1", "2002:7f00:1::", "64:ff9b::1",
                          "fd00::1", "169.254.169.254", "::") if internal(ipaddress.ip_address(a)) is None]
    if missed:
        return False, f"internal addresses judged public: {', '.join(missed)}"
    return True, ("names resolved once on the host, every address checked against the internal "
                  f"ranges, internal ones only by literal grant; {MAX_CONCURRENT} connections at once "
                  f"and {MAX_CONNECTIONS} per call")


def probe() -> Report:
    """Try each layer in a throwaway child process."""
    report = Report()
    abi = landlock.abi_version()
    ok, detail = _in_child(_landlock) if abi else (False, "the kernel has no Landlock")
    report.checks.append(Check("landlock", ok, detail))
    report.checks.append(Check("landlock-network", abi >= 4,
                               "TCP ports are filtered" if abi >= 4 else
                               f"ABI {abi} cannot filter TCP ports (needs 4)"))
    report.checks.append(Check("landlock-scopes", abi >= 6,
                               "signals and abstract sockets are scoped" if abi >= 6 else
                               f"ABI {abi} cannot scope signals (needs 6); seccomp and PID "
                               "namespaces still apply", required=False))
    if seccomp.supported():
        ok, detail = _in_child(_seccomp)
    else:
        ok, detail = False, f"no filter for the {platform.machine()} architecture"
    report.checks.append(Check("seccomp", ok, detail))
    ok, detail = _in_child(_namespaces)
    report.checks.append(Check("namespaces", ok, detail))
    report.checks.append(Check("network-proxy", *_proxy()))
    from workbench.sandbox.cgroup import pids_root

    root = pids_root()
    report.checks.append(Check("process-limit", root is not None or os.getuid() != 0,
                               f"a pids cgroup per worker under {root}" if root else
                               "RLIMIT_NPROC only (counts all of your processes)" if os.getuid() != 0
                               else "no writable pids cgroup, and root is exempt from RLIMIT_NPROC: "
                               "tools granted `run` are not bounded in processes", required=False))
    from workbench.sandbox.paths import has_openat2

    report.checks.append(Check("no-follow-paths", True,
                               "granted paths and the host's reads for tools are opened with "
                               "openat2 (RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH)" if has_openat2() else
                               "no openat2 here: granted paths and the host's reads for tools are "
                               "walked one component at a time with O_NOFOLLOW", required=False))
    binary = deno_binary()
    report.checks.append(Check("deno", binary is not None,
                               binary or "not found: TypeScript and JavaScript tools cannot run",
                               required=False))
    return report
