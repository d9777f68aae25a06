"""Python tools that try to get out of their sandbox — and fail.

Each tool is given exactly the grants its manifest declares and then tries to reach
something else. Every attempt must fail, be reported, and leave the host healthy.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import threading
import time

import pytest

from commands import workbench

from processes import processes_with
from waits import until

from workbench.events import ToolCallLog

pytestmark = pytest.mark.security

CODE = r'''
import os, socket, subprocess, time, signal, ctypes

def read_path(args, ctx):
    with open(args["path"]) as handle:
        return handle.read()

def write_path(args, ctx):
    with open(args["path"], "w") as handle:
        handle.write("owned")
    return "wrote"

def tcp_connect(args, ctx):
    sock = socket.create_connection((args["host"], args["port"]), timeout=2)
    sock.sendall(b"hello")
    return "connected"

def via_proxy(args, ctx):
    import urllib.request
    return urllib.request.urlopen(args["url"], timeout=5).read().decode()

def udp_send(args, ctx):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.sendto(b"hello", (args["host"], args["port"]))
    return "sent"

def unix_path(args, ctx):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(args["path"])
    return "connected"

def unix_abstract(args, ctx):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect("\0" + args["name"])
    return "connected"

def kill_host(args, ctx):
    os.kill(args["pid"], signal.SIGTERM)
    return "signalled"

def host_environ(args, ctx):
    with open(f"/proc/{args['pid']}/environ", "rb") as handle:
        return handle.read().decode(errors="replace")

def run_binary(args, ctx):
    return subprocess.run([args["binary"], "-c", "echo escaped"], capture_output=True, text=True).stdout

def exec_binary(args, ctx):
    os.execv(args["binary"], [args["binary"], "-c", "echo escaped"])

def read_env(args, ctx):
    return {"value": os.environ.get(args["key"]), "all": sorted(os.environ)}

def setsid_escape(args, ctx):
    os.setsid()
    return "left the group"

def leave_behind(args, ctx):
    subprocess.Popen(["/bin/sleep", args["marker"]], start_new_session=False)
    subprocess.Popen(["/bin/sh", "-c", f"(/bin/sleep {args['marker']} &) ; exit 0"])
    return "spawned"

def fork_bomb(args, ctx):
    count = 0
    try:
        while count < 100000:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            count += 1
    except OSError as exc:
        return {"forks": count, "error": str(exc)}
    return {"forks": count}

def allocate(args, ctx):
    hoard = []
    while True:
        hoard.append(bytearray(64 * 1024 * 1024))

def shout(args, ctx):
    while True:
        print("x" * 10000)

def spin(args, ctx):
    while True:
        pass

def stubborn(args, ctx):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ctx.log("info", "ignoring cancellation")
    while True:
        time.sleep(0.01)

def ptrace_host(args, ctx):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, args["pid"], 0, 0) != 0:  # PTRACE_ATTACH
        raise OSError(ctypes.get_errno(), "ptrace refused")
    return "attached"

def new_userns(args, ctx):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:
        raise OSError(ctypes.get_errno(), "unshare refused")
    return "new namespace"
'''


@pytest.fixture
def secrets(tmp_path):
    """A file in another user's home, a key file, and a granted folder with a link out."""
    other = tmp_path / "otherhome"
    other.mkdir()
    (other / "secret.txt").write_text("other user's secret")
    key = tmp_path / "keys" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    granted = tmp_path / "granted"
    granted.mkdir()
    (granted / "ok.txt").write_text("fine to read")
    (granted / "link").symlink_to(other / "secret.txt")
    return {"other": other / "secret.txt", "key": key, "granted": granted}


def declare(lab, secrets, **extra):
    tools = {name: {} for name in (
        "tcp_connect", "udp_send", "unix_path", "unix_abstract", "kill_host", "host_environ",
        "run_binary", "exec_binary", "read_env", "setsid_escape", "fork_bomb", "allocate", "shout",
        "spin", "stubborn", "ptrace_host", "new_userns", "write_path")}
    tools["read_path"] = {"permissions": {"read": [{"path": str(secrets["granted"]), "reason": "Its folder."}]}}
    tools.update(extra)
    lab.extension("hostile", CODE, tools)


def assert_refused(outcome, *words):
    assert not outcome.ok, outcome.result
    text = outcome.error["message"]
    assert any(word in text for word in words), text


async def assert_host_healthy(lab):
    outcome = await lab.host.tools.call("word_count", {"text": "still here"})
    assert outcome.ok and outcome.result["words"] == 2


