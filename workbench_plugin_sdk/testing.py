"""The test kit: a fake workbench for a plugin's own tests, and ``check``, which drives
a plugin through the whole contract (``docs/openapi/plugin-contract-v1.yaml``).

``FakeHost(manifest)`` serves the Plugin API from memory on loopback
(``docs/openapi/plugin-api-v1.yaml``), holding the plugin to its manifest: a route
whose capability the manifest does not ask for answers 403, an agent it does not
declare 404, a token other than ``token`` 401; it records what it gets (``calls``,
``notifications``, ``runs``, ``cards``, ``switches``). ``env()`` is the environment to
start the plugin with (the seed's names and ours).

``check(url, secret, manifest, host=...)`` calls, as the workbench would: ``/healthz``
(with the secret, its version; without it, 401), every action with each trigger, every
tool as an agent's and as a workflow's call (inputs made from its ``input_schema``
unless given), every composer switch on and off, every event it subscribes to, every
pane, and ``/runs/{id}/done`` for each run it started on the fake host. It returns the
problems it saw (empty when there are none) and keeps every answer in ``answers``.

The standard library only, so a plugin's tests need nothing else.
"""

from __future__ import annotations

import json
import secrets
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PREFIX = "/api/plugin/v1"
TRIGGERS = ("schedule", "workflow", "manual")
NEEDS = {("POST", "/notifications"): ("notifications",), ("POST", "/cards"): ("ui.notification.card",),
         ("POST", "/runs"): ("agent.readonly", "agent.write"),
         ("PUT", "/composer/switches"): ("ui.composer_switch",),
         ("DELETE", "/composer/switches"): ("ui.composer_switch",)}


