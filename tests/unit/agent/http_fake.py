"""A scripted HTTP server on 127.0.0.1 for the provider tests.

Each test says, per request, what goes back: the status, the headers, and the body
as pieces written one at a time (so a stream can be cut at any byte), pauses, and
where the connection is dropped. The server records every request it gets.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

DROP = object()
"""A piece that aborts the connection there, mid-body."""


@dataclass
class Reply:
    """What the server sends back to one request.

    Attributes:
        pieces: Bytes written one write at a time, floats (seconds to pause), ``DROP``.
        chunked: Send ``Transfer-Encoding: chunked`` (else the body ends when the
            connection closes, with no length).
    """

    status: int = 200
    pieces: list[Any] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    chunked: bool = True


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class FakeServer:
    """Answers requests with the queued ``Reply``s in order (the last one repeats)."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Request] = []
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> FakeServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append(Request(method, path, headers, body))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        status_line = f"HTTP/1.1 {reply.status} X\r\n"
        head_out = {"Content-Type": "text/event-stream", "Connection": "close", **reply.headers}
        if reply.chunked:
            head_out["Transfer-Encoding"] = "chunked"
        writer.write((status_line + "".join(f"{k}: {v}\r\n" for k, v in head_out.items())
                      + "\r\n").encode("latin-1"))
        await writer.drain()
        for piece in reply.pieces:
            if piece is DROP:
                writer.transport.abort()
                return
            if isinstance(piece, (int, float)):
                await asyncio.sleep(piece)
                continue
            data = piece.encode("utf-8") if isinstance(piece, str) else piece
            if reply.chunked:
                data = f"{len(data):x}\r\n".encode() + data + b"\r\n"
            writer.write(data)
            await writer.drain()
            await asyncio.sleep(0.001)  # let each piece go out on its own
        if reply.chunked:
            writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()


def sse(*events: Any, done: bool = True) -> str:
    """Server-sent events: each dict becomes ``data: JSON``; a str is sent as it is."""
    out = "".join(e if isinstance(e, str) else f"data: {json.dumps(e)}\n\n" for e in events)
    return out + ("data: [DONE]\n\n" if done else "")


def every_byte(text: str) -> list[bytes]:
    """The text's UTF-8 bytes, one piece per byte."""
    data = text.encode("utf-8")
    return [data[i:i + 1] for i in range(len(data))]


async def collect(stream) -> list:
    return [chunk async for chunk in stream]
