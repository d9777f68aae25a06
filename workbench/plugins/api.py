"""The host's side of the Plugin API: ``$LOOP_API_URL/api/plugin/v1/…`` on loopback.

Each instance's calls carry its token (``Authorization: Bearer …``), which is held to
one plugin in one project: no route takes a project. An unknown token is answered 401;
a project that does not enable the plugin (now) 409 on every route; a route needing a
capability the owner did not approve 403. Heads and bodies are bounded, and a
connection that sends nothing is closed after ``IDLE_S``.

Routes so far: ``GET /channel`` (the project and the plugin's settings there),
``POST /notifications`` (``notifications``), ``POST /runs`` (``agent.readonly`` or
``agent.write``: an agent run, ``core/plugin_runs.py``), ``POST /cards``
(``ui.notification.card``) and ``PUT|DELETE /composer/switches/{id}``
(``ui.composer_switch``), the last two served by ``core/plugin_ui.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

PREFIX = "/api/plugin/v1"
MAX_HEAD = 16 * 1024
MAX_BODY = 1024 * 1024
IDLE_S = 30.0
ROUTES: dict[tuple[str, str], tuple[str, ...]] = {
    ("GET", "/channel"): (),
    ("POST", "/notifications"): ("notifications",),
    ("POST", "/runs"): ("agent.readonly", "agent.write"),
    ("POST", "/cards"): ("ui.notification.card",),
    ("PUT", "/composer/switches/{id}"): ("ui.composer_switch",),
    ("DELETE", "/composer/switches/{id}"): ("ui.composer_switch",),
}
"""Each route and the capabilities of which it needs one."""


@dataclass
class Caller:
    """Who a token belongs to, as the host knows it now."""

    plugin: str
    project: str
    approved: tuple[str, ...]
    enabled: Callable[[], bool]
    settings: Callable[[], dict[str, Any]]


@dataclass
class PluginApi:
    """Serves the Plugin API until ``close``.

    Args:
        callers: A token's caller, or None for a token the host did not give.
        on_notification: Called with ``(caller, body)`` for each notification posted.
    """

    callers: Callable[[str], Caller | None]
    on_notification: Callable[[Caller, dict[str, Any]], None] = lambda caller, body: None
    handlers: dict[tuple[str, str], Callable[[Caller, Any, str], Awaitable[tuple[int, Any]]]] = field(
        default_factory=dict)
    """The routes served by other parts (cards, switches), by ``ROUTES`` key: called with
    the caller, the body and the path's ``{id}``."""
    on_run: Callable[[Caller, Any], Awaitable[tuple[int, Any]]] | None = None
    """``POST /runs``: starts an agent run (``core/plugin_runs.py``); None where no host
    runs agents (a command that opened the plugins alone)."""
    server: asyncio.AbstractServer | None = None
    port: int = 0
    received: list[tuple[str, str, str]] = field(default_factory=list)
    """``(plugin, method, path)`` of every call answered, in order."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        if self.server is None:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEAD)
            self.port = self.server.sockets[0].getsockname()[1]

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(IDLE_S):
                status, value = await self._one(reader)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        data = json.dumps(value).encode()
        writer.write(f"HTTP/1.1 {status} {'OK' if status < 400 else 'Error'}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
        try:
            await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    async def _one(self, reader: asyncio.StreamReader) -> tuple[int, Any]:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return 400, {"error": "not an HTTP request"}
        method, target = parts[0], parts[1]
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        if target.startswith("http://"):  # through the sandbox's proxy, in absolute form
            target = "/" + target.split("/", 3)[-1] if target.count("/") >= 3 else "/"
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            return 413, {"error": f"a body must be at most {MAX_BODY} bytes"}
        body = await reader.readexactly(int(length)) if int(length) else b""
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        caller = self.callers(token) if token else None
        if caller is None:
            return 401, {"error": "a call without a token this workbench gave"}
        path = target.split("?", 1)[0]
        if not path.startswith(PREFIX + "/"):
            return 404, {"error": "no such route"}
        route = (method, path[len(PREFIX):])
        self.received.append((caller.plugin, method, route[1]))
        param = ""
        if route[1].startswith("/composer/switches/"):
            param = route[1].rsplit("/", 1)[-1]
            route = (method, "/composer/switches/{id}")
        if not caller.enabled():
            return 409, {"error": f"this project does not enable plugin {caller.plugin}"}
        if route not in ROUTES:
            return 404, {"error": "no such route"}
        needed = ROUTES[route]
        if needed and not set(needed) & set(caller.approved):
            return 403, {"error": f"needs the capability {' or '.join(needed)}, which the owner did not approve"}
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        if route == ("GET", "/channel"):
            return 200, {"plugin": caller.plugin, "project": caller.project, "settings": caller.settings()}
        if route == ("POST", "/notifications"):
            if not isinstance(payload, dict) or not isinstance(payload.get("title"), str):
                return 400, {"error": "a notification needs a title"}
            self.on_notification(caller, payload)
            return 202, {"accepted": True}
        handler = self.handlers.get(route)
        if handler is not None:
            return await handler(caller, payload, param)
        if route == ("POST", "/runs"):
            if self.on_run is None:
                return 503, {"error": "agent runs need a running workbench (a chat, the TUI or `workbench daemon`)"}
            return await self.on_run(caller, payload)
        return 501, {"error": f"{route[1]} is not served by this version of the workbench"}
