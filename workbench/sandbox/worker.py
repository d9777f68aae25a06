"""The Python side of a worker: wait for its one call, import the tool, run it, exit.

Runs inside the sandbox (``process.enter`` has been applied). No code of the tool
runs before its call arrives: a worker started ahead reports ready with only the
runtime loaded, and imports the entry module when the call comes. The tool's ``ctx``
forwards to the host over the worker socket; a member that needs an answer blocks
in a plain function and is awaitable in an ``async`` one.

A function that is a generator (plain or ``async``) streams its answer: the worker
sends ``ctx/reply.open`` once, then each item it yields as ``ctx/reply.piece``
``{"piece": ITEM}`` as soon as it is yielded, and answers the call with ``null`` when
the generator ends. Only a model provider's call may stream; the host refuses the
others (and bounds what is streamed).
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
import inspect
import io
import json
import os
import socket
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Any

from workbench import ctx_spec, jsontext
from workbench.sandbox import protocol


class RemoteError(Exception):
    """The host refused a ctx request; ``kind`` says why (``permission``, ``unavailable``…)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class PermissionDenied(RemoteError, PermissionError):
    """A capability the tool was not granted."""


class Channel:
    """The worker's end of the socket: send messages, route answers to waiting calls."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb", buffering=1 << 16)
        self.lock = threading.Lock()
        self.next_id = 100
        self.pending: dict[int, tuple[threading.Event, list]] = {}
        self.call: dict[str, Any] | None = None
        self.call_ready = threading.Event()
        self.aborted = threading.Event()
        self.closed = threading.Event()

    def send(self, message: dict[str, Any]) -> None:
        data = protocol.encode(message)
        with self.lock:
            self.sock.sendall(data)

    def notify(self, method: str, params: Any) -> None:
        self.send(protocol.notification(method, params))

    def ask(self, method: str, params: Any) -> Any:
        """Send a request and block until the host answers it."""
        with self.lock:
            self.next_id += 1
            id_ = self.next_id
        done, box = threading.Event(), []
        self.pending[id_] = (done, box)
        self.send(protocol.request(id_, method, params))
        while not done.wait(0.25):
            if self.closed.is_set():
                raise RemoteError("cancelled", "the host closed the connection")
        message = box[0]
        if "error" in message:
            kind = (message["error"].get("data") or {}).get("kind", "tool")
            cls = PermissionDenied if kind == "permission" else RemoteError
            raise cls(kind, message["error"].get("message", "refused"))
        return message.get("result")

    def pump(self) -> None:
        """Read messages until the socket closes (runs in a thread)."""
        try:
            for line in self.reader:
                message = json.loads(line)
                method = message.get("method")
                if method == "tool/call":
                    self.call = message
                    self.call_ready.set()
                elif method == "tool/cancel":
                    self.aborted.set()
                elif "id" in message and message["id"] in self.pending:
                    done, box = self.pending.pop(message["id"])
                    box.append(message)
                    done.set()
        finally:
            self.closed.set()
            self.aborted.set()
            self.call_ready.set()


def _answer(channel: Channel, method: str, params: Any) -> Any:
    """Block in a plain function; hand back an awaitable inside a running event loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return channel.ask(method, params)
    return loop.run_in_executor(None, channel.ask, method, params)


class Signal:
    """``ctx.signal``: trips when the call is cancelled."""

    def __init__(self, channel: Channel) -> None:
        self._aborted = channel.aborted

    @property
    def aborted(self) -> bool:
        return self._aborted.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._aborted.wait(timeout)

    def throw_if_aborted(self) -> None:
        if self.aborted:
            raise asyncio.CancelledError("the call was cancelled")


def _member(channel: Channel, spec: dict[str, Any]):
    """A ctx member built from the spec's wire form (``ctx_spec.wire``): its positional
    arguments are named by its parameters, what is left out takes its default."""
    method, fields = spec["method"], tuple(spec["params"])
    defaults = dict(spec.get("defaults") or {})

    def call(*args, **kwargs):
        params = {**defaults, **dict(zip(fields, args)), **kwargs}
        return _answer(channel, method, params)

    call.__name__ = spec["name"]
    return call


class _Group:
    """A ctx group (``ctx.memories``…): one attribute per member."""