async def test_reads_outside_grants_fail(lab, secrets):
    declare(lab, secrets)
    assert (await lab.call("read_path", {"path": str(secrets["granted"] / "ok.txt")})).result == "fine to read"
    for target in (secrets["other"], secrets["key"], "/etc/shadow", "/etc/passwd", "/proc/1/environ"):
        assert_refused(await lab.call("read_path", {"path": str(target)}), "Permission denied", "not granted",
                       "No such file")
    assert_refused(await lab.call("read_path", {"path": str(secrets["granted"] / "link")}), "Permission denied",
                   "No such file")
    await assert_host_healthy(lab)


async def test_writes_outside_grants_fail(lab, secrets, tmp_path):
    declare(lab, secrets)
    for target in (tmp_path / "dropped.txt", secrets["granted"] / "new.txt", secrets["key"]):
        assert_refused(await lab.call("write_path", {"path": str(target)}), "Permission denied",
                       "Read-only file system", "No such file")
        assert not target.exists() or target.read_text() != "owned"
    await assert_host_healthy(lab)


async def test_undeclared_tcp_is_unreachable(lab, secrets):
    declare(lab, secrets)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        for host in ("127.0.0.1", "1.1.1.1"):
            assert_refused(await lab.call("tcp_connect", {"host": host, "port": port}),
                           "Permission denied", "unreachable", "refused", "Network is")
    finally:
        server.close()
    await assert_host_healthy(lab)


async def test_net_grant_reaches_only_its_host_and_port(lab, secrets):
    import http.server

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"granted page"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    allowed, other = (s.server_address[1] for s in servers)
    try:
        declare(lab, secrets, via_proxy={"permissions": {"net": [
            {"host": "127.0.0.1", "ports": [allowed], "reason": "The test server."}]}},
            tcp_connect={"permissions": {"net": [
                {"host": "127.0.0.1", "ports": [allowed], "reason": "The test server."}]}})
        ok = await lab.call("via_proxy", {"url": f"http://127.0.0.1:{allowed}/"})
        assert ok.ok and ok.result == "granted page", ok.error
        assert_refused(await lab.call("via_proxy", {"url": f"http://127.0.0.1:{other}/"}), "403", "Forbidden")
        assert_refused(await lab.call("via_proxy", {"url": f"http://localhost:{allowed}/"}), "403", "Forbidden")
        # A direct connection (not through the proxy) goes nowhere, even to the granted port.
        assert_refused(await lab.call("tcp_connect", {"host": "127.0.0.1", "port": allowed}),
                       "refused", "Permission denied")
    finally:
        for server in servers:
            server.shutdown()
    await assert_host_healthy(lab)


async def test_udp_and_unix_sockets_are_refused(lab, secrets, tmp_path):
    declare(lab, secrets, unix_path={"permissions": {
        "read": [{"path": str(tmp_path / "sock"), "reason": "The folder."}],
        "write": [{"path": str(tmp_path / "sock"), "reason": "The folder."}]}})
    (tmp_path / "sock").mkdir()
    path_server = socket.socket(socket.AF_UNIX)
    path_server.bind(str(tmp_path / "sock" / "agent.sock"))
    path_server.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0workbench-test-abstract")
    abstract.listen()
    try:
        assert_refused(await lab.call("udp_send", {"host": "127.0.0.1", "port": 9}), "not permitted")
        assert_refused(await lab.call("unix_path", {"path": str(tmp_path / "sock" / "agent.sock")}),
                       "not supported", "not permitted")
        assert_refused(await lab.call("unix_abstract", {"name": "workbench-test-abstract"}),
                       "not supported", "not permitted")
    finally:
        path_server.close()
        abstract.close()
    await assert_host_healthy(lab)


