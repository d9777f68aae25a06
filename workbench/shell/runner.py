"""Running one command line in a worker of the sandbox, on a copy-on-write project.

A worker (``runtime="shell"``, forked by the zygote like every tool's) is PID 1 of its
own user, mount, PID, network, IPC and UTS namespaces, in a private root holding the
host's program folders read-only, a private ``/tmp`` and the project as an overlay
whose upper layer is a bounded ``tmpfs`` (``sandbox/mounts.Layers``). It sandboxes
itself (Landlock, no capabilities, seccomp), hands the host its upper layer with
``ready``, waits for the command line, and becomes ``bash -c`` running it: when bash
ends, the kernel ends everything else in its PID namespace, and the pids and memory
cgroups bound them meanwhile. Its stdout and stderr are one pipe to the host, whose
head and tail are kept (``Output``). The host kills the worker at the time limit.

One worker is started ahead for the next command with the same policy (a worker is
never used twice). This module knows nothing of sessions or the store.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from workbench import text
from workbench.errors import ToolError
from workbench.sandbox.client import SandboxUnavailable, Spawned, ZygoteClient
from workbench.sandbox.policy import Limits, NetEndpoint, Policy
from workbench.sandbox.proxy import Proxy
from workbench.sandbox.worker_host import READY_TIMEOUT, describe_status
from workbench.sandbox.fds import recv_fds

log = logging.getLogger(__name__)

BASH_PATHS = ("/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash")
BIN_NAMES = ("bin", "sbin")


def find_bash(programs: list[str]) -> str | None:
    """The bash the command runs with: the host's own, inside its program folders."""
    for path in BASH_PATHS:
        real = os.path.realpath(path)
        if os.access(real, os.X_OK) and any(real == p or real.startswith(p.rstrip("/") + "/")
                                            for p in map(os.path.realpath, programs)):
            return real
    return None


def command_path(programs: list[str]) -> str:
    """``PATH`` for the command: the ``bin`` and ``sbin`` folders of its program folders."""
    found: list[str] = []
    for folder in programs:
        for candidate in (os.path.join(folder, "local", "bin"), *(os.path.join(folder, n) for n in BIN_NAMES)):
            if os.path.isdir(candidate) and candidate not in found:
                found.append(candidate)
    return ":".join(found) or "/usr/bin:/bin"