@dataclass
class FakeHost:
    """The Plugin API from memory; see the module docstring.

    Args:
        manifest: The plugin's manifest (``read_manifest()``).
        settings: What ``GET /channel`` answers as the settings (the manifest's
            defaults, unless given).
        project: The project folder ``GET /channel`` names.
    """

    manifest: dict[str, Any]
    settings: dict[str, Any] | None = None
    project: str = "/project"
    token: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    calls: list[tuple[str, str, int]] = field(default_factory=list)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    cards: list[dict[str, Any]] = field(default_factory=list)
    switches: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start() it first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeHost:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if 0 < size <= 1 << 20 else b""
                status, value = fake.handle(self.command, self.path.split("?", 1)[0],
                                            self.headers.get("Authorization", ""), body)
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def env(self, folder: Path, port: int, secret: str) -> dict[str, str]:
        """The environment to start the plugin with, its files written in ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "secret").write_text(secret, encoding="utf-8")
        (folder / "token").write_text(self.token, encoding="utf-8")
        (folder / "data").mkdir(exist_ok=True)
        values = {"PLUGIN_PORT": str(port), "PLUGIN_SECRET_FILE": str(folder / "secret"),
                  "API_URL": self.url, "PLUGIN_TOKEN_FILE": str(folder / "token")}
        env = {f"{prefix}_{name}": value for name, value in values.items() for prefix in ("LOOP", "WORKBENCH")}
        env["WORKBENCH_PLUGIN_DATA"] = str(folder / "data")
        return env

    def handle(self, method: str, path: str, authorization: str, body: bytes) -> tuple[int, Any]:
        status, value = self._route(method, path, authorization, body)
        self.calls.append((method, path, status))
        return status, value

    def _route(self, method: str, path: str, authorization: str, body: bytes) -> tuple[int, Any]:
        if authorization != f"Bearer {self.token}":
            return 401, {"error": "a call without the plugin's token"}
        if not path.startswith(PREFIX + "/"):
            return 404, {"error": "no such route"}
        route = path[len(PREFIX):]
        key = (method, "/composer/switches" if route.startswith("/composer/switches/") else route)
        caps = set(self.manifest.get("capabilities") or [])
        needed = NEEDS.get(key, ())
        if needed and not set(needed) & caps:
            return 403, {"error": f"needs the capability {' or '.join(needed)}"}
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            return 400, {"error": "the body is not JSON"}
        if key == ("GET", "/channel"):
            defaults = {k: v["default"] for k, v in (self.manifest.get("settings") or {}).items() if "default" in v}
            return 200, {"plugin": self.manifest.get("id"), "project": self.project,
                         "settings": self.settings if self.settings is not None else defaults}
        if not isinstance(payload, dict):
            return 400, {"error": "the body must be a JSON object"}
        if key == ("POST", "/notifications"):
            if not isinstance(payload.get("title"), str):
                return 400, {"error": "a notification needs a title"}
            self.notifications.append(payload)
            return 202, {"accepted": True}
        if key == ("POST", "/runs"):
            agent = next((a for a in self.manifest.get("agents") or [] if a.get("id") == payload.get("agent")), None)
            if agent is None:
                return 404, {"error": f"no agent {payload.get('agent')!r}"}
            if not agent.get("read_only") and "agent.write" not in caps:
                return 403, {"error": "a writing agent needs agent.write"}
            if not isinstance(payload.get("prompt"), str) or not payload["prompt"]:
                return 400, {"error": "a run needs a prompt"}
            run_id = secrets.token_hex(8)
            self.runs.append({"run_id": run_id, **payload})
            return 202, {"run_id": run_id}
        if key == ("POST", "/cards"):
            if not isinstance(payload.get("title"), str) or not isinstance(payload.get("card"), dict) or \
                    payload["card"].get("type") != "AdaptiveCard":
                return 400, {"error": 'a card is {"title", "card": <AdaptiveCard>}'}
            self.cards.append(payload)
            return 201, {"id": len(self.cards)}
        if key[1] == "/composer/switches":
            switch = route.rsplit("/", 1)[-1]
            declared = [s.get("id") for s in (self.manifest.get("ui") or {}).get("composer_switches") or []]
            if switch not in declared:
                return 404, {"error": f"no composer switch {switch!r}"}
            self.switches.append({"method": method, "switch": switch, **payload})
            if method == "DELETE":
                return 200, {"reset": 1}
            return 200, {"on": bool(payload.get("on", False)), "state": payload.get("state", "idle")}
        return 404, {"error": "no such route"}


@dataclass
class Answer:
    method: str
    path: str
    status: int
    body: Any


@dataclass
class Report:
    """What ``check`` saw: the problems, and every answer."""

    problems: list[str] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)


def example_input(schema: dict[str, Any]) -> Any:
    """A value ``schema`` accepts, for a tool called without a given input."""
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {name: example_input(props[name]) for name in schema.get("required") or [] if name in props}
    if kind == "array":
        return []
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return True
    return "example"


def _call(url: str, secret: str | None, method: str, path: str, body: Any = None,
          timeout: float = 60.0) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            status, text = answer.status, answer.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode("utf-8", "replace")
    try:
        return status, json.loads(text) if text else None
    except ValueError:
        return status, text


def check(url: str, secret: str, manifest: dict[str, Any], *, host: FakeHost | None = None,
          inputs: dict[str, Any] | None = None, settle: Any = None) -> Report:
    """Drive the plugin at ``url`` through the contract; see the module docstring.

    Args:
        url: Where the plugin serves (``http://127.0.0.1:PORT``).
        secret: The secret it was started with.
        manifest: Its manifest.
        host: The fake host it calls (for the runs it started).
        inputs: A tool's input by its name, where one made from its schema will not do.
        settle: Called (no arguments) before the runs are ended: wait for background work.
    """
    report = Report()

    def call(method: str, path: str, body: Any = None, *, with_secret: str | None = secret) -> tuple[int, Any]:
        status, value = _call(url, with_secret, method, path, body)
        report.answers.append(Answer(method, path, status, value))
        return status, value

    def expect(what: str, got: int, *wanted: int) -> bool:
        if got not in wanted:
            report.problems.append(f"{what}: status {got}, not {' or '.join(map(str, wanted))}")
            return False
        return True

    status, health = call("GET", "/healthz")
    if expect("GET /healthz", status, 200) and isinstance(health, dict) and "version" in health \
            and health["version"] != manifest.get("version"):
        report.problems.append(f"GET /healthz: version {health['version']!r}, the manifest's is "
                               f"{manifest.get('version')!r}")
    for wrong in (None, secret + "x"):
        status, _ = _call(url, wrong, "GET", "/healthz")
        expect("GET /healthz without the secret", status, 401)
    for action in manifest.get("actions") or []:
        for trigger in TRIGGERS:
            status, _ = call("POST", f"/actions/{action['id']}", {"trigger": trigger, "task_id": "check"})
            expect(f"action {action['id']} ({trigger})", status, 202)
    _check_tools(call, expect, report, manifest, inputs or {})
    for switch in (manifest.get("ui") or {}).get("composer_switches") or []:
        for on in (True, False):
            status, answer = call("POST", f"/switches/{switch['id']}", {"on": on, "thread_id": "check-thread"})
            if expect(f"switch {switch['id']} {'on' if on else 'off'}", status, 200) and not (
                    isinstance(answer, dict) and isinstance(answer.get("on"), bool)):
                report.problems.append(f"switch {switch['id']}: the answer has no on (true or false)")
    for event in manifest.get("events") or []:
        status, _ = call("POST", "/events", {"type": event, "thread_id": "", "data": {}})
        expect(f"event {event}", status, 200)
    for panel in (manifest.get("ui") or {}).get("panels") or []:
        status, pane = call("GET", f"/x/panes/{panel['id']}")
        if expect(f"pane {panel['id']}", status, 200) and not (
                isinstance(pane, dict) and isinstance(pane.get("card"), dict)
                and pane["card"].get("type") == "AdaptiveCard"):
            report.problems.append(f"pane {panel['id']}: the answer is not {{\"card\": <AdaptiveCard>}}")
    if settle is not None:
        settle()
    for run in host.runs if host is not None else []:
        status, _ = call("POST", f"/runs/{run['run_id']}/done", {"run_id": run["run_id"], "agent": run["agent"],
                                                                  "status": "done", "result": "checked",
                                                                  "session_id": ""})
        expect(f"/runs/{run['run_id']}/done", status, 200)
    return report


def _check_tools(call: Any, expect: Any, report: Report, manifest: dict[str, Any], inputs: dict[str, Any]) -> None:
    """Every tool as an agent's and as a workflow's call."""
    agents = {t: a["id"] for a in manifest.get("agents") or [] for t in a.get("tools") or []}
    for tool in manifest.get("tools") or []:
        given = inputs.get(tool["name"], example_input(tool.get("input_schema") or {}))
        for agent, thread in ((agents.get(tool["name"], ""), "check-thread"), ("", "")):
            status, result = call("POST", f"/tools/{tool['name']}", {"input": given, "agent": agent, "thread_id": thread})
            what = f"tool {tool['name']} ({'agent' if agent else 'workflow'})"
            if not expect(what, status, 200):
                continue
            if not isinstance(result, dict) or not isinstance(result.get("content"), list):
                report.problems.append(f"{what}: the answer is not a result (content, structured_content, is_error)")
                continue
            schema = tool.get("output_schema")
            if schema is not None and not result.get("is_error"):
                problem = _schema_problem(schema, result.get("structured_content"))
                if problem:
                    report.problems.append(f"{what}: structured_content does not match output_schema: {problem}")


def _schema_problem(schema: dict[str, Any], value: Any) -> str:
    try:
        from jsonschema import Draft202012Validator
    except ImportError:  # the standard library only: the required fields, at least
        if not isinstance(value, dict):
            return "not an object"
        missing = [k for k in schema.get("required") or [] if k not in value]
        return f"missing {', '.join(missing)}" if missing else ""
    errors = sorted(Draft202012Validator(schema).iter_errors(value), key=str)
    return errors[0].message[:200] if errors else ""
