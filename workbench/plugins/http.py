"""A small HTTP/1.1 client for the loopback calls to a plugin: one connection per call,
the answer's head and body bounded, the time limit the caller's.

The standard library only (asyncio streams): a plugin's answer is outside data, so
it is read with limits rather than trusted to be well formed.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

MAX_HEAD = 16 * 1024


class NoAnswer(Exception):
    """The plugin refused the connection, or the time limit passed: counts against the
    breaker. ``delivered`` is False when the request never reached it (refused)."""

    def __init__(self, message: str, *, delivered: bool = True) -> None:
        super().__init__(message)
        self.delivered = delivered


class BadAnswer(Exception):
    """The plugin answered, but not with HTTP this client takes (too large, garbled)."""


@dataclass
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Connect = Callable[[], Awaitable[socket.socket]]
"""Makes a connected socket to the plugin (a sandbox's dialer)."""


async def request(host: str, port: int, method: str, path: str, *, token: str,
                  body: Any = None, timeout: float, max_bytes: int, connect: Connect | None = None) -> Answer:
    """Send one request with ``Authorization: Bearer TOKEN`` and read the answer, over
    a socket ``connect`` makes, else a TCP connection to ``host:port``.

    Raises:
        NoAnswer: No connection, or no whole answer within ``timeout`` seconds.
        BadAnswer: An answer past ``max_bytes``, or not HTTP/1.x.
    """
    data = b"" if body is None else json.dumps(body).encode()
    head = (f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            "Connection: close\r\n\r\n").encode()
    writer = None
    try:
        async with asyncio.timeout(timeout):
            try:
                if connect is not None:
                    reader, writer = await asyncio.open_connection(sock=await connect(), limit=MAX_HEAD)
                else:
                    reader, writer = await asyncio.open_connection(host, port, limit=MAX_HEAD)
            except OSError as exc:
                raise NoAnswer(f"connection refused ({exc.strerror or exc})", delivered=False) from None
            writer.write(head + data)
            await writer.drain()
            return await _read(reader, max_bytes)
    except TimeoutError:
        raise NoAnswer(f"no answer within {timeout:g} s") from None
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        raise NoAnswer(f"the connection was closed before an answer ({type(exc).__name__})") from None
    finally:
        if writer is not None:
            writer.close()


async def _read(reader: asyncio.StreamReader, max_bytes: int) -> Answer:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise BadAnswer(f"the answer's head is larger than {MAX_HEAD} bytes") from None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit() or len(parts[1]) != 3:
        raise BadAnswer("the answer is not HTTP/1.x")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length")
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _chunked(reader, max_bytes)
    elif length is not None:
        if not length.isdigit():
            raise BadAnswer("the answer's Content-Length is not a number")
        if int(length) > max_bytes:
            raise BadAnswer(f"the answer is {int(length)} bytes; at most {max_bytes}")
        body = await reader.readexactly(int(length))
    else:
        body = await reader.read(max_bytes + 1)
        if len(body) > max_bytes:
            raise BadAnswer(f"the answer is larger than {max_bytes} bytes")
    return Answer(int(parts[1]), body)


async def _chunked(reader: asyncio.StreamReader, max_bytes: int) -> bytes:
    body = bytearray()
    while True:
        size_line = (await reader.readline()).split(b";")[0].strip()
        try:
            size = int(size_line, 16)
        except ValueError:
            raise BadAnswer("a chunk's size is not a number") from None
        if size == 0:
            return bytes(body)
        if len(body) + size > max_bytes:
            raise BadAnswer(f"the answer is larger than {max_bytes} bytes")
        body += await reader.readexactly(size)
        await reader.readexactly(2)
