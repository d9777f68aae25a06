"""One running instance of a process plugin: one per project, started on first need,
stopped when idle, every call through the circuit breaker.

The instance's process is started from the installed plugin's folder with the seed's
environment, under the seed's names and ours:

=============================  ===============================  ==========================
what                           the seed's name                  ours
=============================  ===============================  ==========================
the port to serve on           ``LOOP_PLUGIN_PORT``             ``WORKBENCH_PLUGIN_PORT``
the secret every call carries  ``LOOP_PLUGIN_SECRET_FILE``      ``WORKBENCH_PLUGIN_SECRET_FILE``
the Plugin API's URL           ``LOOP_API_URL``                 ``WORKBENCH_API_URL``
the project-scoped token       ``LOOP_PLUGIN_TOKEN_FILE``       ``WORKBENCH_PLUGIN_TOKEN_FILE``
its data folder                ``/data`` in an image            ``WORKBENCH_PLUGIN_DATA``
=============================  ===============================  ==========================

The plugin binds ``$LOOP_PLUGIN_PORT`` itself, as the seed has it. In the sandbox
that is the sandbox's own loopback, which the host reaches through the process's
``connect`` (the sandbox's dialer, ``workbench.plugins.launch``); a spawner without one
(an unsandboxed baseline) gets a listening socket the host made on its loopback as
descriptor 3 (``LISTEN_FDS=1``, systemd's convention; ``WORKBENCH_PLUGIN_LISTEN_FD``)
and is reached over TCP. How the process is started is the ``Spawner`` handed in.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from workbench.plugins.breaker import Breaker
from workbench.plugins.http import Answer, BadAnswer, NoAnswer, request
from workbench.plugins.manifest import PluginManifest
from workbench.states import ProcessState, Stateful

LISTEN_FD = 3
START_TIMEOUT_S = 10.0
HEALTH_TIMEOUT_S = 2.0
ENDING_WAIT_S = 1.0


class PluginUnavailable(Exception):
    """A call that cannot be made: the breaker is open, the plugin cannot start, or it
    gave no answer. ``status`` is what an HTTP caller is answered (503)."""

    status = 503


@dataclass
class LaunchSpec:
    """What to start: the argv, from which folder, with which environment, and the
    folders the sandbox gives it (the data folder writable, the project readable)."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    listen_fd: int
    data: Path
    project: Path
    api_port: int | None
    log: Path
    memory_mb: int | None = None
    """The manifest's ``resources.memory``, in MiB (None: the sandbox's default)."""
    gate: Any = None
    """The manifest's ``gate`` (``gate.py``)."""
    audit: Path | None = None
    """Where the gate's decisions are logged."""


class Process(Protocol):
    pid: int

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...

    def terminate(self) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...


Spawner = Callable[[LaunchSpec], Awaitable[Process]]


