"""The host's allowlisting HTTP proxy: the only way out of a worker's network namespace.

A worker with a ``net`` grant gets a private network namespace with loopback alone;
its proxy port there is a listening socket the host accepts on. Each connection asks
``CONNECT host:port`` (HTTPS and anything tunnelled) or sends an absolute-form HTTP
request; the proxy lets it through only when a grant names that host (or ``*``) and
that port. Names are resolved here, on the host, and a wildcard grant never reaches
loopback, link-local or private addresses — only a grant that names such a host
literally does.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from urllib.parse import urlsplit

from workbench.sandbox.policy import NetEndpoint

MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT = 15.0


def _allowed(endpoints: list[NetEndpoint], host: str, port: int) -> NetEndpoint | None:
    host = host.lower().strip("[]")
    for endpoint in endpoints:
        if port not in endpoint.ports:
            continue
        if endpoint.host == "*" or endpoint.host.lower() == host:
            return endpoint
    return None


def _internal(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_unspecified


async def _resolve(host: str, port: int, literal_grant: bool) -> list[tuple]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not literal_grant:
        infos = [info for info in infos if not _internal(info[4][0])]
    return infos


class Proxy:
    """Serves one worker's proxy socket until ``close``."""

    def __init__(self, endpoints: list[NetEndpoint]) -> None:
        self.endpoints = endpoints
        self.server: asyncio.AbstractServer | None = None
        self.refused: list[str] = []
        """``host:port`` targets the tool asked for and was refused."""
        self._tasks: set[asyncio.Task] = set()

    @classmethod
    async def serve(cls, listener: socket.socket, endpoints: list[NetEndpoint]) -> Proxy:
        """Accept on ``listener`` (the worker's proxy socket) until ``close``."""
        listener.setblocking(False)
        proxy = cls(endpoints)
        proxy.server = await asyncio.start_server(proxy._handle, sock=listener)
        return proxy

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self._tasks):
            task.cancel()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._proxy(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    async def _proxy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD:
            return await self._reply(writer, 431, "request head too large")
        line, _, rest = head.partition(b"\r\n")
        try:
            method, target, version = line.decode("latin-1").split(" ", 2)
        except ValueError:
            return await self._reply(writer, 400, "malformed request line")
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            forward = b""
        else:
            url = urlsplit(target)
            if url.scheme != "http" or not url.hostname:
                return await self._reply(writer, 400, "only absolute http:// URLs or CONNECT are proxied")
            host, port_text = url.hostname, str(url.port or 80)
            path = url.path or "/"
            if url.query:
                path += "?" + url.query
            forward = f"{method} {path} {version}\r\n".encode("latin-1") + rest
        try:
            port = int(port_text)
        except ValueError:
            return await self._reply(writer, 400, "no port in the target")
        endpoint = _allowed(self.endpoints, host, port)
        if endpoint is None:
            self.refused.append(f"{host}:{port}")
            return await self._reply(writer, 403, f"{host}:{port} is not granted to this tool")
        infos = await _resolve(host, port, literal_grant=endpoint.host != "*")
        if not infos:
            self.refused.append(f"{host}:{port}")
            return await self._reply(writer, 403, f"{host} resolves only to internal addresses")
        try:
            address = infos[0][4]
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(address[0], address[1]), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            return await self._reply(writer, 502, f"cannot reach {host}:{port}: {exc}")
        if forward:
            up_writer.write(forward)
        else:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, status: int, message: str) -> None:
        body = (message + "\n").encode()
        reason = {400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large",
                  502: "Bad Gateway"}.get(status, "Error")
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()
