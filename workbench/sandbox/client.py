"""The host's side of the zygote: start it, ask it for workers, kill them.

The zygote is exec'd (never forked from the host) with a minimal environment, in
its own session so that a ctrl+c in the terminal reaches the host alone. Requests
are short and serialized by a lock; async callers go through a thread.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import queue
import select
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass

from workbench.sandbox.policy import Policy
from workbench.sandbox.fds import recv_fds, send_fds

ZYGOTE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
PASSED_ON = ("WORKBENCH_CGROUP_ROOT",)
"""Variables of the host's environment the zygote gets too (``cgroup.ROOT_ENV``)."""


class SandboxUnavailable(RuntimeError):
    """The zygote could not start or stopped answering."""


@dataclass
class Spawned:
    """A worker the zygote forked: its supervisor's pid and the host's descriptors."""

    pid: int
    bridge: socket.socket
    output_fd: int
    status_fd: int


class ZygoteClient:
    """Starts the zygote on creation; ``close`` ends it and every worker with it.

    With ``probe_ahead`` the zygote tries the sandbox's layers (``probe``) as soon as
    it has started, before it answers any request, so that a first call started along
    with the zygote does not wait for the probe after the host's own start-up.
    """

    def __init__(self, *, probe_ahead: bool = False) -> None:
        self._lock = threading.Lock()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-m", "workbench.sandbox.zygote", str(child.fileno()),
                 str(os.getpid()), *(["--probe"] if probe_ahead else [])],
                pass_fds=[child.fileno()],
                env={**ZYGOTE_ENV, **{k: os.environ[k] for k in PASSED_ON if k in os.environ}}, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                cwd="/")
        finally:
            child.close()
        self._sock = parent
        self.owner = os.getpid()
        """The process that started it (the zygote ends with it)."""
        self.closed = False
        self._kills: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self._killer: threading.Thread | None = None

    def _request(self, payload: dict, max_fds: int = 4) -> tuple[dict, list[int]]:
        with self._lock:
            if self.closed:
                raise SandboxUnavailable("the sandbox has been shut down")
            try:
                send_fds(self._sock, payload, [])
                reply, fds = recv_fds(self._sock, max_fds)
            except OSError as exc:
                raise SandboxUnavailable(f"the sandbox zygote stopped answering: {exc}") from exc
        if reply is None:
            raise SandboxUnavailable("the sandbox zygote exited")
        if not reply.get("ok"):
            for fd in fds:
                os.close(fd)
            raise SandboxUnavailable(f"the sandbox zygote refused: {reply.get('error')}")
        return reply, fds

    def ping(self) -> int:
        return int(self._request({"op": "ping"})[0]["pid"])

    def probe(self) -> dict:
        """What the sandbox can enforce here, tried inside the zygote (see ``doctor``)."""
        return self._request({"op": "probe"})[0]["report"]

    def spawn(self, policy: Policy) -> Spawned:
        reply, fds = self._request({"op": "spawn", "policy": policy.to_json()})
        bridge = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=fds[0])
        return Spawned(pid=int(reply["pid"]), bridge=bridge, output_fd=fds[1], status_fd=fds[2])

    async def spawn_async(self, policy: Policy) -> Spawned:
        return await asyncio.to_thread(self.spawn, policy)

    def kill(self, pid: int) -> None:
        """Kill a worker's supervisor (and so its whole PID namespace), and wait."""
        if not self.closed:
            try:
                self._request({"op": "kill", "pid": pid})
            except SandboxUnavailable:
                pass

    def kill_soon(self, pid: int) -> None:
        """Kill a worker from a background thread, so a finished call need not wait
        for the zygote; ``close`` still kills every worker first."""
        if self._killer is None:
            self._killer = threading.Thread(target=self._kill_loop, name="zygote-killer", daemon=True)
            self._killer.start()
        self._kills.put(pid)

    def _kill_loop(self) -> None:
        while (pid := self._kills.get()) is not None:
            self.kill(pid)

    def close(self) -> None:
        """End the zygote; its death takes every worker with it."""
        if self._killer is not None:
            self._kills.put(None)
            self._killer.join(timeout=2)
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._sock.close()
        if not _exited_within(self.process, 2.0):
            self.process.kill()
        self.process.wait()


def _exited_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Whether ``process`` ends within ``seconds``, waited for by blocking on its pidfd
    (woken the moment it exits) rather than by ``Popen.wait``'s sleeps between polls,
    which overshoot an exit by up to 50 ms. Where there is no pidfd, ``Popen.wait``."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # no pidfd here (kernel < 5.3), or already reaped
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(seconds * 1000))
    finally:
        os.close(pidfd)


_ahead: ZygoteClient | None = None
_ahead_lock = threading.Lock()


def start_ahead() -> None:
    """Exec the zygote now, for a command line that runs a call (``workbench call``):
    it starts while the CLI and the host are imported and built, and the host's
    sandbox takes it (``take``) instead of starting its own. One never taken is
    closed at exit."""
    global _ahead
    with _ahead_lock:
        if _ahead is None:
            _ahead = ZygoteClient(probe_ahead=True)  # the call's first question
            atexit.register(_close_ahead)


def take() -> ZygoteClient:
    """The zygote ``start_ahead`` started, when this process started it and it is still
    running; else a new one."""
    global _ahead
    with _ahead_lock:
        found, _ahead = _ahead, None
    if found is not None:
        if found.owner == os.getpid() and found.process.poll() is None:
            return found
        found.close()
    return ZygoteClient()


def _close_ahead() -> None:
    global _ahead
    with _ahead_lock:
        found, _ahead = _ahead, None
    if found is not None and found.owner == os.getpid():
        found.close()
