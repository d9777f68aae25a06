"""Tools that try to get past the host's allowlisting proxy — and fail, readably.

Each tool gets a ``net`` grant and then asks the proxy for something the grant does
not cover: an internal address behind a name, an internal address through a wildcard,
IPv6 literals, a Host header that differs from the target, a port it was not granted,
a head that never ends, a flood of connections. Every attempt must be refused with a
status and a reason the tool reads (never an empty reply), the reason must appear in
the call's log and in ``grants explain``, the server behind must see nothing, and the
host must stay healthy. Names are resolved through the proxy's resolver hook where a
test needs a name to mean a chosen address (there is no DNS here); the system
resolver answers the others.
"""

from __future__ import annotations

import http.server
import os
import socket
import threading

import pytest

from workbench.events import ToolCallLog
from workbench.sandbox import proxy as proxy_module

pytestmark = pytest.mark.security

PY_CODE = r'''
import select, socket, time, urllib.request

PROXY = ("127.0.0.1", 3128)

def fetch(args, ctx):
    with urllib.request.urlopen(args["url"], timeout=30) as response:
        return f"{response.status} {response.read().decode()}"

def fetch_httpx(args, ctx):
    import httpx
    response = httpx.get(args["url"], timeout=30)
    return f"{response.status_code} {response.reason_phrase} | {response.text}"

def _read_all(sock):
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data.decode("latin-1")

def raw(args, ctx):
    """Send ``head`` to the proxy as it is and return the whole reply."""
    sock = socket.create_connection(PROXY, timeout=60)
    sock.sendall(args["head"].encode("latin-1"))
    return _read_all(sock)

def drip(args, ctx):
    """Slowloris: a head that never ends, one byte at a time, until the proxy answers."""
    sock = socket.create_connection(PROXY, timeout=60)
    sock.sendall(args["start"].encode())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], 0.05)
        if readable:
            return _read_all(sock)
        try:
            sock.sendall(b"a")
        except OSError:
            return _read_all(sock)
    return "the proxy never answered"

def flood(args, ctx):
    """Hold ``hold`` connections open with unfinished heads, then ask on ``extra`` more."""
    held = []
    for _ in range(args["hold"]):
        sock = socket.create_connection(PROXY, timeout=60)
        sock.sendall(b"GET http://127.0.0.1/ HTTP/1.1\r\n")
        held.append(sock)
    replies = []
    for _ in range(args["extra"]):
        sock = socket.create_connection(PROXY, timeout=60)
        sock.sendall(args["head"].encode())
        replies.append(_read_all(sock))
        sock.close()
    for sock in held:
        sock.close()
    return replies

def tunnel(args, ctx):
    """CONNECT, then send ``send`` and read until the proxy closes the tunnel."""
    sock = socket.create_connection(PROXY, timeout=60)
    sock.sendall(args["head"].encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += sock.recv(1)
    sock.sendall(args["send"].encode())
    return reply.decode() + _read_all(sock)

def many(args, ctx):
    """``count`` requests one after another; the status line of each."""
    lines = []
    for _ in range(args["count"]):
        sock = socket.create_connection(PROXY, timeout=60)
        sock.sendall(args["head"].encode())
        lines.append(_read_all(sock).split("\r\n", 1)[0])
        sock.close()
    return lines
'''

DENO_CODE = r'''
export async function fetchUrl(args: { url: string }) {
  const response = await fetch(args.url);
  return `${response.status} ${response.statusText} | ${await response.text()}`;
}
'''

PY_TOOLS = ("fetch", "fetch_httpx", "raw", "drip", "flood", "many", "tunnel")


