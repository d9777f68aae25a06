"""The host's side of one worker: start it, hand it its one call, serve its ctx, end it.

A worker is started (ahead of time when kept warm) with one tool's policy, and
reports ``worker/ready`` once its tool is imported inside the sandbox. ``call``
sends the arguments, answers the worker's ctx requests through a handler the
caller provides, and returns the result or raises ``ToolError``. Whatever happens,
the worker is killed afterwards: no process outlives its call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import select
import signal
import socket
import struct
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from workbench import ctx_spec
from workbench.errors import ToolError
from workbench.sandbox import protocol
from workbench.sandbox.client import Spawned, ZygoteClient
from workbench.sandbox.policy import Policy
from workbench.sandbox.proxy import Proxy
from workbench.sandbox.fds import recv_fds

log = logging.getLogger(__name__)

READY_TIMEOUT = 20.0
CANCEL_GRACE = 0.5
OUTPUT_TAIL = 2000
_KIND = re.compile(r"[a-z_]{1,40}")


class CtxHandler(Protocol):
    """What a worker's ctx reaches on the host."""

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """``ctx/progress``, ``ctx/log``, ``ctx/display``, ``ctx/reply.open`` and
        ``ctx/reply.piece``; raise ``ToolError`` to fail the call. Also ``net/event``
        from the host's own proxy (never from the worker): a request it refused or
        could not carry (``proxy.Event.to_json``)."""

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Every other ``ctx/…`` member; raise ``ToolError`` to refuse."""

    def output(self, text: str) -> None:
        """A piece of what the tool printed."""


class _Output(asyncio.Protocol):
    def __init__(self, sink: Callable[[bytes], None], closed: asyncio.Future) -> None:
        self.sink = sink
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        self.sink(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def describe_status(status: int | None) -> str:
    """A wait status in words."""
    if status is None:
        return "it was stopped"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {signal.SIGXCPU: " (CPU time limit)", signal.SIGKILL: " (killed)",
                signal.SIGSYS: " (forbidden system call)", signal.SIGXFSZ: " (file size limit)",
                signal.SIGSEGV: " (crashed; possibly its memory limit)"}.get(sig, "")
        return f"it was ended by {name}{hint}"
    return f"it exited with status {os.WEXITSTATUS(status)}"


class Worker:
    """One sandboxed worker process, from start to its single call."""

    def __init__(self, client: ZygoteClient, spawned: Spawned, policy: Policy) -> None:
        self.client = client
        self.spawned = spawned
        self.policy = policy
        self.proxy: Proxy | None = None
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.output_bytes = 0
        self.output_tail = b""
        self.overflowed = False
        self.handler: CtxHandler | None = None
        self.finished = False
        self._output_closed: asyncio.Future | None = None
        self._output_transport = None
        self._net_events: list[dict[str, Any]] = []

    @property
    def pid(self) -> int:
        return self.spawned.pid

    @classmethod
    async def start(cls, client: ZygoteClient, policy: Policy) -> Worker:
        """Spawn a worker for ``policy`` and wait until its tool is imported.

        Raises:
            ToolError: The worker could not start or its tool failed to import.
        """
        # The spawn runs in a thread, which a cancellation does not stop: the worker it
        # hands back after one is killed, not left running with its descriptors open.
        spawning = asyncio.ensure_future(client.spawn_async(policy))
        try:
            spawned = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            spawning.add_done_callback(partial(_kill_spawned, client, policy))
            raise
        worker = cls(client, spawned, policy)
        try:
            await worker._connect()
            await worker._await_ready()
        except BaseException:
            worker.kill()
            raise
        return worker

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        self._output_closed = loop.create_future()
        pipe = os.fdopen(self.spawned.output_fd, "rb", buffering=0)
        self._output_transport, _ = await loop.connect_read_pipe(
            lambda: _Output(self._on_output, self._output_closed), pipe)
        if self.policy.net:
            self.spawned.bridge.settimeout(READY_TIMEOUT)
            message, fds = await asyncio.to_thread(recv_fds, self.spawned.bridge, 1)
            self.spawned.bridge.settimeout(None)
            if not message or not message.get("proxy") or not fds:
                raise ToolError("tool", "the worker did not set up its network proxy")
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, fileno=fds[0])
            self.proxy = await Proxy.serve(listener, self.policy.net, self._net_event)
        self.spawned.bridge.setblocking(False)
        self.reader, self.writer = await asyncio.open_unix_connection(
            sock=self.spawned.bridge, limit=protocol.MAX_LINE)

    async def _await_ready(self) -> None:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a cancellation
        # that lands as the ready message arrives, and the call runs on unstoppable.
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                message = await self._next()
        except TimeoutError:
            raise ToolError("tool", f"the worker did not start within {READY_TIMEOUT:g} s") from None
        if message is None:
            raise ToolError("tool", f"the worker failed to start: {await self._ended()}")
        if message.get("method") != "worker/ready":
            raise ToolError("tool", "the worker broke the protocol before it was ready")
        params = message.get("params")
        problem = params.get("error") if isinstance(params, dict) else "a malformed ready message"
        if problem:
            raise ToolError("tool", str(problem) + self._tail())

    def _net_event(self, event) -> None:
        if self.handler is None:
            self._net_events.append(event.to_json())  # before the call: told when it starts
        else:
            self.handler.notify("net/event", event.to_json())

    def _net_note(self) -> str:
        """What the proxy last answered itself in this call, for a failed call's error:
        a client library often hides it (Deno's fetch says only "fetch failed")."""
        if self.proxy is None or not self.proxy.events:
            return ""
        return f" [{self.proxy.events[-1].message}]"

    def _on_output(self, data: bytes) -> None:
        self.output_bytes += len(data)
        self.output_tail = (self.output_tail + data)[-OUTPUT_TAIL:]
        if self.output_bytes > self.policy.limits.output_bytes:
            if not self.overflowed:
                self.overflowed = True
                self.kill()
            return
        if self.handler is not None:
            self.handler.output(data.decode("utf-8", errors="replace"))

    def _tail(self) -> str:
        text = self.output_tail.decode("utf-8", errors="replace").strip()
        return f"\n{text}" if text else ""

    async def _next(self) -> dict[str, Any] | None:
        """The worker's next message, checked (``protocol.decode``) and counted against
        the output bound; None once the worker has closed its end.

        Raises:
            ToolError: The message breaks the protocol (``tool``) or passes the bound
                (``output_too_large``); the caller ends the call and the worker.
        """
        assert self.reader is not None
        try:
            line = await self.reader.readline()
        except (ValueError, asyncio.LimitOverrunError):
            raise ToolError("output_too_large", "the worker sent a message larger than "
                            f"{protocol.MAX_LINE} bytes") from None
        except ConnectionError:
            return None
        if not line:
            return None
        self._count(len(line))
        try:
            return protocol.decode(line)
        except protocol.FrameError as exc:
            raise ToolError("tool", f"the worker broke the protocol: {exc}") from None

    def _count(self, size: int) -> None:
        """Everything a worker sends (messages and what it prints) counts against one bound."""
        self.output_bytes += size
        if self.output_bytes > self.policy.limits.output_bytes and not self.overflowed:
            self.overflowed = True
            self.kill()
        if self.overflowed:
            raise ToolError("output_too_large", self._overflow_message())

    def _overflow_message(self) -> str:
        limit = self.policy.limits.output_bytes
        return (f"the tool sent more than {limit} bytes in this call (its result, logs, progress, "
                "display bubbles, requests and what it printed count together); the limit is "
                f"{limit} (tools.max_output_bytes): it was stopped")

    async def _ended(self) -> str:
        status = await asyncio.to_thread(_read_status, self.spawned.status_fd)
        if self._output_closed is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await asyncio.shield(self._output_closed)
        return describe_status(status) + self._tail()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.writer is not None
        self.writer.write(protocol.encode(message))

    async def call(self, arguments: Any, chat: dict[str, Any], handler: CtxHandler) -> Any:
        """Run the one call; the worker is killed when it returns, raises or is cancelled."""
        self.handler = handler
        tasks: set[asyncio.Task] = set()
        try:
            for event in self._net_events:
                handler.notify("net/event", event)
            self._send(protocol.request(1, "tool/call", {"arguments": arguments, "chat": chat,
                                                        "ctx": ctx_spec.wire()}))
            while True:
                message = await self._next()
                if message is None:
                    if self.overflowed:
                        raise ToolError("output_too_large", self._overflow_message())
                    raise ToolError("tool", f"the tool ended without answering: {await self._ended()}")
                if message.get("id") == 1 and "method" not in message:
                    if "error" in message:
                        answered = _answered_error(message["error"])
                        raise ToolError(answered.kind, answered.message + self._net_note())
                    return message.get("result")
                method, params = message.get("method"), message.get("params", {})
                if not isinstance(method, str) or not isinstance(params, dict):
                    raise ToolError("tool", "the worker broke the protocol: a message needs a "
                                    "`method` text and `params` that are an object")
                if "id" in message:
                    if not isinstance(message["id"], int) or isinstance(message["id"], bool):
                        raise ToolError("tool", "the worker broke the protocol: a request's id "
                                        "must be an integer")
                    task = asyncio.ensure_future(self._serve_request(handler, message))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                elif method.startswith("ctx/"):
                    _notify(handler, method, params)
        except asyncio.CancelledError:
            await self._cancel()
            raise
        finally:
            for task in tasks:
                task.cancel()
            self.kill()

    async def _serve_request(self, handler: CtxHandler, message: dict[str, Any]) -> None:
        id_ = message["id"]
        try:
            value = await handler.request(message.get("method", ""), message.get("params") or {})
            self._send(protocol.result(id_, value))
        except ToolError as exc:
            self._send(protocol.error(id_, exc.kind, exc.message))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._send(protocol.error(id_, "tool", f"{type(exc).__name__}: {exc}"))

    async def _cancel(self) -> None:
        """Tell the tool, give it a moment to stop, then kill it anyway."""
        try:
            self._send(protocol.notification("tool/cancel", {}))
            async with asyncio.timeout(CANCEL_GRACE):
                await self._drain_until_end()
        except (TimeoutError, ConnectionError, ToolError):
            pass

    async def _drain_until_end(self) -> None:
        while await self._next() is not None:
            pass

    def kill(self) -> None:
        """Kill the worker and everything it started; close every descriptor."""
        if self.finished:
            return
        self.finished = True
        self.client.kill_soon(self.pid)
        closers = [self.writer.close if self.writer is not None else None,
                   self._output_transport.close if self._output_transport is not None else None,
                   self.proxy.close if self.proxy is not None else None]
        for close in closers:
            if close is not None:
                try:
                    close()
                except RuntimeError:  # the event loop is already closed
                    pass
        self.spawned.bridge.close()
        for fd in (self.spawned.status_fd,):
            try:
                os.close(fd)
            except OSError:
                pass


def _kill_spawned(client: ZygoteClient, policy: Policy, spawning: asyncio.Future) -> None:
    """Kill the worker a cancelled start was handed after all (if it was)."""
    if not spawning.cancelled() and spawning.exception() is None:
        spawned = spawning.result()
        Worker(client, spawned, policy).kill()
        os.close(spawned.output_fd)


def _notify(handler: CtxHandler, method: str, params: dict[str, Any]) -> None:
    """Hand a notification on; whatever it holds fails the call alone, never the host."""
    try:
        handler.notify(method, params)
    except ToolError:
        raise
    except Exception as exc:
        log.debug("a worker's %s could not be handled", method, exc_info=True)
        raise ToolError("tool", f"the worker's {method} could not be handled: "
                        f"{type(exc).__name__}: {exc}") from None


def _answered_error(error: Any) -> ToolError:
    """The ``ToolError`` of a worker's error answer, whatever shape it has."""
    if not isinstance(error, dict):
        return ToolError("tool", "the tool failed (its error answer is not an object)")
    data = error.get("data")
    kind = data.get("kind") if isinstance(data, dict) else None
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        kind = "tool"
    message = error.get("message")
    return ToolError(kind, message if isinstance(message, str) else "the tool failed")


def _read_status(fd: int, timeout: float = 2.0) -> int | None:
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return None
        data = os.read(fd, 4)
    except OSError:
        return None
    return struct.unpack("i", data)[0] if len(data) == 4 else None
