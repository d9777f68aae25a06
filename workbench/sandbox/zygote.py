"""The zygote: a small process exec'd once by the host, that forks one worker per call.

It is started with a minimal environment and holds no secrets, so forking it is
safe where forking the host (threads, a terminal, API keys in memory) is not. For
each ``spawn`` it forks a supervisor child, which stays outside the sandbox as the
host's own user, makes the worker's memory cgroup (when it may start processes) and
forks a middle process (``userns.py``, the code sandboxed MCP servers are made with too). That
one joins the cgroup, enters a user namespace (its id map is written by itself, or by
the supervisor for an identity that is not the host's), then fresh mount, PID,
network, IPC and UTS namespaces owned by it, and forks the worker as PID 1 there. The worker sandboxes itself (``process.private_root``,
``process.enter``) and runs its tool; the supervisor answers the metadata calls the
seccomp filter hands it (``metadata.Broker``). Killing the supervisor kills the
middle process, which kills the worker, and the kernel then kills everything in its
PID namespace.

The host talks to the zygote over a SOCK_SEQPACKET socket: JSON requests, JSON
replies carrying the worker's file descriptors (SCM_RIGHTS).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import time

from workbench.sandbox import cgroup, libraries, metadata, mounts, process, protocol, userns, worker  # noqa: F401  (imported before any fork)
from workbench.sandbox._libc import PR_SET_PDEATHSIG, prctl
from workbench.sandbox.fds import MAX_MESSAGE, recv_fds, send_fds  # noqa: F401  (MAX_MESSAGE: kept importable from here)
from workbench.sandbox.policy import PROXY_PORT, Policy

def _worker_main(policy: Policy, bridge: socket.socket, output_fd: int, sync: socket.socket) -> int:
    """PID 1 of the new namespaces: sandbox this process, then run the tool."""
    process.die_with_parent()
    process.loopback_up()
    if policy.net:
        listener = process.proxy_listener()
        send_fds(bridge, {"proxy": True}, [listener.fileno()])
        listener.close()
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(output_fd, 2)
    if policy.runtime == "shell":
        os.dup2(output_fd, 1)
        keep = {0, 1, 2, bridge.fileno(), sync.fileno()}
    elif policy.runtime == "deno":
        os.dup2(bridge.fileno(), 0)
        os.dup2(bridge.fileno(), 1)
        keep = {0, 1, 2, sync.fileno()}
    else:
        os.dup2(output_fd, 1)
        keep = {0, 1, 2, bridge.fileno(), sync.fileno()}
    process.settle_pid1(policy, keep)
    extra = {"PYTHONDONTWRITEBYTECODE": "1"}
    if policy.net:
        proxy = f"http://127.0.0.1:{PROXY_PORT}"
        extra.update(HTTP_PROXY=proxy, HTTPS_PROXY=proxy, http_proxy=proxy, https_proxy=proxy,
                     NO_PROXY="", no_proxy="")
    if policy.runtime == "deno":
        extra.update(policy.deno.get("env", {}))
    process.clean_environment(policy, extra)
    listener_fd = process.enter(policy)
    if listener_fd is not None:
        send_fds(sync, {"listener": True}, [listener_fd])
        os.close(listener_fd)
    sync.close()
    if policy.runtime == "shell":
        return _run_command(policy, bridge)
    if policy.runtime == "deno":
        argv = policy.deno["argv"]
        os.execve(argv[0], argv, dict(os.environ))
    granted = tuple(os.path.realpath(p) for p in (*policy.read, *policy.write, *policy.execute,
                                                  policy.extension_dir, *policy.runtime_read))
    return worker.serve(bridge, policy.entry, policy.function, policy.python_path, granted)


MAX_COMMAND = 1 << 20
"""Bytes of the message carrying a shell's command line, at most."""