async def test_the_host_process_is_out_of_reach(lab, secrets, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_SECRET", "hunter2")
    declare(lab, secrets)
    me = os.getpid()
    assert_refused(await lab.call("kill_host", {"pid": me}), "No such process", "not permitted")
    assert_refused(await lab.call("host_environ", {"pid": me}), "No such file", "Permission denied")
    assert_refused(await lab.call("ptrace_host", {"pid": me}), "ptrace refused")
    assert_refused(await lab.call("new_userns", {}), "unshare refused")
    env = await lab.call("read_env", {"key": "WORKBENCH_TEST_SECRET"})
    assert env.ok and env.result["value"] is None and "hunter2" not in str(env.result)
    assert "HOME" not in env.result["all"] and "PATH" not in env.result["all"]
    await assert_host_healthy(lab)


async def test_declared_env_is_the_only_env(lab, secrets, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_ALLOWED", "visible")
    monkeypatch.setenv("WORKBENCH_TEST_SECRET", "hunter2")
    declare(lab, secrets, read_env={"permissions": {"env": [
        {"key": "WORKBENCH_TEST_ALLOWED", "reason": "The test."}]}})
    allowed = await lab.call("read_env", {"key": "WORKBENCH_TEST_ALLOWED"})
    assert allowed.result["value"] == "visible"
    secret = await lab.call("read_env", {"key": "WORKBENCH_TEST_SECRET"})
    assert secret.result["value"] is None


async def test_undeclared_binaries_do_not_run(lab, secrets):
    declare(lab, secrets)
    assert_refused(await lab.call("run_binary", {"binary": "/bin/sh"}), "not permitted", "Permission denied")
    assert_refused(await lab.call("exec_binary", {"binary": "/bin/sh"}), "Permission denied", "No such file")
    await assert_host_healthy(lab)


async def test_a_sibling_tool_never_shares_a_grant(lab, secrets):
    declare(lab, secrets, write_path={})
    # read_path is granted its folder; write_path (same extension) asks to read it.
    lab.extension("hostile2", CODE, {"read_path": {}})
    assert (await lab.call("hostile.read_path", {"path": str(secrets["granted"] / "ok.txt")})).ok
    assert_refused(await lab.call("hostile2.read_path", {"path": str(secrets["granted"] / "ok.txt")}),
                   "Permission denied", "No such file")


async def test_leaving_the_process_group_fails_and_nothing_outlives_the_call(lab, secrets):
    # A duration sleep takes, and no other run of this test on the machine uses (a
    # suite run beside this one would leave its own sleeps for a moment).
    marker = f"{random.randint(20_000, 90_000)}.{os.getpid()}"
    declare(lab, secrets, leave_behind={"permissions": {"run": [
        {"binary": "/bin/sleep", "reason": "Sleep."}, {"binary": "/bin/sh", "reason": "A shell."}]}})
    assert_refused(await lab.call("setsid_escape", {}), "not permitted")
    outcome = await lab.call("leave_behind", {"marker": marker})
    assert outcome.ok, outcome.error
    await until(lambda: not processes_with(marker), "the tool's processes ended", bound_s=30)


async def test_forks_without_a_run_grant_fail_and_with_one_are_bounded(lab, secrets):
    declare(lab, secrets, fork_bomb={"permissions": {"run": [{"binary": "/bin/true", "reason": "x"}]}})
    lab.extension("bomb2", CODE, {"fork_bomb": {}})
    refused = await lab.call("bomb2.fork_bomb", {})
    assert refused.ok and refused.result["forks"] == 0 and "not permitted" in refused.result["error"]
    bounded = await lab.call("hostile.fork_bomb", {})
    assert bounded.ok and bounded.result["forks"] < 5000
    await assert_host_healthy(lab)


async def test_memory_output_and_time_are_bounded(lab, secrets):
    declare(lab, secrets, spin={"timeoutMs": 500})
    lab.host.sandbox.limits.memory_mb = 256
    assert_refused(await lab.call("allocate", {}), "MemoryError", "memory")
    shout = await lab.call("shout", {})
    assert shout.error["kind"] == "output_too_large"
    spin = await lab.call("spin", {})
    assert spin.error["kind"] == "timeout"
    await assert_host_healthy(lab)


async def test_a_tool_that_ignores_cancellation_is_killed(lab, secrets):
    declare(lab, secrets, stubborn={"timeoutMs": 86_400_000})
    logged = asyncio.Event()
    lab.host.bus.subscribe(lambda e: logged.set() if isinstance(e, ToolCallLog) else None)
    task = asyncio.ensure_future(lab.call("stubborn", {}))
    await asyncio.wait_for(logged.wait(), 60)  # the tool runs, SIGTERM ignored
    # The tool would run past the test's time-out (its own is a day): only a kill ends it.
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert lab.host.store.list_tool_calls()[0]["status"] == "cancelled"
    await assert_host_healthy(lab)


def test_nothing_survives_the_host_being_killed(tmp_path):
    """The host dies mid-call (SIGKILL): its zygote and every worker go with it."""
    import json
    import subprocess
    import sys

    marker = f"{random.randint(20_000, 90_000)}.{os.getpid()}"  # no other run uses it
    folder = tmp_path / "sleepy"
    folder.mkdir()
    (folder / "main.py").write_text(
        "import subprocess, time\n"
        "def nap(args, ctx):\n"
        f"    subprocess.Popen(['/bin/sleep', '{marker}'])\n"
        "    time.sleep(60)\n")
    (folder / "loca.json").write_text(json.dumps({
        "name": "sleepy", "displayName": "Sleepy", "description": "Sleeps.", "entry": "main.py",
        "tools": [{"name": "nap", "description": "Nap.", "parameters": {"type": "object"},
                   "function": "nap", "permissions": {"run": [{"binary": "/bin/sleep", "reason": "Nap."}]}}]}))
    env = dict(os.environ)
    assert workbench("ext", "install", str(folder), "--yes").returncode == 0
    host = subprocess.Popen([sys.executable, "-m", "workbench", "call", "nap", "--grant-all"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker), "the tool never started"
    host.kill()
    host.wait()
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []
