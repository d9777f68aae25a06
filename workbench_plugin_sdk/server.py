"""The server half of the contract: ``/healthz``, ``/tools/{name}``, ``/actions/{id}``,
``/runs/{run_id}/done``, ``/events``, ``/switches/{id}`` and the plugin's own ``/x/…``, every request checked for the
secret.

A tool function takes the input and the ``Call`` and returns a result
(``text_result``, ``structured_result`` or a dict of the wire shape); raising
``ToolFailed`` (or any exception) answers a result with ``is_error`` set. An action
answers 202 at once and runs in a thread of its own.
"""

from __future__ import annotations

import hmac
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 8 * 1024 * 1024


class ToolFailed(Exception):
    """Raised by a tool: its message is the error result the caller sees."""


@dataclass
class Call:
    """Who calls: the run and thread a call comes from, when it has them."""

    agent: str = ""
    thread_id: str = ""
    run_id: str = ""
    trigger: str = ""
    body: dict[str, Any] = field(default_factory=dict)


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "is_error": False}


def structured_result(value: dict[str, Any]) -> dict[str, Any]:
    """A result whose content is ``value``'s JSON and whose structured_content is ``value``."""
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structured_content": value,
            "is_error": False}


Tool = Callable[[dict[str, Any], Call], Any]
Action = Callable[[Call], Any]
XHandler = Callable[[str, str, bytes], tuple[int, Any]]


class Server:
    """Serves the contract.

    Args:
        secret: The secret file's contents; any request without it is refused (401).
        version: Reported by ``/healthz``.
        tools: By name.
        actions: By id.
        x: ``(method, path under /x, body) -> (status, JSON value)`` for the plugin's own routes.
    """

    def __init__(self, *, secret: str, version: str = "", tools: dict[str, Tool] | None = None,
                 actions: dict[str, Action] | None = None, x: XHandler | None = None,
                 runs_done: Callable[[str, dict[str, Any]], Any] | None = None,
                 events: Callable[[dict[str, Any]], Any] | None = None,
                 switches: dict[str, Callable[[bool, Call], Any]] | None = None) -> None:
        self.secret = secret
        self.switches = dict(switches or {})
        """By composer switch id: turned on or off in a chat (``call.thread_id``); answers
        ``{"on": bool, "title": str}`` (or None: as asked)."""
        self.events = events
        """Given each event (``{"type", "thread_id", "data"}``) while the workbench waits:
        hand long work to ``go``."""
        self.runs_done = runs_done
        """Told ``(run_id, {"status", "result", "agent", "session_id"})`` when an agent
        run this plugin started ends (``POST /runs/{run_id}/done``)."""
        self.version = version
        self.tools = dict(tools or {})
        self.actions = dict(actions or {})
        self.x = x
        self.httpd: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        """One request, as ``(status, JSON value)``: the routing the HTTP server uses,
        callable in-process too (the benchmark's baseline)."""
        given = headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.secret}".encode()):
            return 401, {"error": "a request without the plugin's secret"}
        if method == "GET" and path == "/healthz":
            return 200, {"ok": True, "version": self.version}
        if path.startswith("/x/") or path == "/x":
            if self.x is None:
                return 404, {"error": "no such route"}
            return self.x(method, path[2:] or "/", body)
        try:
            data = json.loads(body) if body else {}
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        if not isinstance(data, dict):
            return 400, {"error": "the body must be a JSON object"}
        call = Call(agent=str(data.get("agent", "")), thread_id=str(data.get("thread_id", "")),
                    run_id=str(data.get("run_id", "")), trigger=str(data.get("trigger", "")), body=data)
        if method == "POST" and path.startswith("/tools/"):
            tool = self.tools.get(path[len("/tools/"):])
            if tool is None:
                return 404, {"error": "no such tool"}
            try:
                result = tool(data.get("input") or {}, call)
            except Exception as exc:  # noqa: BLE001 — a tool's failure is its result
                return 200, {"content": [{"type": "text", "text": str(exc) or type(exc).__name__}],
                             "is_error": True}
            if isinstance(result, str):
                result = text_result(result)
            return 200, result
        if method == "POST" and path.startswith("/switches/"):
            switch = self.switches.get(path[len("/switches/"):])
            if switch is None:
                return 404, {"error": "no such switch"}
            on = data.get("on") is True
            try:
                answer = switch(on, call)
            except Exception as exc:  # noqa: BLE001 — the pill shows it
                return 500, {"error": str(exc) or type(exc).__name__}
            return 200, answer if isinstance(answer, dict) else {"on": on}
        if method == "POST" and path == "/events":
            if self.events is None:
                return 404, {"error": "this plugin takes no events"}
            self.events(data)
            return 200, {"ok": True}
        if method == "POST" and path.startswith("/runs/") and path.endswith("/done"):
            run_id = path[len("/runs/"):-len("/done")]
            if self.runs_done is not None:
                self.runs_done(run_id, data)
            return 200, {"ok": True}
        if method == "POST" and path.startswith("/actions/"):
            action = self.actions.get(path[len("/actions/"):])
            if action is None:
                return 404, {"error": "no such action"}
            self.go(lambda: action(call))
            return 202, {"accepted": True}
        return 404, {"error": "no such route"}

    def go(self, work: Callable[[], Any]) -> None:
        """Run background work (an action) in a thread of its own."""
        thread = threading.Thread(target=work, daemon=True)
        self._threads.append(thread)
        thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the background work started so far."""
        for thread in list(self._threads):
            thread.join(timeout)

    def serve(self, sock: socket.socket) -> None:
        """Serve on ``sock`` (listening) until ``close``."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = self.headers.get("Content-Length", "0")
                size = int(length) if length.isdigit() else 0
                if size > MAX_BODY:
                    self._send(413, {"error": "the body is too large"})
                    return
                body = self.rfile.read(size) if size else b""
                status, value = server.handle(self.command, self.path.split("?", 1)[0],
                                              {k.lower(): v for k, v in self.headers.items()}, body)
                self._send(status, value)

            def _send(self, status: int, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        httpd.socket.close()
        httpd.socket = sock
        httpd.daemon_threads = True
        self.httpd = httpd
        httpd.serve_forever(poll_interval=0.5)

    def close(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