@dataclass
class Output:
    """The head and tail of what a command printed, within ``limit`` bytes."""

    limit: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.limit - self.limit // 2:
                del self.tail[: len(self.tail) - (self.limit - self.limit // 2)]

    @property
    def cut(self) -> int:
        """Bytes left out between head and tail."""
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        head = bytes(self.head).decode("utf-8", "replace")
        if not self.cut:
            return text.visible(head + bytes(self.tail).decode("utf-8", "replace"))
        tail = bytes(self.tail).decode("utf-8", "replace")
        return text.visible(f"{head}\n[… output cut at {self.limit // 1024} KiB: {self.cut} bytes "
                            f"in the middle left out of {self.total} …]\n{tail}")


@dataclass
class Ran:
    """How a command ended, before its changes are applied."""

    exit_code: int | None
    """Its exit status (128 + N for a signal N), or None when it was stopped."""
    ended: str
    """How it ended, in words."""
    output: Output
    timed_out: bool
    upper_fd: int
    since_ns: int
    net_events: list[dict[str, Any]]


class ShellWorker:
    """One started shell worker, waiting for its one command."""

    def __init__(self, client: ZygoteClient, spawned: Spawned, policy: Policy) -> None:
        self.client = client
        self.spawned = spawned
        self.policy = policy
        self.upper_fd = -1
        self.listener: socket.socket | None = None
        self.finished = False

    @classmethod
    async def start(cls, client: ZygoteClient, policy: Policy) -> ShellWorker:
        """Spawn a worker and wait until it is sandboxed and holds its upper layer.

        Raises:
            ToolError: It could not start (``unavailable``, with why).
        """
        spawned = await client.spawn_async(policy)
        worker = cls(client, spawned, policy)
        try:
            await asyncio.to_thread(worker._handshake)
        except BaseException:
            worker.kill()
            raise
        return worker

    def _handshake(self) -> None:
        bridge = self.spawned.bridge
        bridge.settimeout(READY_TIMEOUT)
        try:
            if self.policy.net:
                message, fds = recv_fds(bridge, 1)
                if not message or not message.get("proxy") or not fds:
                    raise ToolError("unavailable", self._why("the worker did not set up its proxy"))
                self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, fileno=fds[0])
            message, fds = recv_fds(bridge, 1)
        except (OSError, ValueError) as exc:
            raise ToolError("unavailable", self._why(f"the worker did not start ({exc})")) from None
        if not message or not message.get("ready") or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise ToolError("unavailable", self._why("the worker could not isolate the command"))
        self.upper_fd = fds[0]
        bridge.settimeout(None)

    def _why(self, what: str) -> str:
        try:
            os.set_blocking(self.spawned.output_fd, False)
            said = os.read(self.spawned.output_fd, 4000).decode("utf-8", "replace").strip()
        except OSError:
            said = ""
        return f"{what}: {text.visible(said)}" if said else what

    async def run(self, command: str, *, timeout_s: float, answer_bytes: int,
                  decide: Callable[[str, int], Awaitable[str | None]] | None,
                  waiting: Callable[[], float]) -> Ran:
        """Run ``command``; the worker is killed when it returns, raises or is cancelled.

        ``waiting`` tells how many seconds the call has spent waiting for a person (a
        network card), which the time limit does not count."""
        from workbench.shell.changes import coarse_now_ns

        loop = asyncio.get_running_loop()
        output = Output(answer_bytes)
        closed: asyncio.Future[None] = loop.create_future()
        status: asyncio.Future[int | None] = loop.create_future()
        proxy: Proxy | None = None
        events: list[dict[str, Any]] = []
        out_fd, status_fd = self.spawned.output_fd, self.spawned.status_fd
        os.set_blocking(out_fd, False)

        def on_output() -> None:
            try:
                data = os.read(out_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if data:
                output.add(data)
            else:
                loop.remove_reader(out_fd)
                if not closed.done():
                    closed.set_result(None)

        def on_status() -> None:
            loop.remove_reader(status_fd)
            try:
                data = os.read(status_fd, 4)
            except OSError:
                data = b""
            if not status.done():
                status.set_result(int.from_bytes(data, "little", signed=True) if len(data) == 4 else None)

        try:
            if self.listener is not None:
                proxy = await Proxy.serve(self.listener, self.policy.net,
                                          lambda event: events.append(event.to_json()))
                proxy.decide = decide
                self.listener = None
            loop.add_reader(out_fd, on_output)
            loop.add_reader(status_fd, on_status)
            since = coarse_now_ns()
            self.spawned.bridge.sendall(json.dumps({"command": command}).encode() + b"\n")
            timed_out = False
            deadline = loop.time() + timeout_s
            while not status.done():
                left = deadline + waiting() - loop.time()
                if left <= 0:
                    timed_out = True
                    break
                await asyncio.wait([status], timeout=min(left, 1.0))
            if timed_out:
                await asyncio.to_thread(self.client.kill, self.pid)
                try:
                    async with asyncio.timeout(5):
                        await status
                except TimeoutError:
                    pass
            wait_status = status.result() if status.done() else None
            try:
                async with asyncio.timeout(2):
                    await closed
            except TimeoutError:
                pass
            on_output()
            exit_code, ended = _ending(timed_out, wait_status, timeout_s)
            upper, self.upper_fd = self.upper_fd, -1
            return Ran(exit_code, ended, output, timed_out, upper, since, events)
        finally:
            for fd in (out_fd, status_fd):
                try:
                    loop.remove_reader(fd)
                except (ValueError, OSError):
                    pass
            if proxy is not None:
                proxy.close()
            self.kill()

    @property
    def pid(self) -> int:
        return self.spawned.pid

    def kill(self) -> None:
        """Kill the worker (its whole PID namespace) and close what the host held."""
        if self.finished:
            return
        self.finished = True
        self.client.kill_soon(self.pid)
        self.spawned.bridge.close()
        if self.listener is not None:
            self.listener.close()
        for fd in (self.spawned.output_fd, self.spawned.status_fd, self.upper_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.upper_fd = -1


def _ending(timed_out: bool, wait_status: int | None, timeout_s: float) -> tuple[int | None, str]:
    """The exit code (128 + N for a signal N; None when stopped) and how it ended."""
    if timed_out:
        return None, f"stopped after {timeout_s:g} s (its time limit)"
    if wait_status is None:
        return None, "it was stopped"
    if os.WIFEXITED(wait_status):
        return os.WEXITSTATUS(wait_status), f"exited with status {os.WEXITSTATUS(wait_status)}"
    return 128 + os.WTERMSIG(wait_status), describe_status(wait_status)


@dataclass(frozen=True)
class ShellPolicy:
    """What a shell worker is made from (its policy's inputs)."""

    project: str
    device: int
    inode: int
    programs: tuple[str, ...]
    upper_mb: int
    tmp_mb: int
    limits: Limits
    net: tuple[tuple[str, tuple[int, ...]], ...] = ()
    proxied: bool = False
    """Whether the proxy is there (the ceiling is not off), even for no endpoint yet."""

    def build(self) -> Policy:
        """The sandbox policy.

        Raises:
            ToolError: ``unavailable`` when no bash is among the program folders.
        """
        programs = [p for p in self.programs if os.path.exists(p)]
        bash = find_bash(programs)
        if bash is None:
            raise ToolError("unavailable", "no bash among the program folders "
                            f"({', '.join(self.programs)}; shell.programs)")
        env = {"PATH": command_path(programs), "HOME": "/tmp", "LANG": "C.UTF-8",
               "LC_ALL": "C.UTF-8", "TERM": "dumb", "TMPDIR": "/tmp", "PWD": self.project,
               "PYTHONDONTWRITEBYTECODE": "1"}
        net = [NetEndpoint(host, list(ports)) for host, ports in self.net]
        if self.proxied and not net:
            net = [NetEndpoint("invalid.", [443])]  # the proxy is there; every host is decided
        return Policy(runtime="shell", entry="", function="", extension_dir=programs[0],
                      cwd=self.project, limits=self.limits, env=env, net=net,
                      shell={"project": self.project, "device": self.device, "inode": self.inode,
                             "upper_mb": self.upper_mb, "tmp_mb": self.tmp_mb,
                             "programs": programs, "bash": bash})


class ShellRunner:
    """Starts shell workers from the zygote; keeps one started ahead per policy.

    Args:
        zygote: The zygote the host's sandbox runs (started on first use).
    """

    MAX_WARM = 2

    def __init__(self, zygote: Callable[[], ZygoteClient]) -> None:
        self.zygote = zygote
        self.keep_warm = True
        self._warm: dict[str, asyncio.Task[ShellWorker]] = {}

    @staticmethod
    def _key(policy: Policy) -> str:
        return hashlib.sha256(json.dumps(policy.to_json(), sort_keys=True).encode()).hexdigest()

    async def worker(self, policy: Policy) -> ShellWorker:
        """A worker for ``policy``: the one started ahead, else a new one.

        Raises:
            ToolError: ``unavailable`` when it cannot start.
        """
        key = self._key(policy)
        task = self._warm.pop(key, None)
        if task is not None:
            try:
                found = await task
                if not found.finished:
                    return found
            except (ToolError, SandboxUnavailable, OSError) as exc:
                log.debug("a shell worker started ahead failed: %s", exc)
        try:
            started = await ShellWorker.start(self.zygote(), policy)
        except SandboxUnavailable as exc:
            raise ToolError("unavailable", f"the sandbox is not available: {exc}") from exc
        return started

    def prepare(self, policy: Policy) -> None:
        """Start the next command's worker for ``policy`` (after a call: never beside it)."""
        key = self._key(policy)
        if not self.keep_warm or key in self._warm:
            return
        while len(self._warm) >= self.MAX_WARM:
            _discard(self._warm.pop(next(iter(self._warm))))
        self._warm[key] = asyncio.ensure_future(ShellWorker.start(self.zygote(), policy))

    def forget(self) -> None:
        for task in self._warm.values():
            _discard(task)
        self._warm.clear()

    async def aclose(self) -> None:
        tasks = list(self._warm.values())
        self._warm.clear()
        for task in tasks:
            try:
                (await task).kill()
            except BaseException:
                continue


def _discard(task: asyncio.Task[ShellWorker]) -> None:
    def done(finished: asyncio.Task[ShellWorker]) -> None:
        if not finished.cancelled() and finished.exception() is None:
            finished.result().kill()

    if task.done():
        done(task)
    else:
        task.add_done_callback(done)