def _run_command(policy: Policy, bridge: socket.socket) -> int:
    """PID 1 of a ``shell`` sandbox, sandboxed: hand the host the upper layer (with
    ``ready``), wait for the command line, and become bash running it. When bash ends,
    the PID namespace ends with everything it started."""
    send_fds(bridge, {"ready": True}, [process.UPPER_FD])
    os.close(process.UPPER_FD)
    data = b""
    while not data.endswith(b"\n"):
        chunk = bridge.recv(65536)
        if not chunk or len(data) + len(chunk) > MAX_COMMAND:
            return 0  # the host went away (or broke the protocol): nothing ran
        data += chunk
    command = json.loads(data)["command"]
    bridge.close()
    bash = policy.shell["bash"]
    os.execve(bash, [bash, "-c", command], dict(os.environ))


def _supervise(policy: Policy, bridge: socket.socket, output_fd: int, status_fd: int) -> None:
    """The supervisor child: make the worker's namespaces and bounds, answer its metadata
    calls, report how it ended. It stays outside the sandbox, as the host's own user."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setsid()  # its own session and process group, which the worker inherits
    name = f"{os.getppid()}-{os.getpid()}"
    if policy.allow_processes:
        cgroup.limit_processes(name, policy.limits.processes + 3)
    owner = process.outside_identity(policy)
    # One process (and its threads) is bounded by its rlimits; a worker that may start
    # processes is bounded, all of them together, by a memory cgroup.
    memory = cgroup.limit_memory(name, process.memory_mb(policy)) if policy.allow_processes else None
    if policy.allow_processes and memory is None and not policy.limits.per_process_memory:
        # Fail closed: the host checked before asking, but the cgroup could not be made now.
        os.write(output_fd, f"sandbox setup failed: {cgroup.NO_MEMORY_CGROUP}\n".encode())
        os.close(output_fd)
        os.write(status_fd, struct.pack("i", 75 << 8))
        os._exit(0)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    supervisor = os.getpid()
    pid = os.fork()
    if pid == 0:
        ours.close()
        os.close(status_fd)
        try:
            def forked() -> None:
                bridge.close()
                os.close(output_fd)

            userns.middle(sync=theirs, supervisor=supervisor, owner=owner, memory=memory,
                          pid1=lambda: _worker_main(policy, bridge, output_fd, theirs),
                          forked=forked, failed=lambda note: _note(note, output_fd))
        except BaseException as exc:
            os.write(output_fd, f"sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(72)
    theirs.close()
    bridge.close()
    userns.map_child(pid, owner, ours)
    told: list[int] = []

    def report(status: int) -> None:
        """Tell the host how the worker ended, once: for a shell, as soon as its
        processes have ended (the mount namespace's teardown is not waited for)."""
        if told:
            return
        told.append(status)
        if memory is not None and cgroup.memory_exceeded(memory):
            os.write(output_fd, (f"sandbox: the tool and its processes went over their memory limit "
                                 f"({process.memory_mb(policy)} MiB together)\n").encode())
        os.close(output_fd)
        os.write(status_fd, struct.pack("i", status))

    status = userns.watch(pid, ours, policy, owner,
                          on_status=report if policy.runtime == "shell" else None)
    report(status)
    os._exit(0)


def _note(note: str, output_fd: int) -> None:
    """Tell why the worker's setup failed (stderr is the output pipe once set up)."""
    for fd in (2, output_fd):
        try:
            os.write(fd, note.encode())
            return
        except OSError:
            continue


class Zygote:
    """The zygote's loop: spawn workers, kill them on request, reap them."""

    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.probed: dict | None = None
        """The probe's report, once made: the sandbox's layers do not change while the
        zygote runs, so each zygote probes at most once."""
        self.live: set[int] = set()
        self.groups: set[int] = set()
        """Ended supervisors whose process cgroup may still need removing."""

    def reap(self) -> None:
        while self.live:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.live.clear()
                break
            if pid == 0:
                break
            self.live.discard(pid)
            self.groups.add(pid)
        self._remove_groups()

    def _remove_groups(self) -> None:
        """Remove the cgroups of ended workers (those that are empty by now)."""
        if not self.groups:
            return
        roots = [r for r in (cgroup.pids_root(), cgroup.memory_root()) if r is not None]
        for pid in list(self.groups):
            if all([cgroup.remove(root / f"{os.getpid()}-{pid}") for root in roots]):
                self.groups.discard(pid)

    def shutdown(self) -> None:
        """Kill every worker, wait for them, and remove their cgroups."""
        for pid in list(self.live):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in list(self.live):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            self.live.discard(pid)
            self.groups.add(pid)
        for _ in range(20):
            self._remove_groups()
            if not self.groups:
                return
            time.sleep(0.01)

    @staticmethod
    def remove_stale_groups() -> None:
        """Remove cgroups left by zygotes that died without cleaning up."""
        for root in (cgroup.pids_root(), cgroup.memory_root()):
            if root is None or not root.exists():
                continue
            for group in root.iterdir():
                owner = group.name.partition("-")[0]
                if group.is_dir() and owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                    cgroup.remove(group)

    def spawn(self, policy: Policy) -> tuple[dict, list[int]]:
        if policy.runtime != "shell":  # a shell's program folders are executable whole
            process.executable_libraries(policy)  # found here, cached, inherited by the worker
        host_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_read, out_write = os.pipe()
        status_read, status_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                self.control.close()
                host_end.close()
                os.close(out_read)
                os.close(status_read)
                _supervise(policy, worker_end, out_write, status_write)
            finally:
                os._exit(72)
        worker_end.close()
        os.close(out_write)
        os.close(status_write)
        self.live.add(pid)
        return {"ok": True, "pid": pid}, [host_end.detach(), out_read, status_read]

    def kill(self, pid: int) -> dict:
        self.reap()
        if pid in self.live:
            os.kill(pid, signal.SIGKILL)
            return {"ok": True, "killed": True}
        return {"ok": True, "killed": False}

    def probe(self) -> dict:
        """What the sandbox can enforce here (``doctor.probe``), tried once."""
        if self.probed is None:
            from workbench.sandbox.doctor import probe

            self.probed = probe().to_json()
        return self.probed

    def serve(self) -> None:
        while True:
            message, fds = recv_fds(self.control)
            for fd in fds:
                os.close(fd)
            if message is None:
                self.shutdown()
                return
            self.reap()
            try:
                if message["op"] == "spawn":
                    reply, out = self.spawn(Policy.from_json(message["policy"]))
                elif message["op"] == "kill":
                    reply, out = self.kill(int(message["pid"])), []
                elif message["op"] == "probe":
                    reply, out = {"ok": True, "report": self.probe()}, []
                elif message["op"] == "ping":
                    reply, out = {"ok": True, "pid": os.getpid()}, []
                else:
                    reply, out = {"ok": False, "error": f"unknown op {message['op']!r}"}, []
            except Exception as exc:
                reply, out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}, []
            try:
                send_fds(self.control, reply, out)
            finally:
                for fd in out:
                    os.close(fd)


def main() -> None:
    control_fd, host_pid = int(sys.argv[1]), int(sys.argv[2])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != host_pid:
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    control = socket.socket(fileno=control_fd)
    process.loaders()  # once, before any fork
    libraries.closure_of_all(*process.python_roots())
    libraries.executable(process.loaders(), processes=False)
    Zygote.remove_stale_groups()
    zygote = Zygote(control)
    if "--probe" in sys.argv[3:]:
        zygote.probe()  # asked for ahead: the host's first request will be the probe
    zygote.serve()
    # Every worker is killed and reaped and its cgroups are gone: end now, without the
    # interpreter's teardown of every module imported here (about 20 ms the host's
    # ``close`` would wait for; there is nothing to flush or run at exit).
    os._exit(0)


if __name__ == "__main__":
    main()
