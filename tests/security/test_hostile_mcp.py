"""Sandboxed MCP servers written by a stranger, in Python and in Node, that go after the
host — and fail.

Each server is given a write grant on one folder and a read grant on another (or no
grant at all), and tries: to see the filesystem (``/etc``, ``/root``, the home, the
workbench's home where the store and secrets live), the host's processes through
``/proc``, to change file metadata (setuid, owner, times, extended attributes) outside
its write grant, to watch a folder with inotify, to have its children hold more memory
than its limit, and to be started again after a granted folder was swapped for a
symbolic link. Each attempt must fail, be reported (the server's own answer, the
status row, the call's error, a notice) and leave the host healthy; the legitimate
uses beside them (metadata changes inside the write grant) must work.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from workbench.config.home import Home
from workbench.core.host import Host
from workbench.events import Notice
from workbench.mcp.config import ServerConfig, write_server
from workbench.sandbox import cgroup
from workbench.sandbox.process import UNUSED_ID

pytestmark = pytest.mark.security

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / ".mcp-servers"
PYTHON = SERVERS / "venv" / "bin" / "python"

PYTHON_SERVER = r'''
import ctypes, json, os, subprocess, sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("hostile")


def attempt(change):
    try:
        found = change()
        return "done" if found is None else found
    except OSError as exc:
        return exc.strerror or str(exc)


@server.tool()
def look(paths: list[str]) -> str:
    """Stat and list paths."""
    def one(path):
        os.stat(path)
        return sorted(os.listdir(path)) if os.path.isdir(path) else "a file"
    return json.dumps({path: attempt(lambda path=path: one(path)) for path in paths})


@server.tool()
def processes(host_pid: int) -> str:
    """The processes it sees, and a host process's command line."""
    def read():
        with open(f"/proc/{host_pid}/cmdline", "rb") as handle:
            return handle.read().decode(errors="replace")
    return json.dumps({"pids": attempt(lambda: sorted(int(e) for e in os.listdir("/proc") if e.isdigit())),
                       "host": attempt(read), "me": os.getpid()})


@server.tool()
def meddle(path: str) -> str:
    """Change a file's metadata every way."""
    return json.dumps({
        "setuid": attempt(lambda: os.chmod(path, 0o4755)),
        "chmod": attempt(lambda: os.chmod(path, 0o640)),
        "chown-away": attempt(lambda: os.chown(path, 1234, 1234)),
        "chown-own": attempt(lambda: os.chown(path, os.getuid(), os.getgid())),
        "utime": attempt(lambda: os.utime(path, (1, 1))),
        "setxattr": attempt(lambda: os.setxattr(path, "user.hostile", b"1")),
    })