@dataclass
class InstancePaths:
    """Where an instance keeps what it needs: ``run`` (the secret and token files,
    not the plugin's to write), ``data`` (the plugin's own) and its log."""

    run: Path
    data: Path

    @property
    def log(self) -> Path:
        return self.run / "plugin.log"


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner may read (the secret, the token)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@dataclass
class PluginInstance(Stateful):
    """The plugin ``manifest`` running for one project.

    Args:
        manifest: The installed plugin's manifest.
        folder: The installed plugin's folder (its ``run.command`` starts there).
        project: The project folder (readable by the plugin).
        paths: The instance's own folders.
        api_url: The Plugin API's base URL (the host's loopback server).
        token: The project-scoped token its calls to the Plugin API carry.
        spawn: Starts the process (the sandbox, or a plain one the person allowed).
        clock: Monotonic seconds, for the breaker and idle time.
    """

    manifest: PluginManifest
    folder: Path
    project: Path
    paths: InstancePaths
    api_url: str
    token: str
    spawn: Spawner
    clock: Callable[[], float] = time.monotonic
    on_change: Callable[[PluginInstance, ProcessState, ProcessState, str], None] | None = None
    process: Process | None = None
    port: int = 0
    secret: str = ""
    last_used: float = 0.0
    note: str = ""
    breaker: Breaker = field(init=False)
    _lock: asyncio.Lock = field(init=False)

    def __post_init__(self) -> None:
        self.state = ProcessState.STOPPED
        self.breaker = Breaker(self.clock)
        self._lock = asyncio.Lock()

    def on_state_change(self, old: ProcessState, new: ProcessState, reason: str) -> None:
        self.note = reason
        if self.on_change is not None:
            self.on_change(self, old, new, reason)

    def _connect(self) -> Any:
        """How to reach the process: its sandbox's dialer, else TCP to the port."""
        return getattr(self.process, "connect", None)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _environment(self) -> dict[str, str]:
        run, data = self.paths.run, self.paths.data
        values = {"PORT": str(self.port), "SECRET_FILE": str(run / "secret"),
                  "TOKEN_FILE": str(run / "token"), "API_URL": self.api_url}
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(data),
               "LISTEN_FDS": "1", "WORKBENCH_PLUGIN_LISTEN_FD": str(LISTEN_FD),
               "WORKBENCH_PLUGIN_DATA": str(data), "WORKBENCH_PLUGIN_ID": self.manifest.id,
               "WORKBENCH_PROJECT_DIR": str(self.project), "PYTHONDONTWRITEBYTECODE": "1"}
        for name, value in values.items():
            env[f"LOOP_{'PLUGIN_' if name != 'API_URL' else ''}{name}"] = value
            env[f"WORKBENCH_{'PLUGIN_' if name != 'API_URL' else ''}{name}"] = value
        return env

    async def ensure_started(self) -> None:
        """Start the process unless it runs; wait until ``/healthz`` answers.

        Raises:
            PluginUnavailable: It could not start or did not answer in time.
        """
        async with self._lock:
            if self.state is ProcessState.RUNNING and self.alive:
                return
            if self.state is ProcessState.RUNNING:
                self.change_state(ProcessState.EXITED, self._ended())
            await self._start()

    def _ended(self) -> str:
        code = self.process.poll() if self.process is not None else None
        if code is None:
            return "stopped"
        return f"exited with status {code}" if code >= 0 else f"killed by signal {-code}"

    async def _start(self) -> None:
        self.change_state(ProcessState.STARTING, "starting")
        self.paths.data.mkdir(parents=True, exist_ok=True)
        self.paths.run.mkdir(parents=True, exist_ok=True)
        os.chmod(self.paths.run, 0o700)
        self.secret = secrets.token_urlsafe(32)
        write_private(self.paths.run / "secret", self.secret)
        write_private(self.paths.run / "token", self.token)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.port))
        except OSError:
            listener.bind(("127.0.0.1", 0))  # the port it had is taken: find another
        listener.listen(64)
        self.port = listener.getsockname()[1]
        assert self.manifest.run_command is not None
        spec = LaunchSpec(argv=list(self.manifest.run_command), cwd=self.folder,
                          env=self._environment(), listen_fd=listener.fileno(),
                          data=self.paths.data, project=self.project,
                          api_port=_port_of(self.api_url), log=self.paths.log,
                          memory_mb=memory_mb(self.manifest.raw.get("resources")),
                          gate=self.manifest.raw.get("gate"),
                          audit=self.paths.run.parent.parent / "audit" / self.paths.run.name)
        try:
            self.process = await self.spawn(spec)
        except OSError as exc:
            self._back_off(f"could not start: {exc.strerror or exc}")
        except Exception as exc:  # noqa: BLE001 — a launcher's refusal, named
            self._back_off(f"could not start: {exc}")
        finally:
            listener.close()
        deadline = self.clock() + START_TIMEOUT_S
        started = time.monotonic()
        while True:
            if not self.alive:
                self._back_off(f"{self._ended()} before it answered /healthz (see {self.paths.log})")
            try:
                answer = await request("127.0.0.1", self.port, "GET", "/healthz", token=self.secret, connect=self._connect(),
                                       timeout=HEALTH_TIMEOUT_S, max_bytes=64 * 1024)
            except (NoAnswer, BadAnswer):
                answer = None
            if answer is not None and answer.status == 200:
                break
            if self.clock() > deadline or time.monotonic() - started > START_TIMEOUT_S:
                self._kill()
                self._back_off(f"did not answer /healthz within {START_TIMEOUT_S:g} s")
            await asyncio.sleep(0.02)
        self.breaker.reset()
        self.last_used = self.clock()
        self.change_state(ProcessState.RUNNING, f"running, pid {self.process.pid if self.process else '?'}")

    def _back_off(self, reason: str) -> None:
        self._kill()
        self.change_state(ProcessState.BACKOFF, reason)
        self.change_state(ProcessState.STOPPED, reason)
        raise PluginUnavailable(f"plugin {self.manifest.id} {reason}")

    def _kill(self) -> None:
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, 9)
            except (ProcessLookupError, PermissionError):
                process.kill()
        try:
            process.wait(timeout=5)
        except Exception:  # noqa: BLE001 — a process that will not be reaped is left to init
            pass

    async def call(self, method: str, path: str, body: Any = None, *, timeout: float,
                   max_bytes: int) -> Answer:
        """One call to the plugin, started if need be, through the breaker.

        Raises:
            PluginUnavailable: The breaker is open, the plugin cannot start, or it left
                the call unanswered (the breaker counts it).
            BadAnswer: It answered with something this client refuses (too large...).
        """
        if not self.breaker.allow():
            raise PluginUnavailable(
                f"plugin {self.manifest.id} left {self.breaker.threshold} calls in a row "
                f"unanswered; calls resume in {self.breaker.retry_in():.0f} s")
        self.last_used = self.clock()
        try:
            await self.ensure_started()
            try:
                answer = await request("127.0.0.1", self.port, method, path, token=self.secret, connect=self._connect(),
                                       body=body, timeout=timeout, max_bytes=max_bytes)
            except NoAnswer as exc:
                # Refused, so never delivered: a process that just ended (a crash in the
                # call before) is started again and the request sent once more.
                if exc.delivered or not await self._ended_now():
                    raise
                await self.ensure_started()
                answer = await request("127.0.0.1", self.port, method, path, token=self.secret, connect=self._connect(),
                                       body=body, timeout=timeout, max_bytes=max_bytes)
        except PluginUnavailable:
            self.breaker.no_answer()
            raise
        except NoAnswer as exc:
            self.breaker.no_answer()
            # A connection cut off may be the process ending (a crash in this call): let
            # it end, so the next call starts it again rather than reach it dying.
            await self._ended_now(ENDING_WAIT_S)
            raise PluginUnavailable(f"plugin {self.manifest.id}: {exc}") from None
        except BadAnswer:
            self.breaker.answered()
            raise
        self.breaker.answered()
        self.last_used = self.clock()
        return answer

    async def _ended_now(self, wait_s: float = 5.0) -> bool:
        """Whether the process has ended, waiting for it up to ``wait_s`` (it was seen
        refusing connections: on its way out)."""
        process = self.process
        if process is None:
            return True
        try:
            await asyncio.to_thread(process.wait, wait_s)
        except Exception:  # noqa: BLE001 — still running: it refuses for another reason
            return False
        return True

    async def stop(self, reason: str = "stopped") -> None:
        """Stop the process (SIGTERM to its group, then SIGKILL after 5 s)."""
        async with self._lock:
            if self.state is not ProcessState.RUNNING:
                return
            self.change_state(ProcessState.STOPPING, reason)
            process = self.process
            if process is not None and process.poll() is None:
                try:
                    os.killpg(process.pid, 15)
                except (ProcessLookupError, PermissionError):
                    process.terminate()
                try:
                    await asyncio.to_thread(process.wait, 5)
                except Exception:  # noqa: BLE001 — past the grace period
                    self._kill()
            self.change_state(ProcessState.STOPPED, reason)

    def kill(self) -> None:
        """End the process at once, from outside any loop (the host closing)."""
        if self.process is not None and self.process.poll() is None:
            self._kill()
        (self.paths.run / "instance.json").unlink(missing_ok=True)

    def idle_for(self) -> float:
        return self.clock() - self.last_used


def memory_mb(resources: Any) -> int | None:
    """``resources.memory`` (``"128m"``, ``"1g"``, ``"65536k"``) in MiB, at least 16."""
    value = resources.get("memory") if isinstance(resources, dict) else None
    if not isinstance(value, str) or not value[:-1].isdigit() or value[-1:] not in ("k", "m", "g"):
        return None
    number = int(value[:-1])
    megabytes = {"k": number // 1024, "m": number, "g": number * 1024}[value[-1]]
    return max(16, megabytes)


def _port_of(url: str) -> int | None:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).port
    except ValueError:
        return None