class Page(http.server.BaseHTTPRequestHandler):
    """Answers every GET with a page, counting what reached it."""

    def do_GET(self):
        self.server.hits.append((self.path, self.headers.get("Host")))
        body = b"the internal page"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server6(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


@pytest.fixture
def server():
    """A loopback-only HTTP server (IPv4, port 0) that records every request."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    httpd.hits = []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def server6():
    """The same on ``::1``."""
    httpd = Server6(("::1", 0), Page)
    httpd.hits = []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def names(monkeypatch):
    """Names that resolve to chosen addresses (the proxy's resolver hook); every other
    name goes to the system resolver. Counts the lookups of each name."""
    table: dict[str, list[str]] = {}
    lookups: dict[str, int] = {}
    system = proxy_module.resolve

    async def resolve(host: str, port: int) -> list[str]:
        lookups[host] = lookups.get(host, 0) + 1
        if host in table:
            return table[host]
        return await system(host, port)

    monkeypatch.setattr(proxy_module, "resolve", resolve)
    return table, lookups


@pytest.fixture
def seen(lab):
    events: list = []
    lab.host.bus.subscribe(events.append)
    return events


def net(host: str, *ports) -> dict:
    return {"permissions": {"net": [{"host": host, "ports": list(ports), "reason": "The test server."}]}}


def python_tools(lab, grant: dict, name: str = "netpy") -> None:
    lab.extension(name, PY_CODE, {tool: grant for tool in PY_TOOLS})


def deno_tools(lab, grant: dict, name: str = "netts") -> None:
    lab.extension(name, DENO_CODE, {"fetchUrl": grant}, runtime="deno")


def refused(outcome, *words: str) -> str:
    """The call failed, and its error carries every one of ``words``."""
    assert not outcome.ok, outcome.result
    text = outcome.error["message"]
    for word in words:
        assert word in text, text
    return text


def answered(outcome, *words: str) -> str:
    """The call returned (the tool read the proxy's reply), carrying every one of ``words``."""
    assert outcome.ok, outcome.error
    text = outcome.result if isinstance(outcome.result, str) else "\n".join(outcome.result)
    for word in words:
        assert word in text, text
    return text


def call_log(seen, outcome) -> str:
    return "\n".join(e.message for e in seen if isinstance(e, ToolCallLog) and e.call_id == outcome.call_id)


def explained(lab, tool: str) -> list[dict]:
    return [row for row in lab.host.grants.explain(tool) if row["state"] == "refused"]


async def healthy(lab):
    outcome = await lab.host.tools.call("word_count", {"text": "still here"})
    assert outcome.ok and outcome.result["words"] == 2


# --- a name never reaches an internal address ----------------------------------------------


async def test_a_granted_name_that_resolves_to_loopback_is_refused(lab, server, seen):
    port = server.server_address[1]
    python_tools(lab, net("localhost", port))
    deno_tools(lab, net("localhost", port))
    for tool in ("fetch", "fetch_httpx"):
        outcome = await lab.call(tool, {"url": f"http://localhost:{port}/"})
        text = (refused(outcome, "403") if tool == "fetch" else answered(outcome, "403"))
        assert "localhost" in text and "loopback" in text and f"127.0.0.1:{port}" in text
        assert f"localhost:{port}" in call_log(seen, outcome)
    outcome = await lab.call("fetchUrl", {"url": f"http://localhost:{port}/"})
    answered(outcome, "403", "loopback")
    assert "loopback" in call_log(seen, outcome)
    # HTTPS goes by CONNECT: refused before any byte of TLS, with the reason in the status
    # line; where the client hides it (Deno's "fetch failed"), the call's error carries it.
    outcome = await lab.call("fetch", {"url": f"https://localhost:{port}/"})
    refused(outcome, "403", "loopback")
    outcome = await lab.call("fetchUrl", {"url": f"https://localhost:{port}/"})
    refused(outcome, "fetch failed", f"refused localhost:{port}", "loopback")
    assert server.hits == []
    rows = explained(lab, "netpy.fetch")
    assert rows and rows[-1]["value"] == f"localhost:{port}" and "loopback" in rows[-1]["reason"]
    assert explained(lab, "netts.fetchUrl")
    await healthy(lab)


async def test_a_name_resolving_to_both_kinds_reaches_only_the_checked_address(lab, server, names, seen):
    table, lookups = names
    port = server.server_address[1]
    table["twofaced.test"] = ["127.0.0.1", "10.1.2.3", "169.254.169.254"]
    python_tools(lab, net("twofaced.test", port))
    outcome = await lab.call("fetch", {"url": f"http://twofaced.test:{port}/"})
    text = refused(outcome, "403", "twofaced.test")
    assert "loopback" in text and "private" in text and "link-local" in text
    assert lookups["twofaced.test"] == 1
    assert server.hits == []
    await healthy(lab)


# --- a wildcard never reaches an internal address ------------------------------------------


async def test_a_wildcard_grant_reaches_no_internal_range(lab, server, names, seen):
    table, _ = names
    port = server.server_address[1]
    table["cgnat.test"] = ["100.64.3.4"]
    table["nat64.test"] = ["64:ff9b::7f00:1"]
    table["mapped.test"] = ["::ffff:127.0.0.1"]
    table["sixtofour.test"] = ["2002:7f00:1::1"]
    table["bench.test"] = ["198.18.0.1"]
    python_tools(lab, net("*", port))
    deno_tools(lab, net("*", port))
    cases = {"cgnat.test": "shared address space", "nat64.test": "NAT64",
             "mapped.test": "loopback", "sixtofour.test": "loopback", "bench.test": "benchmarking",
             "127.0.0.1": "loopback", "[::1]": "loopback", "[::ffff:127.0.0.1]": "loopback",
             "2130706433": "loopback", "127.1": "loopback", "[fe80::1]": "link-local",
             "0.0.0.0": "", "[::]": "unspecified", "224.0.0.1": "multicast"}
    for host, why in cases.items():
        outcome = await lab.call("fetch", {"url": f"http://{host}:{port}/"})
        refused(outcome, "403", why)
        assert why in call_log(seen, outcome)
    outcome = await lab.call("fetchUrl", {"url": f"http://cgnat.test:{port}/"})
    answered(outcome, "403", "shared address space")
    outcome = await lab.call("fetchUrl", {"url": f"http://127.0.0.1:{port}/"})
    answered(outcome, "403", "loopback")
    assert server.hits == []
    reasons = [row["reason"] for row in explained(lab, "netts.fetchUrl")]
    assert any("shared address space" in reason for reason in reasons)
    assert any("loopback" in row["reason"] for row in explained(lab, "netpy.fetch"))
    await healthy(lab)


# --- IPv6 literals are parsed, checked, and reached only when granted literally --------------


async def test_ipv6_literals_are_refused_readably_and_never_crash_the_proxy(lab, server6, seen):
    port = server6.server_address[1]
    python_tools(lab, net("*", port))
    for head in (f"CONNECT [::1]:{port} HTTP/1.1\r\nHost: [::1]:{port}\r\n\r\n",
                 f"CONNECT [::ffff:127.0.0.1]:{port} HTTP/1.1\r\n\r\n",
                 f"GET http://[::1]:{port}/ HTTP/1.1\r\nHost: [::1]:{port}\r\n\r\n",
                 f"CONNECT ::1:{port} HTTP/1.1\r\n\r\n",
                 "GET http://[::1/ HTTP/1.1\r\n\r\n"):
        outcome = await lab.call("raw", {"head": head})
        text = answered(outcome)
        status = text.split("\r\n", 1)[0]
        assert status.startswith(("HTTP/1.1 403", "HTTP/1.1 400")), text
        assert "\r\n\r\n" in text and text.split("\r\n\r\n", 1)[1].strip(), text
        assert status.split(" ", 2)[1] in call_log(seen, outcome)
    for url in (f"http://[::1]:{port}/", f"http://[::ffff:127.0.0.1]:{port}/"):
        refused(await lab.call("fetch", {"url": url}), "403", "loopback")
    deno_tools(lab, net("*", port))
    outcome = await lab.call("fetchUrl", {"url": f"http://[::1]:{port}/"})
    answered(outcome, "403", "loopback")
    assert "[::1]" in call_log(seen, outcome)
    assert server6.hits == []
    rows = explained(lab, "netpy.raw")
    assert any(row["value"] == f"[::1]:{port}" and "loopback" in row["reason"] for row in rows), rows
    assert any(row["value"] == f"[::ffff:127.0.0.1]:{port}" for row in rows), rows
    await healthy(lab)


async def test_an_ipv6_literal_granted_literally_is_reached(lab, server6, seen):
    port = server6.server_address[1]
    python_tools(lab, net("::1", port))
    outcome = await lab.call("fetch", {"url": f"http://[::1]:{port}/"})
    answered(outcome, "200 the internal page")
    assert server6.hits
    await healthy(lab)


# --- an explicit literal grant of an internal address works, and only literally -------------


async def test_an_explicit_loopback_grant_is_reached_by_its_literal_address_only(lab, server, names, seen):
    table, _ = names
    port = server.server_address[1]
    table["alias.test"] = ["127.0.0.1"]
    python_tools(lab, net("127.0.0.1", port))
    deno_tools(lab, net("127.0.0.1", port))
    answered(await lab.call("fetch", {"url": f"http://127.0.0.1:{port}/"}), "200 the internal page")
    answered(await lab.call("fetch_httpx", {"url": f"http://127.0.0.1:{port}/"}), "200 OK | the internal page")
    answered(await lab.call("fetchUrl", {"url": f"http://127.0.0.1:{port}/"}), "200 OK | the internal page")
    reached = len(server.hits)
    assert reached == 3
    # Not through a name that resolves to it, nor through another spelling of the address.
    for host in ("localhost", "alias.test", "127.1", "[::ffff:127.0.0.1]"):
        outcome = await lab.call("fetch", {"url": f"http://{host}:{port}/"})
        refused(outcome, "403", f":{port}")
        assert "not granted" in call_log(seen, outcome)
    assert len(server.hits) == reached
    await healthy(lab)


# --- ports, Host headers --------------------------------------------------------------------


async def test_ports_other_than_granted_are_refused_naming_the_port(lab, server, seen):
    port = server.server_address[1]
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other_port = other.getsockname()[1]
    python_tools(lab, net("127.0.0.1", port))
    deno_tools(lab, net("*", port))
    outcome = await lab.call("fetch", {"url": f"http://127.0.0.1:{other_port}/"})
    refused(outcome, "403", f"127.0.0.1:{other_port}", "not granted")
    outcome = await lab.call("raw", {"head": f"CONNECT 127.0.0.1:{other_port} HTTP/1.1\r\n\r\n"})
    answered(outcome, "403", f"127.0.0.1:{other_port}")
    rows = explained(lab, "netpy.fetch")
    assert rows and rows[-1]["value"] == f"127.0.0.1:{other_port}"
    await healthy(lab)


async def test_a_host_header_that_differs_from_the_target_is_refused(lab, server, seen):
    port = server.server_address[1]
    python_tools(lab, net("127.0.0.1", port))
    head = (f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: metadata.internal\r\n"
            "Connection: close\r\n\r\n")
    outcome = await lab.call("raw", {"head": head})
    answered(outcome, "403", "metadata.internal", f"127.0.0.1:{port}")
    assert "Host" in call_log(seen, outcome)
    two = (f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
           "Host: metadata.internal\r\n\r\n")
    answered(await lab.call("raw", {"head": two}), "403", "Host")
    assert server.hits == []
    # The same request with a matching Host (or none) goes through, as origin-form.
    fine = f"GET http://127.0.0.1:{port}/page?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    answered(await lab.call("raw", {"head": fine}), "200", "the internal page")
    assert server.hits == [("/page?q=1", f"127.0.0.1:{port}")]
    await healthy(lab)


# --- failures that say what happened ---------------------------------------------------------


async def test_an_unresolvable_name_is_a_502_naming_it(lab, seen):
    python_tools(lab, net("nowhere.invalid", 80, 443))
    deno_tools(lab, net("nowhere.invalid", 80, 443))
    outcome = await lab.call("fetch", {"url": "http://nowhere.invalid/"})
    refused(outcome, "502", "nowhere.invalid", "resolve")
    assert "nowhere.invalid" in call_log(seen, outcome)
    answered(await lab.call("fetch_httpx", {"url": "http://nowhere.invalid/"}), "502", "resolve")
    refused(await lab.call("fetch", {"url": "https://nowhere.invalid/"}), "502", "resolve")
    outcome = await lab.call("fetchUrl", {"url": "http://nowhere.invalid/"})
    answered(outcome, "502", "nowhere.invalid")
    assert "resolve" in call_log(seen, outcome)
    await healthy(lab)


async def test_a_refused_connection_is_a_502_naming_it(lab, seen):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    python_tools(lab, net("127.0.0.1", port))
    deno_tools(lab, net("127.0.0.1", port))
    outcome = await lab.call("fetch", {"url": f"http://127.0.0.1:{port}/"})
    refused(outcome, "502", f"127.0.0.1:{port}", "refused")
    assert "refused" in call_log(seen, outcome)
    outcome = await lab.call("fetchUrl", {"url": f"http://127.0.0.1:{port}/"})
    answered(outcome, "502", "refused")
    await healthy(lab)


# --- heads that never end, heads too large, floods -------------------------------------------


async def test_a_head_held_open_is_answered_408_and_closed(lab, server, seen, monkeypatch):
    monkeypatch.setattr(proxy_module, "HEAD_TIMEOUT", 1.0)
    port = server.server_address[1]
    python_tools(lab, net("127.0.0.1", port))
    # Nothing at all after the request line, and a head that grows a byte at a time.
    outcome = await lab.call("raw", {"head": f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\n"})
    answered(outcome, "408", "request head")
    outcome = await lab.call("drip", {"start": f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX-Slow: "})
    answered(outcome, "408", "request head")
    assert "408" in call_log(seen, outcome)
    assert server.hits == []
    await healthy(lab)


async def test_a_head_too_large_is_answered_431(lab, server, seen):
    port = server.server_address[1]
    python_tools(lab, net("127.0.0.1", port))
    head = (f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX-Big: " + "a" * (proxy_module.MAX_HEAD + 10)
            + "\r\n\r\n")
    answered(await lab.call("raw", {"head": head}), "431", "request head")
    assert server.hits == []
    await healthy(lab)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_a_flood_of_connections_is_capped_per_worker(lab, server, seen, monkeypatch):
    monkeypatch.setattr(proxy_module, "MAX_CONCURRENT", 4)
    monkeypatch.setattr(proxy_module, "MAX_CONNECTIONS", 12)
    port = server.server_address[1]
    python_tools(lab, net("127.0.0.1", port))
    head = f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    await healthy(lab)
    before = _open_fds()
    outcome = await lab.call("flood", {"hold": 4, "extra": 3, "head": head})
    replies = outcome.result
    assert outcome.ok and len(replies) == 3, outcome.error
    for reply in replies:
        assert reply.startswith("HTTP/1.1 429") and "4 connections" in reply, reply
    assert "429" in call_log(seen, outcome)
    # The total per call: 12 connections, then every further one is refused.
    lines = (await lab.call("many", {"count": 15, "head": head})).result
    assert lines[:12] == ["HTTP/1.0 200 OK"] * 12 and all(" 429 " in line for line in lines[12:]), lines
    # A connection flood of the worker's own size leaves nothing open in the host.
    flooded = await lab.call("flood", {"hold": 4, "extra": 40, "head": head})
    assert flooded.ok and len(flooded.result) == 40
    await healthy(lab)
    assert _open_fds() <= before + 8
    assert any("429" in row["reason"] or "connections" in row["reason"]
               for row in explained(lab, "netpy.flood"))


async def test_a_granted_tunnel_carries_bytes_and_an_idle_one_is_closed(lab, seen, monkeypatch):
    monkeypatch.setattr(proxy_module, "IDLE_TIMEOUT", 1.0)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve():
        # The first connection echoes one piece; the second is accepted and then never answered.
        for echo in (True, False):
            conn, _ = listener.accept()
            if echo:
                conn.sendall(conn.recv(100).upper())
                conn.close()
            else:
                conn.recv(100)
                kept.append(conn)

    kept: list[socket.socket] = []
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        python_tools(lab, net("127.0.0.1", port))
        head = f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        echoed = await lab.call("tunnel", {"head": head, "send": "ping"})
        assert echoed.ok and echoed.result == "HTTP/1.1 200 Connection established\r\n\r\nPING", echoed
        # Nothing moves either way: the proxy ends the tunnel, the tool's read returns.
        idle = await lab.call("tunnel", {"head": head, "send": "hello?"})
        assert idle.ok and idle.result == "HTTP/1.1 200 Connection established\r\n\r\n", idle
    finally:
        thread.join(timeout=10)
        for conn in kept:
            conn.close()
        listener.close()
    await healthy(lab)
