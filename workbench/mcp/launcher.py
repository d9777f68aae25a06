"""Inside the sandbox: run one stdio MCP server with exactly its grants.

The host execs ``python -I -m workbench.mcp.launcher SPEC_FD`` with the server's pipes
as stdin, stdout and stderr, in a session of its own; it never forks itself. The
launcher reads the spec (the argv and a sandbox ``Policy`` built from the grants the
person gave when adding the server) from ``SPEC_FD``, enters new PID, network, IPC and
UTS namespaces (and a user namespace when not root), and forks the server as PID 1
there. The child brings up loopback, hands its proxy socket to the host when it has
``net`` grants, keeps only the granted environment, and applies the sandbox's own
layers in the order the workers use (rlimits, Landlock, capabilities, seccomp) before
it execs the server. The launcher waits and ends the way the server ended.

Killing the launcher kills the server (``PR_SET_PDEATHSIG``), and the end of PID 1
ends every process it started; the server cannot leave the process group (seccomp).
Only ``workbench.sandbox`` and the standard library are imported here.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys

from workbench.sandbox import process, seccomp
from workbench.sandbox._libc import (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWUSER,
                                     CLONE_NEWUTS, PR_SET_PDEATHSIG, prctl, unshare)
from workbench.sandbox.policy import PROXY_PORT, Policy

SETUP_FAILED = 71
DATA_HEADROOM_MB = 1024
"""V8 maps about this much data before a line of the server runs (see the sandbox's Deno limits)."""


def _map_user(uid: int, gid: int) -> None:
    with open("/proc/self/setgroups", "w") as handle:
        handle.write("deny")
    with open("/proc/self/uid_map", "w") as handle:
        handle.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as handle:
        handle.write(f"0 {gid} 1")


def _limits(policy: Policy) -> None:
    # A server lives across many calls: no CPU-time limit; memory is bounded by the
    # data limit (an address-space limit would stop V8 and the JVM at start).
    mib = 1024 * 1024
    pairs = [(resource.RLIMIT_DATA, (policy.limits.memory_mb + DATA_HEADROOM_MB) * mib),
             (resource.RLIMIT_FSIZE, policy.limits.file_size_mb * mib),
             (resource.RLIMIT_NOFILE, policy.limits.open_files),
             (resource.RLIMIT_CORE, 0)]
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def _server(policy: Policy, argv: list[str], control: socket.socket | None) -> None:
    """PID 1 of the new namespaces: sandbox this process, then become the server."""
    process.die_with_parent()
    process.loopback_up()
    env = dict(policy.env)
    if policy.net and control is not None:
        listener = process.proxy_listener()
        socket.send_fds(control, [b"proxy"], [listener.fileno()])
        listener.close()
        proxy = f"http://127.0.0.1:{PROXY_PORT}"
        env.update(HTTP_PROXY=proxy, HTTPS_PROXY=proxy, http_proxy=proxy, https_proxy=proxy,
                   NODE_USE_ENV_PROXY="1")
    if control is not None:
        control.close()
    os.chdir(policy.cwd if os.path.isdir(policy.cwd) else "/")
    _limits(policy)
    process.restrict_paths(policy)
    process.drop_capabilities()
    seccomp.load(seccomp.build_filter(allow_processes=policy.allow_processes))
    os.execve(argv[0], argv, env)


def main() -> None:
    with os.fdopen(int(sys.argv[1]), "rb") as handle:
        spec = json.loads(handle.read())
    policy = Policy.from_json(spec["policy"])
    argv = list(spec["argv"])
    control = socket.socket(fileno=spec["control_fd"]) if spec.get("control_fd") is not None else None
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    uid, gid = os.getuid(), os.getgid()
    try:
        unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
                | (CLONE_NEWUSER if uid != 0 else 0))
        if uid != 0:
            _map_user(uid, gid)
        pid = os.fork()
    except OSError as exc:
        sys.stderr.write(f"sandbox setup failed: {exc}\n")
        os._exit(SETUP_FAILED)
    if pid == 0:
        try:
            _server(policy, argv, control)
        except BaseException as exc:  # fail closed: nothing runs unsandboxed
            os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    if control is not None:
        control.close()
    os.close(0)
    os.close(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        # End the same way, so the host can say how the server ended.
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main()
