"""The life of real MCP servers: killed mid-call and restarted with backoff, given up on and
tried again, stopped with their whole process tree, run in the sandbox, and reached over
streamable HTTP across a restart of the server."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from processes import alive

from workbench.config.home import Home
from workbench.core.host import Host
from workbench.events import Notice, ToolCallProgress
from workbench.mcp import connection
from workbench.mcp.config import ServerConfig, write_server

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / ".mcp-servers"
EVERYTHING = SERVERS / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
TIME = SERVERS / "venv/bin/mcp-server-time"


@pytest.fixture(autouse=True)
def servers_installed() -> None:
    missing = [str(p) for p in (EVERYTHING, TIME) if not p.exists()]
    assert not missing, f"the MCP test servers are missing ({missing}); `make test` installs them"


def open_host(home: Home, workdir: Path, *servers: ServerConfig) -> Host:
    for server in servers:
        write_server(home.config_file, server, replace=True)
    return Host.open(cwd=workdir)


def group_members(pgid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid and alive(int(entry)):
                    found.append(int(entry))
            except ProcessLookupError:
                continue
    return found


async def until(check, seconds: float = 15.0) -> Any:
    for _ in range(int(seconds / 0.05)):
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError("the condition did not come true in time")


async def test_a_server_killed_mid_call_gives_a_clear_error_and_comes_back(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, ServerConfig(name="everything", command="node",
                                                 args=(str(EVERYTHING), "stdio")))
    events: list = []
    host.bus.subscribe(events.append)
    try:
        call = asyncio.ensure_future(host.tools.call("mcp__everything__trigger-long-running-operation",
                                                    {"duration": 30, "steps": 30}))
        await until(lambda: any(isinstance(e, ToolCallProgress) for e in events))
        server = host.mcp.manager.servers["everything"]
        first = server.pid
        os.kill(first, signal.SIGKILL)
        outcome = await asyncio.wait_for(call, 10)
        assert outcome.error["kind"] == "unavailable"
        assert "stopped during the call" in outcome.error["message"]
        assert "SIGKILL" in outcome.error["message"]
        await until(lambda: any("everything is unavailable" in e.message and "SIGKILL" in e.message
                                for e in events if isinstance(e, Notice)))
        row = next(r for r in host.mcp.servers() if r["name"] == "everything")
        assert row["state"] in ("backoff", "starting", "running")
        await until(lambda: server.current_state() is connection.State.RUNNING)
        assert server.pid != first and not alive(first)
        echo = await host.tools.call("mcp__everything__echo", {"message": "back"})
        assert echo.ok and echo.result["content"][0]["text"] == "Echo: back"
        assert any("running again" in e.message for e in events if isinstance(e, Notice))
    finally:
        await host.aclose()


async def test_a_server_that_keeps_failing_is_given_up_on_then_tried_again(
        home: Home, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BACKOFF_S", (0.05,))
    flag = workdir / "broken"
    flag.write_text("yes")
    # Fails at start while the flag file exists, then serves time.
    script = (f"import os, sys\nif os.path.exists({str(flag)!r}):\n"
              f"    sys.stderr.write('cannot open the database\\n'); sys.exit(3)\n"
              f"os.execv({str(TIME)!r}, [{str(TIME)!r}])\n")
    host = open_host(home, workdir, ServerConfig(name="flaky", command=sys.executable, args=("-c", script)))
    try:
        row = host.mcp.servers()[0]
        assert not row["tools_known"] and "exited with status 3" in row["reason"]
        assert "cannot open the database" in row["reason"]
        failures = await host.mcp.check(["flaky"])
        assert "could not start" in failures["flaky"] and "status 3" in failures["flaky"]
        server = host.mcp.manager.servers["flaky"]
        await until(lambda: server.state is connection.State.FATAL)
        assert "gave up after 6 attempts" in server.reason
        flag.unlink()
        assert await host.mcp.check(["flaky"]) == {}
        assert server.state is connection.State.RUNNING
        await until(lambda: any(t.name == "mcp__flaky__get_current_time" for t in host.registry.available()))
    finally:
        await host.aclose()


async def test_a_server_is_stopped_with_its_process_tree(home: Home, workdir: Path) -> None:
    # The server starts a helper that would outlive it if only the server were killed.
    wrapper = f"sleep 600 & exec node {EVERYTHING} stdio"
    host = open_host(home, workdir, ServerConfig(name="tree", command="sh", args=("-c", wrapper)))
    try:
        assert (await host.tools.call("mcp__tree__echo", {"message": "x"})).ok
        pid = host.mcp.manager.servers["tree"].pid
        members = group_members(pid)
        assert pid in members and len(members) >= 2
    finally:
        await host.aclose()
    await until(lambda: not any(alive(m) for m in members), 5)


async def test_a_sandboxed_server_has_only_its_grants(home: Home, workdir: Path) -> None:
    os.environ["WORKBENCH_TEST_SECRET"] = "not-for-servers"
    try:
        host = open_host(home, workdir,
                         ServerConfig(name="boxed", command="node", args=(str(EVERYTHING), "stdio"),
                                      env={"OWN_SETTING": "1"}, sandbox=True,
                                      grants=(f"read:{SERVERS}",)),
                         ServerConfig(name="btime", command=str(TIME), sandbox=True))
    finally:
        del os.environ["WORKBENCH_TEST_SECRET"]
    try:
        env = await host.tools.call("mcp__boxed__get-env", {})
        assert env.ok, env.error
        seen = env.result["content"][0]["text"]
        assert '"OWN_SETTING": "1"' in seen and "WORKBENCH_TEST_SECRET" not in seen
        fetch = await host.tools.call("mcp__boxed__gzip-file-as-resource", {"data": "https://example.com/"})
        assert not fetch.ok and "fetch failed" in fetch.error["message"]
        launcher = host.mcp.manager.servers["boxed"].pid
        middle = children(launcher)[0]  # its user namespace's first process
        child = children(middle)[0]  # the server, PID 1 of its namespaces
        assert os.readlink(f"/proc/{child}/ns/user") != os.readlink("/proc/self/ns/user")
        assert os.readlink(f"/proc/{child}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
        assert os.readlink(f"/proc/{child}/ns/pid") != os.readlink("/proc/self/ns/pid")
        assert os.readlink(f"/proc/{child}/ns/net") != os.readlink("/proc/self/ns/net")
        zone = await host.tools.call("mcp__btime__get_current_time", {"timezone": "Asia/Tokyo"})
        assert zone.ok and zone.result["structuredContent"]["timezone"] == "Asia/Tokyo"
    finally:
        await host.aclose()
    await until(lambda: not alive(launcher) and not alive(middle) and not alive(child), 5)


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return [int(p) for p in handle.read().split()]


async def test_a_sandboxed_server_without_a_grant_for_its_code_cannot_start(home: Home, workdir: Path) -> None:
    host = open_host(home, workdir, ServerConfig(name="nogrant", command="node",
                                                 args=(str(EVERYTHING), "stdio"), sandbox=True))
    try:
        row = host.mcp.servers()[0]
        assert not row["tools_known"] and "exited with status" in row["reason"]
        log = (home.logs_dir / "mcp-nogrant.log").read_text()
        # Its code is not in the server's root at all.
        assert "Cannot find module" in log and str(EVERYTHING) in log
    finally:
        await host.aclose()


FETCHER = """
import urllib.error
import urllib.request

