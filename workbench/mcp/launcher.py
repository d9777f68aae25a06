"""Inside the sandbox: run one stdio MCP server with exactly its grants.

The host execs ``python -I -m workbench.mcp.launcher SPEC_FD`` with the server's pipes
as stdin, stdout and stderr, in a session of its own; it never forks itself. The
launcher reads the spec (the argv and a sandbox ``Policy`` built from the grants the
person gave when adding the server) from ``SPEC_FD`` and makes the server's sandbox
exactly as the zygote makes a worker's, with the same code (``sandbox/userns.py``):

- the launcher is the **supervisor**: it stays outside, as the host's user, makes the
  server's memory cgroup when it may start processes (and refuses to start it when
  none can be made), writes the id map, and answers the server's metadata calls
  (``chmod``, ``utime``, ``xattr``…: made inside its write grants only, refused
  elsewhere; ``metadata.Broker``);
- a middle process enters a user namespace of its own — uid 0 there is
  ``process.UNUSED_ID`` outside on a root host when the server has no read, write or
  run grant, else the host's uid without any capability — then fresh mount, PID,
  network, IPC and UTS namespaces, and forks the server's process as PID 1 there;
- PID 1 brings up loopback, hands its proxy socket to the host when it has ``net``
  grants (and, for a server on a TCP port of its own, the dialer the host reaches it
  through: ``process.dialer``), enters its private root (``process.private_root``: the runtime, its library
  folders, the granted paths, ``/dev/null`` and a ``/proc`` of its own PID namespace,
  nothing else), and applies the worker's own layers (``process.enter``: rlimits,
  Landlock on pinned grants, capabilities, seccomp) before it execs the server.

The launcher waits and ends the way the server ended (a SIGTERM ends the server and
then the launcher, once it removed the server's cgroups); when a process of the server
went over the memory limit it says so on stderr (the server's log and the reason its
status shows). Killing the launcher kills the server (``PR_SET_PDEATHSIG``), and the
end of PID 1 ends every process it started; the server cannot leave the process group
(seccomp). Only ``workbench.sandbox`` and the standard library are imported here.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

from workbench.sandbox import cgroup, process, userns
from workbench.sandbox._libc import PR_SET_PDEATHSIG, prctl
from workbench.sandbox.policy import PROXY_PORT, Policy

SETUP_FAILED = 71


def _send(sock: socket.socket, payload: dict, fds: list[int]) -> None:
    socket.send_fds(sock, [json.dumps(payload).encode()], fds)


def _server(policy: Policy, argv: list[str], control: socket.socket | None, sync: socket.socket,
            inherit: tuple[int, ...] = ()) -> int:
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
    if policy.serve_port and control is not None:
        dial = process.dialer(policy.serve_port)
        socket.send_fds(control, [b"dialer"], [dial.fileno()])
        dial.close()
    if control is not None:
        control.close()
    keep = {0, 1, 2, sync.fileno(), *inherit}
    process.settle_pid1(policy, keep)
    listener_fd = process.enter(policy)
    if listener_fd is not None:
        _send(sync, {"listener": True}, [listener_fd])
        os.close(listener_fd)
    sync.close()
    os.execve(argv[0], argv, env)
    return SETUP_FAILED  # not reached: execve raises or never returns


class _MemoryWatch:
    """Tells, once, that a process of the server went over the memory limit."""

    def __init__(self, group, megabytes: int) -> None:
        self.group = group
        self.megabytes = megabytes
        self.told = False

    def __call__(self) -> None:
        if self.group is not None and not self.told and cgroup.memory_exceeded(self.group):
            self.told = True
            os.write(2, (f"sandbox: a process of the server went over the memory limit "
                         f"({self.megabytes} MiB for the server and its processes together) "
                         "and was killed\n").encode())


def _fail(message: str) -> None:
    os.write(2, f"sandbox setup failed: {message}\n".encode())
    os._exit(SETUP_FAILED)


def main() -> None:
    with os.fdopen(int(sys.argv[1]), "rb") as handle:
        spec = json.loads(handle.read())
    policy = Policy.from_json(spec["policy"])
    argv = list(spec["argv"])
    control = socket.socket(fileno=spec["control_fd"]) if spec.get("control_fd") is not None else None
    # Descriptors the server itself inherits (a plugin's listening socket, made by the
    # host in its own network namespace, so the host reaches it over its loopback).
    inherit = tuple(int(fd) for fd in spec.get("inherit_fds", ()))
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Named as the zygote names its workers' groups (owner-pid): a zygote removes the
    # groups of a launcher that died without removing them.
    name = f"{os.getpid()}-{os.getpid()}"
    owner = process.outside_identity(policy)
    memory = None
    megabytes = process.memory_mb(policy)
    if policy.allow_processes or policy.serve_port:
        # One process (and its threads) is bounded by its rlimits; a server that may
        # start processes is bounded, all of them together, by a memory cgroup, and so
        # is a plugin (its manifest's resources.memory), where one can be made.
        memory = cgroup.limit_memory(name, megabytes)
        if memory is None and policy.allow_processes:
            _fail("no memory cgroup can be made for a server granted `run` (see `workbench doctor`)")
    supervisor = os.getpid()
    try:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
    except OSError as exc:
        _fail(str(exc))
    if pid == 0:
        ours.close()
        try:
            if policy.allow_processes:
                cgroup.limit_processes(name, policy.limits.processes + 2)

            def forked() -> None:
                # The server's pipes and its proxy socket are PID 1's alone.
                for fd in (0, 1):
                    os.close(fd)
                if control is not None:
                    control.close()
                for fd in inherit:  # the server's own: its end closes them
                    os.close(fd)

            userns.middle(sync=theirs, supervisor=supervisor, owner=owner, memory=memory,
                          pid1=lambda: _server(policy, argv, control, theirs, inherit), forked=forked,
                          failed=lambda note: os.write(2, note.encode()))
        except BaseException as exc:  # fail closed: nothing runs unsandboxed
            os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(SETUP_FAILED)
    theirs.close()
    for fd in inherit:
        os.close(fd)
    # The host ends a server with SIGTERM to its process group. PID 1 of a namespace
    # gets no signal from outside that it has no handler for: the launcher ends the
    # middle process, whose end ends PID 1 and so everything in its namespace, then
    # removes the cgroups and ends by SIGTERM itself.
    terminated = []

    def terminate(*_: object) -> None:
        terminated.append(True)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, terminate)
    if control is not None:
        control.close()
    os.close(0)
    os.close(1)
    try:
        userns.map_child(pid, owner, ours)
    except OSError as exc:
        os.kill(pid, signal.SIGKILL)
        _fail(f"cannot map the server's user namespace: {exc}")
    watch = _MemoryWatch(memory, megabytes)
    status = userns.watch(pid, ours, policy, owner, tick=watch if memory is not None else None)
    watch()
    _remove_groups(name)
    if terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    if os.WIFSIGNALED(status):
        # End the same way, so the host can say how the server ended.
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # those two take no handler
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _remove_groups(name: str) -> None:
    """Remove the server's cgroups once its processes are gone (the kernel ends the
    rest of a PID namespace when its PID 1 ends, a moment after)."""
    import time

    roots = [r for r in (cgroup.pids_root(), cgroup.memory_root()) if r is not None]
    for _ in range(100):
        if all([cgroup.remove(root / name) for root in roots]):
            return
        time.sleep(0.01)


if __name__ == "__main__":
    main()
