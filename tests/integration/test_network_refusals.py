"""Network refusals and failures as a person and a script meet them: extensions
installed with ``ext install``, called with ``workbench call``, whose requests the proxy
refuses or cannot carry; the tool reads why, the call's events carry it as a log line,
and ``grants explain`` lists the refusal — real processes, real sandboxed workers, a
real loopback server. Legitimate traffic to an explicitly granted loopback port still
goes through, for Python (urllib, httpx) and Deno (fetch) alike."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from pathlib import Path

import pytest

from commands import workbench

PY_CODE = '''
import urllib.error, urllib.request

def fetch(args, ctx):
    try:
        with urllib.request.urlopen(args["url"], timeout=30) as response:
            return {"status": response.status, "text": response.read().decode()}
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, "text": exc.read().decode()}

def fetch_httpx(args, ctx):
    import httpx
    response = httpx.get(args["url"], timeout=30)
    return {"status": response.status_code, "text": response.text}
'''

TS_CODE = '''
export async function fetchUrl(args: { url: string }) {
  const response = await fetch(args.url);
  return { status: response.status, text: await response.text() };
}
'''


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.hits += 1
        body = b"loopback page"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    httpd.hits = 0
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def install(tmp_path: Path, name: str, runtime: str, tools: dict[str, list[dict]]) -> None:
    folder = tmp_path / f"{name}-src"
    folder.mkdir()
    entry = "main.py" if runtime == "python" else "main.ts"
    (folder / entry).write_text(PY_CODE if runtime == "python" else TS_CODE)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    (folder / "loca.json").write_text(json.dumps({
        "name": name, "displayName": name, "description": "Fetches pages.", "entry": entry,
        "tools": [{"name": tool, "description": "Fetch a page.", "function": tool,
                   "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
                   "permissions": {"net": grants}} for tool, grants in tools.items()]}))
    installed = workbench("ext", "install", str(folder), "--yes")
    assert installed.returncode == 0, installed.stderr


def grant(host: str, *ports: int) -> list[dict]:
    return [{"host": host, "ports": list(ports), "reason": "The page it fetches."}]


def call(tool: str, url: str) -> tuple[dict, list[str]]:
    """The call's result, and its log lines (``--jsonl``)."""
    done = workbench("call", tool, "--args", json.dumps({"url": url}), "--grant-all", "--jsonl")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    [ended] = [e for e in events if e["type"] == "tool_call_ended"]
    assert ended["ok"], (ended, done.stderr)
    return ended["result"], [e["message"] for e in events if e["type"] == "tool_call_log"]


def test_refusals_and_failures_reach_the_tool_its_log_and_grants_explain(tmp_path, server):
    port = server.server_address[1]
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        closed_port = closed.getsockname()[1]
    install(tmp_path, "pyfetch", "python", {
        "fetch": grant("localhost", port) + grant("nowhere.invalid", 80) + grant("127.0.0.1", closed_port),
        "fetch_httpx": grant("127.0.0.1", port)})
    install(tmp_path, "tsfetch", "deno", {"fetchUrl": grant("localhost", port) + grant("127.0.0.1", port)})

    # A name that resolves to loopback: refused, with the rule.
    result, log = call("pyfetch.fetch", f"http://localhost:{port}/")
    assert result["status"] == 403 and "loopback" in result["text"] and "localhost" in result["text"]
    assert any(f"refused localhost:{port}" in line and "loopback" in line for line in log), log
    result, log = call("tsfetch.fetchUrl", f"http://localhost:{port}/")
    assert result["status"] == 403 and "loopback" in result["text"]
    assert any("loopback" in line for line in log), log
    # An unresolvable name and a refused connection: 502, naming them.
    result, log = call("pyfetch.fetch", "http://nowhere.invalid/")
    assert result["status"] == 502 and "cannot resolve nowhere.invalid" in result["text"]
    assert any("nowhere.invalid" in line for line in log), log
    result, log = call("pyfetch.fetch", f"http://127.0.0.1:{closed_port}/")
    assert result["status"] == 502 and "refused the connection" in result["text"]
    assert server.hits == 0

    # The loopback port granted by its address: reached, by urllib, httpx and fetch.
    assert call("pyfetch.fetch_httpx", f"http://127.0.0.1:{port}/")[0] == {"status": 200, "text": "loopback page"}
    assert call("tsfetch.fetchUrl", f"http://127.0.0.1:{port}/")[0] == {"status": 200, "text": "loopback page"}
    assert server.hits == 2

    explained = workbench("grants", "explain", "pyfetch.fetch")
    assert explained.returncode == 0, explained.stderr
    assert f"refused      net localhost:{port} (403" in explained.stdout
    assert "resolves only to internal addresses" in explained.stdout
    assert f"not granted  net localhost:{port}" in explained.stdout  # (granted for one call only)
    rows = json.loads(workbench("grants", "explain", "tsfetch.fetchUrl", "--json").stdout)
    [refusal] = [row for row in rows if row["state"] == "refused"]
    assert refusal["value"] == f"localhost:{port}" and refusal["status"] == 403
    assert "loopback" in refusal["reason"]


PROVIDER_CODE = '''
import urllib.error, urllib.request

def probe(request, ctx):
    url = request["messages"][-1]["content"]
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read().decode()
    except urllib.error.HTTPError as exc:
        return f"{exc.code}: {exc.read().decode()}"
'''


class Granting:
    """A front-end that grants every permission request for the session."""

    async def answer(self, request):
        return "session"


async def test_a_providers_refusals_are_explained_under_its_own_name(tmp_path, home, workdir, server):
    from workbench.core.host import Host
    from workbench.ext.manager import ExtensionManager
    from workbench.store import Store

    port = server.server_address[1]
    folder = tmp_path / "seeker"
    folder.mkdir()
    (folder / "main.py").write_text(PY_CODE + PROVIDER_CODE)
    (folder / "loca.json").write_text(json.dumps({
        "name": "seeker", "displayName": "Seeker", "description": "A model that fetches.",
        "entry": "main.py", "providers": [{"type": "model", "name": "probe", "function": "probe",
                                            "permissions": {"net": grant("localhost", port)}}]}))
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").install(
            str(folder), approve=lambda plan: True)
    async with Host.open(cwd=workdir, model="ext:seeker/probe") as host:
        host.answer_with(Granting())
        answer = await host.chats.send_prompt(f"http://localhost:{port}/")
        assert answer.text.startswith("403: localhost resolves only to internal addresses"), answer
        rows = host.grants.explain("model:seeker/probe")
        assert [row["state"] for row in rows] == ["granted", "refused"]
        assert rows[1]["value"] == f"localhost:{port}" and "loopback" in rows[1]["reason"]
    assert server.hits == 0
