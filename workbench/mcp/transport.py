"""Transports to a server: a stdio child process, or a streamable HTTP endpoint.

The stdio transport starts the server in a process group of its own, exchanges
newline-delimited JSON-RPC over its pipes, keeps the tail of what it writes on
stderr (the reason shown when it dies) and copies stderr to a log file. Stopping it
follows the MCP shutdown sequence — stdin closed, a short wait, then SIGTERM and
SIGKILL to the whole group — so nothing it started survives. ``mcp`` is imported
inside the functions, never at module import.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

STDOUT_LIMIT = 64 * 1024 * 1024
"""The longest message line a server may send."""
STDERR_TAIL = 4000
STOP_GRACE = 0.5
"""Seconds a server has to exit after its stdin closes, and again after SIGTERM."""

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
"""What an unsandboxed stdio server sees of the host's environment (as the SDK does),
besides its entry's own ``env``: never the host's API keys."""


def describe_exit(code: int | None) -> str:
    """A process's end in words, from its ``returncode``."""
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"it was ended by {name}"
    return f"it exited with status {code}"


class StdioProcess:
    """One stdio server process and the pumps between its pipes and the session.

    Args:
        argv: The program and its arguments.
        env: Its whole environment.
        cwd: The folder it starts in.
        log_path: Where its stderr is copied (appended).
        pass_fds: Descriptors it inherits (the sandbox launcher's spec and control).
        on_started: Called once the start was tried (the host then closes its copies
            of ``pass_fds``).
        on_note: Called with each line of stderr that starts with ``sandbox: ``: what
            the sandbox launcher reports while the server runs (a process of it went
            over the memory limit).
    """

    def __init__(self, argv: list[str], env: Mapping[str, str], cwd: str | None,
                 log_path: Path | None, pass_fds: tuple[int, ...] = (),
                 on_started: Callable[[], None] | None = None,
                 on_note: Callable[[str], None] | None = None) -> None:
        self.argv = argv
        self.env = dict(env)
        self.cwd = cwd
        self.log_path = log_path
        self.pass_fds = pass_fds
        self.on_started = on_started
        self.on_note = on_note
        self.process: asyncio.subprocess.Process | None = None
        self.exited = asyncio.Event()
        self.stderr_tail = b""
        self._tasks: list[asyncio.Task] = []
        self._log: Any = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    def exit_reason(self) -> str:
        """How it ended, with the last lines it wrote on stderr."""
        text = self.stderr_tail.decode("utf-8", "replace").strip()
        lines = text.splitlines()[-5:]
        return describe_exit(self.returncode) + (": " + " | ".join(lines) if lines else "")

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[tuple[Any, Any]]:
        """Start the process; yield the session's ``(read_stream, write_stream)``; stop it.

        Raises:
            OSError: The program could not be started.
        """
        import anyio
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "ab", buffering=0)  # noqa: SIM115 (closed in stop)
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self.env, cwd=self.cwd, limit=STDOUT_LIMIT,
                start_new_session=True, pass_fds=self.pass_fds)
        except BaseException:
            if self._log is not None:
                self._log.close()
                self._log = None
            raise
        finally:
            if self.on_started is not None:
                self.on_started()
        process = self.process
        read_send, read_recv = anyio.create_memory_object_stream[Any](16)
        write_send, write_recv = anyio.create_memory_object_stream[Any](16)

        async def stdout_pump() -> None:
            assert process.stdout is not None
            async with read_send:
                while True:
                    try:
                        line = await process.stdout.readline()
                    except (ValueError, asyncio.LimitOverrunError) as exc:
                        await read_send.send(ValueError(f"a message longer than {STDOUT_LIMIT} "
                                                        f"bytes: {exc}"))
                        return
                    if not line:
                        return
                    if not line.strip():
                        continue
                    try:
                        message = SessionMessage(types.jsonrpc_message_adapter.validate_json(line))
                    except ValueError:
                        shown = line.decode("utf-8", "replace").strip()
                        shown = shown if len(shown) <= 80 else shown[:77] + "..."
                        message = ValueError(f"{shown!r}, which is not a JSON-RPC message")
                    try:
                        await read_send.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return

        async def stdin_pump() -> None:
            assert process.stdin is not None
            async with write_recv:
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    try:
                        process.stdin.write(data.encode() + b"\n")
                        await process.stdin.drain()
                    except (ConnectionError, OSError):
                        return

        async def waiter() -> None:
            # Not ``process.wait()``: it also waits for the pipes to close, which a
            # descendant that inherited them can keep open after the server died.
            while process.returncode is None:
                await asyncio.sleep(0.02)
            self.exited.set()

        self._tasks = [asyncio.ensure_future(coro) for coro in
                       (stdout_pump(), stdin_pump(), self._read_stderr(process), waiter())]
        try:
            yield read_recv, write_send
        finally:
            write_send.close()
            read_recv.close()
            await asyncio.shield(self.stop())

    async def _read_stderr(self, process: asyncio.subprocess.Process) -> None:
        """Keep the tail of what the server writes on stderr, log it, and pass each
        ``sandbox: `` line (its sandbox's own note) to ``on_note``."""
        assert process.stderr is not None
        partial = b""
        while chunk := await process.stderr.read(65536):
            self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_TAIL:]
            if self.on_note is not None:
                *lines, partial = (partial + chunk).split(b"\n")
                partial = partial[-STDERR_TAIL:]
                for line in lines:
                    if line.startswith(b"sandbox: "):
                        self.on_note(line[len(b"sandbox: "):].decode("utf-8", "replace").strip())
            if self._log is not None:
                with contextlib.suppress(OSError):
                    self._log.write(chunk)

    async def stop(self) -> None:
        """Close stdin, give the server a moment, then end its whole process group."""
        process = self.process
        if process is None:
            return
        tasks, self._tasks = self._tasks, []
        try:
            if process.returncode is None and process.stdin is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    process.stdin.close()
                await self._wait(STOP_GRACE)
            if process.returncode is None:
                self._signal_group(signal.SIGTERM)
                await self._wait(STOP_GRACE)
            # Always: whatever it started is in its group, alive or not.
            self._signal_group(signal.SIGKILL)
            await self._wait(STOP_GRACE)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            # Also when the stop itself is cancelled: nothing of the server may
            # outlive it, and its pipes must not outlive the loop.
            self._signal_group(signal.SIGKILL)
            for task in tasks:
                task.cancel()
            self._close_transport(process)

    def _close_transport(self, process: asyncio.subprocess.Process) -> None:
        # A descendant that survived can hold a pipe open, which keeps the subprocess
        # transport open after its loop is gone; nothing public closes it (the SDK's
        # stdio client does the same).
        transport = getattr(process, "_transport", None)
        if transport is not None:
            with contextlib.suppress(PermissionError, RuntimeError):
                transport.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    def kill_now(self) -> None:
        """SIGKILL the group from any thread (the host is exiting)."""
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig: int) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def _wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.exited.wait()


@contextlib.asynccontextmanager
async def open_http(url: str, headers: Mapping[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    """Connect to a streamable HTTP server; yield the session's streams."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=dict(headers)) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            yield read, write


def server_environment(host_env: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of an unsandboxed stdio server: a few harmless host keys and its own."""
    env = {key: host_env[key] for key in INHERITED_ENV if key in host_env}
    env.update(extra)
    return env
