"""A plugin's static web bundle, served on loopback for a person who opens a panel in a
browser, under the seed's content security policy, with the seed's bridge.

``WebPanels.url(plugin, panel)`` starts (once) a server on ``127.0.0.1`` and gives the
panel's link, under a random token of this server (the "signed link": without it every
path is 404). The link's page is the host page (ours): it frames the panel's
``index.html`` in a sandboxed frame and carries the bridge: on load it posts
``{"type": "loop-plugin:init"}`` to the frame with a ``MessagePort``, and relays the
JSON-RPC 2.0 calls that come on it to this server (``POST .../bridge``, over the local
socket), which answers ``api.request`` (the plugin's ``/x`` routes), ``settings.get``
and ``context.get``. The bundle's files are served with:

- ``Content-Security-Policy: sandbox allow-scripts`` (an opaque origin: no cookies,
  storage or access to the host page) and ``default-src 'none'``; scripts, styles,
  images, fonts and fetches from the bundle itself (``'self'``), plus ``data:``/``blob:``
  for images, fonts and media; no inline script, no eval, no frames, no form submission.

A path outside the panel's ``ui/`` folder, a link (there are none: install refuses
them), a method other than GET (and the bridge's POST) is refused.
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

CSP = ("sandbox allow-scripts; default-src 'none'; script-src 'self'; style-src 'self'; "
       "img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self'; "
       "frame-src 'none'; form-action 'none'; base-uri 'none'")
HOST_CSP = ("default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; frame-src 'self'; "
            "connect-src 'self'; form-action 'none'; base-uri 'none'")
MAX_BODY = 1024 * 1024
MAX_HEAD = 16 * 1024

HOST_JS = r"""
const frame = document.getElementById("panel");
const channel = new MessageChannel();
frame.addEventListener("load", () => {
  frame.contentWindow.postMessage({type: "loop-plugin:init"}, "*", [channel.port2]);
});
channel.port1.onmessage = async (event) => {
  const call = event.data || {};
  let answer;
  try {
    const response = await fetch("bridge", {method: "POST", headers: {"Content-Type": "application/json"},
                                            body: JSON.stringify(call)});
    answer = await response.json();
  } catch (error) {
    answer = {jsonrpc: "2.0", id: call.id, error: {code: -32000, message: String(error)}};
  }
  if (call.id !== undefined) channel.port1.postMessage(answer);
};
"""


def host_page(title: str, entry: str) -> str:
    from html import escape

    return ("<!doctype html><meta charset=utf-8><title>" + escape(title) + "</title>"
            "<style>html,body,iframe{margin:0;border:0;width:100%;height:100%}</style>"
            f"<iframe id=panel sandbox=allow-scripts src=\"{escape(entry)}\"></iframe>"
            "<script src=host.js></script>")


class WebPanels:
    """Args:
        folder_of: The installed code folder of a plugin (None: not installed).
        panels: A plugin's panels here (``id`` → ``entry``), as ``ui.panels`` declares them.
        bridge: Answers one bridge call: ``(plugin, panel, method, params) -> result``
            (raising ``ValueError`` for an error the page is told).
    """

    def __init__(self, *, folder_of: Callable[[str], Path | None], panels: Callable[[str], dict[str, str]],
                 bridge: Callable[[str, str, str, Any], Awaitable[Any]]) -> None:
        self.folder_of = folder_of
        self.panels = panels
        self.bridge = bridge
        self.token = secrets.token_urlsafe(24)
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    async def url(self, plugin: str, panel: str) -> str:
        """The panel's link (the server started on first use).

        Raises:
            ValueError: The plugin has no such panel here.
        """
        if panel not in self.panels(plugin):
            raise ValueError(f"plugin {plugin[:40]} has no panel {panel[:40]!r} here")
        if self.server is None:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEAD)
            self.port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{self.port}/{self.token}/{plugin}/{panel}/"

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(30):
                status, headers, body = await self._one(reader)
        except (TimeoutError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        head = f"HTTP/1.1 {status} {'OK' if status < 400 else 'Error'}\r\n"
        for name, value in {**headers, "Content-Length": str(len(body)), "Connection": "close",
                            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}.items():
            head += f"{name}: {value}\r\n"
        writer.write(head.encode("latin-1") + b"\r\n" + body)
        try:
            await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    async def _one(self, reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return 400, {}, b""
        method, target = parts[0], parts[1].split("?", 1)[0]
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:]) if k}
        segments = [unquote(s) for s in target.split("/")[1:]]
        if len(segments) < 4 or segments[0] != self.token or segments[2] not in self.panels(segments[1]):
            return 404, {}, b"not found"
        plugin, panel, rest = segments[1], segments[2], segments[3:]
        if method == "POST" and rest == ["bridge"]:
            length = headers.get("content-length", "0")
            if not length.isdigit() or int(length) > MAX_BODY:
                return 413, {}, b""
            return await self._bridge(plugin, panel, await reader.readexactly(int(length)))
        if method != "GET":
            return 405, {}, b""
        entry = self.panels(plugin)[panel]
        if rest == [""]:
            page = host_page(f"{plugin} {panel}", "ui/" + entry.removeprefix("ui/"))
            return 200, {"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": HOST_CSP}, page.encode()
        if rest == ["host.js"]:
            return 200, {"Content-Type": "text/javascript", "Content-Security-Policy": HOST_CSP}, HOST_JS.encode()
        return self._file(plugin, rest)

    def _file(self, plugin: str, rest: list[str]) -> tuple[int, dict[str, str], bytes]:
        folder = self.folder_of(plugin)
        if folder is None or not rest or rest[0] != "ui" or any(p in ("", ".", "..") or "\\" in p for p in rest[1:]):
            return 404, {}, b"not found"
        root = (folder / "ui").resolve()
        path = root.joinpath(*rest[1:])
        try:
            resolved = path.resolve(strict=True)
        except OSError:
            return 404, {}, b"not found"
        if root not in resolved.parents or path.is_symlink() or not resolved.is_file():
            return 404, {}, b"not found"
        kind = mimetypes.guess_type(resolved.name)[0] or "application/octet-stream"
        return 200, {"Content-Type": kind, "Content-Security-Policy": CSP}, resolved.read_bytes()

    async def _bridge(self, plugin: str, panel: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            call = json.loads(body)
        except ValueError:
            call = None
        if not isinstance(call, dict) or not isinstance(call.get("method"), str):
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not a call"}}
        else:
            try:
                result = await self.bridge(plugin, panel, call["method"], call.get("params"))
                answer = {"jsonrpc": "2.0", "id": call.get("id"), "result": result}
            except ValueError as exc:
                answer = {"jsonrpc": "2.0", "id": call.get("id"), "error": {"code": -32000, "message": str(exc)}}
        return 200, {"Content-Type": "application/json", "Content-Security-Policy": HOST_CSP}, json.dumps(answer).encode()