@server.tool()
def watch(path: str) -> str:
    """Watch a folder with inotify."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        return json.dumps("init: " + os.strerror(ctypes.get_errno()))
    found = libc.inotify_add_watch(fd, path.encode(), 0xFFF)
    return json.dumps("watching" if found >= 0 else "add: " + os.strerror(ctypes.get_errno()))


@server.tool()
def hog(megabytes: int) -> str:
    """A child that holds more memory than it was given."""
    child = subprocess.run([sys.executable, "-c", f"data = b'x' * ({megabytes} << 20); print('survived')"],
                           capture_output=True, text=True)
    return json.dumps({"returncode": child.returncode, "out": child.stdout.strip()})


@server.tool()
def linger() -> str:
    """Outlive the end of its input (a thread that never ends)."""
    import threading, time
    threading.Thread(target=time.sleep, args=(600,)).start()
    return json.dumps("lingering")


server.run()
'''

NODE_SERVER = r'''
const fs = require("fs"), cp = require("child_process"), readline = require("readline");
function attempt(change) {
  try { const found = change(); return found === undefined ? "done" : found; }
  catch (e) { return e.code || String(e); }
}
const tools = {
  look: ({paths}) => Object.fromEntries(paths.map(p => [p, attempt(() => {
    const info = fs.statSync(p);
    return info.isDirectory() ? fs.readdirSync(p).sort() : "a file";
  })])),
  processes: ({host_pid}) => ({
    pids: attempt(() => fs.readdirSync("/proc").filter(e => /^\d+$/.test(e)).map(Number).sort((a, b) => a - b)),
    host: attempt(() => fs.readFileSync(`/proc/${host_pid}/cmdline`, "utf8")), me: process.pid}),
  meddle: ({path}) => ({
    setuid: attempt(() => fs.chmodSync(path, 0o4755)),
    chmod: attempt(() => fs.chmodSync(path, 0o640)),
    "chown-away": attempt(() => fs.chownSync(path, 1234, 1234)),
    "chown-own": attempt(() => fs.chownSync(path, process.getuid(), process.getgid())),
    utime: attempt(() => fs.utimesSync(path, 1, 1))}),
  linger: () => { setInterval(() => {}, 1000); return "lingering"; },
  watch: ({path}) => attempt(() => { const w = fs.watch(path); w.close(); return "watching"; }),
  hog: ({megabytes}) => {
    const child = cp.spawnSync(process.execPath,
      ["-e", `const b = Buffer.alloc(${megabytes} * 1048576, 1); console.log("survived")`]);
    return {returncode: child.status, signal: child.signal, out: String(child.stdout || "").trim(),
            error: child.error ? String(child.error) : null};
  },
};
const schema = {type: "object", additionalProperties: true};
const out = m => process.stdout.write(JSON.stringify({jsonrpc: "2.0", ...m}) + "\n");
readline.createInterface({input: process.stdin}).on("line", line => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize") {
    out({id: m.id, result: {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}},
                            serverInfo: {name: "hostile", version: "1.0.0"}}});
  } else if (m.method === "tools/list") {
    out({id: m.id, result: {tools: Object.keys(tools).map(name => ({name, description: name, inputSchema: schema}))}});
  } else if (m.method === "tools/call") {
    const text = JSON.stringify(tools[m.params.name](m.params.arguments || {}));
    out({id: m.id, result: {content: [{type: "text", text}]}});
  } else if (m.method === "ping") {
    out({id: m.id, result: {}});
  } else {
    out({id: m.id, error: {code: -32601, message: "no such method"}});
  }
});
'''

KINDS = ("python", "node")


@pytest.fixture(autouse=True)
def servers_installed() -> None:
    assert PYTHON.exists(), "the MCP test servers are missing; `make test` installs them"


def hostile(kind: str, name: str, grants: tuple[str, ...] = ()) -> ServerConfig:
    if kind == "python":
        return ServerConfig(name=name, command=str(PYTHON), args=("-c", PYTHON_SERVER), sandbox=True,
                            grants=grants)
    return ServerConfig(name=name, command="node", args=("-e", NODE_SERVER), sandbox=True, grants=grants)


def open_host(home: Home, workdir: Path, *servers: ServerConfig, memory_mb: int | None = None) -> Host:
    if memory_mb is not None:
        with open(home.config_file, "a") as handle:
            handle.write(f"[sandbox]\nmemory_mb = {memory_mb}\n")
    for server in servers:
        write_server(home.config_file, server, replace=True)
    return Host.open(cwd=workdir)


async def ask(host: Host, server: str, tool: str, arguments: dict) -> Any:
    outcome = await host.tools.call(f"mcp__{server}__{tool}", arguments)
    assert outcome.ok, outcome.error
    text = outcome.result["content"][0]["text"]
    return json.loads(text)


async def healthy(host: Host, server: str) -> None:
    """The host still answers and the server still runs in its sandbox."""
    assert (await host.tools.call(f"mcp__{server}__look", {"paths": ["/"]})).ok
    row = next(r for r in host.mcp.servers() if r["name"] == server)
    assert row["state"] == "running" and row["sandbox"]


def server_pid(host: Host, name: str) -> int:
    """The server's own process: the launcher's grandchild (the middle process between)."""
    launcher = host.mcp.manager.servers[name].pid
    with open(f"/proc/{launcher}/task/{launcher}/children") as handle:
        middle = int(handle.read().split()[0])
    with open(f"/proc/{middle}/task/{middle}/children") as handle:
        return int(handle.read().split()[0])


def only(listing: Any, allowed: set[str]) -> bool:
    """A listing refused outright, or holding nothing but ``allowed``."""
    if isinstance(listing, str):
        return listing in ("Permission denied", "EACCES", "No such file or directory", "ENOENT")
    return set(listing) <= allowed


async def until(check, seconds: float = 15.0) -> Any:
    for _ in range(int(seconds / 0.05)):
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError("the condition did not come true in time")


@pytest.mark.parametrize("kind", KINDS)
async def test_a_server_sees_nothing_of_the_host(kind: str, home: Home, workdir: Path) -> None:
    (home.root / "secrets.toml").write_text("key = 'hidden'\n")
    home_dir = os.path.expanduser("~")
    host = open_host(home, workdir, hostile(kind, "stranger"))
    try:
        seen = await ask(host, "stranger", "look", {"paths": [
            "/etc", "/etc/shadow", "/etc/hostname", "/root/.bashrc", home_dir, str(home.root),
            str(home.root / "secrets.toml"), str(home.db_path), str(ROOT / "pyproject.toml"),
            str(ROOT / "workbench"), "/home", "/var", "/usr/bin"]})
        for hidden in ("/etc/shadow", "/etc/hostname", "/root/.bashrc", str(home.root),
                       str(home.root / "secrets.toml"), str(home.db_path), str(ROOT / "pyproject.toml"),
                       str(ROOT / "workbench"), "/home", "/var"):
            assert seen[hidden] in ("No such file or directory", "ENOENT"), (hidden, seen[hidden])
        # /etc cannot be listed (Landlock), and holds only the few world-readable files
        # programs read at start; of the home, at most the way to the server's own
        # interpreter (pyenv's, here); of /usr/bin, its runtime alone.
        assert only(seen["/etc"], {"ssl", "hosts", "resolv.conf", "nsswitch.conf", "passwd", "group",
                                   "gitconfig", "ld.so.cache", "localtime"}), seen["/etc"]
        assert only(seen[home_dir], {".pyenv"}), seen[home_dir]
        assert only(seen["/usr/bin"], {"node", "env"}), seen["/usr/bin"]
        procs = await ask(host, "stranger", "processes", {"host_pid": os.getpid()})
        # PID 1 of its own namespace, whose /proc (when it may list it at all) holds it alone.
        assert procs["me"] == 1 and (procs["pids"] == [1] or only(procs["pids"], set())), procs
        assert procs["host"] in ("No such file or directory", "ENOENT")
        # Outside, the server is the unused id (the host is root) in its own user namespace.
        pid = server_pid(host, "stranger")
        with open(f"/proc/{pid}/status") as handle:
            uids = next(line for line in handle if line.startswith("Uid:")).split()[1:]
        assert {int(u) for u in uids} == ({UNUSED_ID} if os.getuid() == 0 else {os.getuid()})
        assert os.readlink(f"/proc/{pid}/ns/user") != os.readlink("/proc/self/ns/user")
        assert os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
        await healthy(host, "stranger")
    finally:
        await host.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_metadata_changes_only_inside_the_write_grant(kind: str, home: Home, workdir: Path,
                                                           tmp_path: Path) -> None:
    out, data, elsewhere = tmp_path / "out", tmp_path / "data", tmp_path / "elsewhere"
    for folder in (out, data, elsewhere):
        folder.mkdir()
        (folder / "file.txt").write_text("x")
        os.chmod(folder / "file.txt", 0o644)
    before = {f: os.stat(f / "file.txt") for f in (data, elsewhere)}
    host = open_host(home, workdir, hostile(kind, "meddler", (f"write:{out}", f"read:{data}")))
    try:
        inside = await ask(host, "meddler", "meddle", {"path": str(out / "file.txt")})
        assert inside["chmod"] == "done" and inside["utime"] == "done" and inside["chown-own"] == "done"
        assert inside["setuid"] != "done" and inside["chown-away"] != "done"
        if kind == "python":
            assert inside["setxattr"] == "done"
            assert os.getxattr(out / "file.txt", "user.hostile") == b"1"
        changed = os.stat(out / "file.txt")
        assert changed.st_mode & 0o7777 == 0o640 and changed.st_mtime == 1
        for target in (data / "file.txt", elsewhere / "file.txt"):
            outcome = await ask(host, "meddler", "meddle", {"path": str(target)})
            assert all(v != "done" for v in outcome.values()), (target, outcome)
        for folder in (data, elsewhere):
            after = os.stat(folder / "file.txt")
            assert (after.st_mode, after.st_uid, after.st_mtime) == (
                before[folder].st_mode, before[folder].st_uid, before[folder].st_mtime)
        assert not os.listxattr(data / "file.txt")
        for folder in (elsewhere, data, out):
            watched = await ask(host, "meddler", "watch", {"path": str(folder)})
            assert watched != "watching", (folder, watched)
        await healthy(host, "meddler")
    finally:
        await host.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_a_granted_folder_swapped_for_a_link_between_starts_is_refused(
        kind: str, home: Home, workdir: Path, tmp_path: Path) -> None:
    granted = tmp_path / "granted"
    granted.mkdir()
    config = hostile(kind, "swapped", (f"read:{granted}",))
    host = open_host(home, workdir, config)
    try:
        assert (await ask(host, "swapped", "look", {"paths": [str(granted)]}))[str(granted)] == []
    finally:
        await host.aclose()
    granted.rmdir()
    granted.symlink_to(home.root)  # where the store and the secrets live
    host = Host.open(cwd=workdir)
    try:
        outcome = await host.tools.call("mcp__swapped__look", {"paths": [str(granted)]})
        assert not outcome.ok and outcome.error["kind"] == "unavailable"
        assert str(granted) in outcome.error["message"] and "has changed" in outcome.error["message"]
        row = next(r for r in host.mcp.servers() if r["name"] == "swapped")
        assert row["state"] in ("backoff", "fatal") and str(granted) in row["reason"]
        assert row["pid"] is None
    finally:
        await host.aclose()


@pytest.mark.parametrize("kind", KINDS)
async def test_children_over_the_memory_limit_are_killed_and_reported(kind: str, home: Home,
                                                                     workdir: Path) -> None:
    runtime = str(PYTHON) if kind == "python" else "node"
    host = open_host(home, workdir, hostile(kind, "hog", (f"run:{runtime}",)), memory_mb=256)
    notices: list[Notice] = []
    host.bus.subscribe(lambda event: notices.append(event) if isinstance(event, Notice) else None)
    try:
        launcher = None
        child = await ask(host, "hog", "hog", {"megabytes": 600})
        assert child["out"] != "survived"
        # Killed by the kernel's OOM killer, inside the server's cgroup alone.
        assert (child["returncode"] == -9 if kind == "python" else child["signal"] == "SIGKILL"), child
        note = await until(lambda: next((n for n in notices if "memory limit" in n.message), None))
        assert "MCP server hog" in note.message and "256 MiB" in note.message
        row = next(r for r in host.mcp.servers() if r["name"] == "hog")
        assert "went over the memory limit" in row["sandbox_note"]
        assert "went over the memory limit" in (home.logs_dir / "mcp-hog.log").read_text()
        launcher = host.mcp.manager.servers["hog"].pid
        assert (Path(str(cgroup.memory_root())) / f"{launcher}-{launcher}").is_dir()
        await healthy(host, "hog")
    finally:
        await host.aclose()
    # The server's cgroup goes with it.
    assert launcher is not None
    await until(lambda: not (Path(str(cgroup.memory_root())) / f"{launcher}-{launcher}").exists(), 10)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_server_that_outlives_its_input_is_ended_whole_and_its_cgroups_removed(
        kind: str, home: Home, workdir: Path) -> None:
    runtime = str(PYTHON) if kind == "python" else "node"
    host = open_host(home, workdir, hostile(kind, "lingerer", (f"run:{runtime}",)))
    try:
        assert await ask(host, "lingerer", "linger", {}) == "lingering"
        launcher = host.mcp.manager.servers["lingerer"].pid
        server = server_pid(host, "lingerer")
        groups = [Path(str(root)) / f"{launcher}-{launcher}" for root in (cgroup.memory_root(), cgroup.pids_root())
                  if root is not None]
        assert groups and all(group.is_dir() for group in groups)
    finally:
        await host.aclose()
    await until(lambda: not any(os.path.exists(f"/proc/{p}") for p in (launcher, server)), 10)
    await until(lambda: not any(group.exists() for group in groups), 10)