class Display:
    """``ctx.display``: one-way bubbles, never awaited."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel

    def markdown(self, text: str) -> None:
        self._channel.notify("ctx/display", {"display": "markdown", "payload": {"text": str(text)}})

    def image(self, data_b64: str, mime: str, alt: str | None = None) -> None:
        self._channel.notify("ctx/display", {"display": "image",
                                             "payload": {"dataB64": data_b64, "mime": mime, "alt": alt}})

    def table(self, columns: list[str], rows: list[list[Any]]) -> None:
        self._channel.notify("ctx/display", {"display": "table", "payload": {
            "columns": [str(c) for c in columns], "rows": [[str(v) for v in row] for row in rows]}})

    def diff(self, before: str, after: str, title: str | None = None) -> None:
        self._channel.notify("ctx/display", {"display": "diff",
                                             "payload": {"before": before, "after": after, "title": title}})


class Context:
    """The ``ctx`` a Python tool receives: the Loca toolkit with Python names.

    ``channel`` is the worker's socket (``Channel``), or, for a tool the person let run
    without a sandbox, ``workbench.tools.inprocess.LocalChannel``: anything with
    ``notify``, a blocking ``ask`` and an ``aborted`` event. ``members`` are the
    members that ask the host, as ``ctx_spec.wire`` gives them (the host sends them
    with the call); this side declares none of its own."""

    def __init__(self, channel: Channel, chat: dict[str, Any],
                 members: Sequence[dict[str, Any]] | None = None) -> None:
        self._channel = channel
        self._chat = chat
        self.signal = Signal(channel)
        self.display = Display(channel)
        for spec in members if members is not None else ctx_spec.wire():
            owner = self
            if spec["group"]:
                owner = self.__dict__.get(spec["group"]) or _Group()
                setattr(self, spec["group"], owner)
            setattr(owner, spec["name"], _member(channel, spec))

    def set_progress(self, progress: float, label: str | None = None, description: str | None = None) -> None:
        self._channel.notify("ctx/progress", {"progress": float(progress), "label": label,
                                              "description": description})

    def log(self, level: str, message: str) -> None:
        if level not in ("debug", "info", "warn", "error"):
            raise ValueError(f"log level must be debug, info, warn or error, not {level!r}")
        self._channel.notify("ctx/log", {"level": level, "message": str(message)})

    def get_chat_context(self) -> dict[str, Any]:
        return dict(self._chat)


def _import(path: str):
    spec = importlib.util.spec_from_file_location("workbench_tool", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["workbench_tool"] = module
    spec.loader.exec_module(module)
    return module


def _run(function, arguments: dict[str, Any], ctx: Context, channel: Channel) -> Any:
    if inspect.iscoroutinefunction(function):
        return asyncio.run(function(arguments, ctx))
    value = function(arguments, ctx)
    if inspect.isgenerator(value):
        _stream(channel, value)
        return None
    if inspect.isasyncgen(value):
        asyncio.run(_stream_async(channel, value))
        return None
    if inspect.isawaitable(value):
        async def finish():
            return await value
        return asyncio.run(finish())
    return value


def _stream(channel: Channel, pieces) -> None:
    """Send each item a generator yields, as it is yielded."""
    channel.notify("ctx/reply.open", {})
    for piece in pieces:
        _send_piece(channel, piece)


async def _stream_async(channel: Channel, pieces) -> None:
    channel.notify("ctx/reply.open", {})
    async for piece in pieces:
        _send_piece(channel, piece)


def _send_piece(channel: Channel, piece: Any) -> None:
    if channel.aborted.is_set():
        raise asyncio.CancelledError("the call was cancelled")
    try:
        channel.notify("ctx/reply.piece", {"piece": piece})
    except (TypeError, ValueError) as bad:
        raise TypeError(f"a streamed piece is not JSON: {bad}") from None


def _outside(exc: BaseException, granted: tuple[str, ...]) -> bool:
    """A path the worker's private root does not hold (not found, or read-only there):
    what the tool met is its grants, and it is told so."""
    if not isinstance(exc, OSError) or exc.errno not in (errno.ENOENT, errno.EROFS):
        return False
    if not isinstance(exc.filename, (str, bytes)):
        return False
    path = os.path.abspath(os.fsdecode(exc.filename))
    return not any(path == g or path.startswith(g.rstrip("/") + "/") for g in granted)


def _failure(exc: BaseException, granted: tuple[str, ...] = ()) -> tuple[str, str]:
    if isinstance(exc, RemoteError):
        return exc.kind, str(exc)
    if _outside(exc, granted):
        return "permission", f"{exc} (not granted to this tool)"
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled", "the call was cancelled"
    if isinstance(exc, PermissionError):
        return "permission", f"{exc} (not granted to this tool)"
    if isinstance(exc, RecursionError):
        return "tool", "RecursionError: maximum recursion depth exceeded"
    if isinstance(exc, MemoryError):
        return "tool", "MemoryError: the tool ran out of its memory limit"
    return "tool", f"{type(exc).__name__}: {exc}"


def serve(sock: socket.socket, entry: str, function_name: str,
          python_path: list[str] | tuple[str, ...] = (), granted: tuple[str, ...] = ()) -> int:
    """Report ready, wait for the one call, import the tool, run it, answer, and return
    an exit code.

    ``python_path`` (the extension's installed requirements) goes first on ``sys.path``;
    ``granted`` are the paths the tool was granted (a failure on another path is a
    permission failure).
    """
    sys.dont_write_bytecode = True
    sys.path[:0] = [path for path in python_path if path not in sys.path]
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
    channel = Channel(sock)
    channel.notify("worker/ready", {})
    threading.Thread(target=channel.pump, daemon=True).start()
    channel.call_ready.wait()
    call = channel.call
    if call is None:
        return 0
    try:
        function = getattr(_import(entry), function_name)
    except BaseException as exc:  # a broken module must not kill the protocol
        channel.send(protocol.error(call["id"], "tool", "importing the tool failed: "
                                    f"{type(exc).__name__}: {exc}"))
        traceback.print_exc()
        return 1
    params = call.get("params") or {}
    ctx = Context(channel, params.get("chat") or {}, params.get("ctx"))
    try:
        value = _run(function, params.get("arguments") or {}, ctx, channel)
    except BaseException as exc:
        kind, message = _failure(exc, granted)
        if kind == "tool":
            traceback.print_exc()
        channel.send(protocol.error(call["id"], kind, message))
        return 0
    found = jsontext.encodable(value)  # NaN, Infinity, a lone surrogate: named as the host names them
    if found is not None:
        channel.send(protocol.error(call["id"], "tool", f"the result is not JSON: {found[0]}: {found[1]}"))
        return 0
    try:
        answer = protocol.encode(protocol.result(call["id"], value))
    except (TypeError, ValueError) as bad:
        channel.send(protocol.error(call["id"], "tool", f"the result is not JSON: {bad}"))
        return 0
    with channel.lock:
        channel.sock.sendall(answer)
    return 0