from mcp.server.mcpserver import MCPServer

server = MCPServer("fetcher")


@server.tool()
def fetch(url: str) -> str:
    \"\"\"Fetch a URL (through the proxy the environment names).\"\"\"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except urllib.error.HTTPError as exc:
        return f"refused: {exc.code} {exc.read().decode()}"
    except OSError as exc:
        return f"failed: {exc}"


server.run()
"""


async def test_a_sandboxed_server_reaches_only_the_hosts_it_was_granted(home: Home, workdir: Path,
                                                                      tmp_path: Path) -> None:
    import http.server
    import threading

    site = tmp_path / "site"
    site.mkdir()
    (site / "page.txt").write_text("granted page")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(site))  # noqa: E731
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    port, other = web.server_address[1], free_port()
    code = tmp_path / "fetcher"
    code.mkdir()
    (code / "server.py").write_text(FETCHER)
    host = open_host(home, workdir, ServerConfig(
        name="fetcher", command=str(SERVERS / "venv/bin/python"), args=(str(code / "server.py"),),
        sandbox=True, grants=(f"read:{code}", f"net:127.0.0.1:{port}")))
    try:
        page = await host.tools.call("mcp__fetcher__fetch", {"url": f"http://127.0.0.1:{port}/page.txt"})
        assert page.ok and page.result["content"][0]["text"] == "granted page"
        elsewhere = await host.tools.call("mcp__fetcher__fetch", {"url": f"http://127.0.0.1:{other}/"})
        assert elsewhere.result["content"][0]["text"].startswith(
            f"refused: 403 127.0.0.1:{other} is not granted")
    finally:
        await host.aclose()
        web.shutdown()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen(["node", str(EVERYTHING), "streamableHttp"],
                               env={**os.environ, "PORT": str(port)}, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if "listening" in line:
            return process
    raise AssertionError("the HTTP server did not start")


async def test_a_streamable_http_server_is_reached_again_after_it_restarts(home: Home, workdir: Path) -> None:
    port = free_port()
    process = http_server(port)
    try:
        host = open_host(home, workdir, ServerConfig(name="web", url=f"http://127.0.0.1:{port}/mcp",
                                                     headers={"Authorization": "Bearer t0ken"}))
        try:
            summed = await host.tools.call("mcp__web__get-sum", {"a": 2, "b": 40})
            assert summed.ok and summed.result["content"][0]["text"] == "The sum of 2 and 40 is 42."
            process.kill()
            process.wait()
            lost = await host.tools.call("mcp__web__echo", {"message": "x"})
            assert lost.error["kind"] == "unavailable"
            process = http_server(port)

            async def answered() -> bool:
                return (await host.tools.call("mcp__web__echo", {"message": "again"})).ok

            for _ in range(100):
                if await answered():
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the HTTP server was not reached again")
            assert "t0ken" not in str(host.mcp.servers())
        finally:
            await host.aclose()
    finally:
        process.kill()
        process.wait()
