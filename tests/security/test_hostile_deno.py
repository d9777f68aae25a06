"""TypeScript tools under Deno that try to get out — and meet two walls: Deno's own
permission flags, and the same Landlock, seccomp and namespaces as Python tools."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time

import pytest

from processes import described, processes_with

from workbench.events import ToolCallLog

pytestmark = pytest.mark.security

CODE = r'''
export async function readPath(args: { path: string }) {
  return await Deno.readTextFile(args.path);
}
export async function writePath(args: { path: string }) {
  await Deno.writeTextFile(args.path, "owned");
  return "wrote";
}
export async function fetchUrl(args: { url: string }) {
  const response = await fetch(args.url);
  return await response.text();
}
export async function tcpConnect(args: { host: string; port: number }) {
  const conn = await Deno.connect({ hostname: args.host, port: args.port });
  conn.close();
  return "connected";
}
export async function udpSend(args: { port: number }) {
  const sock = Deno.listenDatagram({ port: 0, transport: "udp", hostname: "127.0.0.1" });
  await sock.send(new TextEncoder().encode("x"), { transport: "udp", hostname: "127.0.0.1", port: args.port });
  return "sent";
}
export async function unixConnect(args: { path: string }) {
  const conn = await Deno.connect({ transport: "unix", path: args.path });
  conn.close();
  return "connected";
}
export function readEnv(args: { key: string }) {
  return { value: Deno.env.get(args.key) ?? null };
}
export async function runBinary(args: { binary: string }) {
  const out = await new Deno.Command(args.binary, { args: ["-c", "echo escaped"] }).output();
  return new TextDecoder().decode(out.stdout);
}
export function killHost(args: { pid: number }) {
  Deno.kill(args.pid, "SIGTERM");
  return "signalled";
}
export async function leaveBehind(args: { marker: string }) {
  new Deno.Command("/bin/sleep", { args: [args.marker] }).spawn();
  return "spawned";
}
export function shout() {
  while (true) console.log("x".repeat(10000));
}
export function spin() {
  while (true) { /* busy */ }
}
export async function stubborn(_args: unknown, ctx: { signal: AbortSignal; log: (level: string, message: string) => void }) {
  ctx.log("info", "ignoring cancellation");
  while (true) await new Promise((r) => setTimeout(r, 10));
}
export function allocate() {
  const hoard: string[] = [];
  while (true) hoard.push("x".repeat(1 << 24) + Math.random());
}
export async function dlopen() {
  Deno.dlopen("/lib/x86_64-linux-gnu/libc.so.6", {});
  return "loaded";
}
'''

TOOLS = ["readPath", "writePath", "fetchUrl", "tcpConnect", "udpSend", "unixConnect", "readEnv",
         "runBinary", "killHost", "leaveBehind", "shout", "spin", "stubborn", "allocate", "dlopen"]


def declare(lab, **extra):
    tools = {name: {} for name in TOOLS}
    tools.update(extra)
    lab.extension("hostilets", CODE, tools, runtime="deno")


def refused(outcome, *words):
    assert not outcome.ok, outcome.result
    assert any(w in outcome.error["message"] for w in words), outcome.error


async def healthy(lab):
    outcome = await lab.host.tools.call("word_count", {"text": "still here"})
    assert outcome.ok and outcome.result["words"] == 2


async def test_files_outside_grants(lab, tmp_path):
    granted = tmp_path / "granted"
    granted.mkdir()
    (granted / "ok.txt").write_text("fine")
    (tmp_path / "secret.txt").write_text("secret")
    (granted / "link").symlink_to(tmp_path / "secret.txt")
    declare(lab, readPath={"permissions": {"read": [{"path": str(granted), "reason": "Its folder."}]}})
    assert (await lab.call("readPath", {"path": str(granted / "ok.txt")})).result == "fine"
    for target in (tmp_path / "secret.txt", "/etc/passwd", "/proc/self/environ"):
        refused(await lab.call("readPath", {"path": str(target)}), "NotCapable", "Requires read access",
                "denied")
    refused(await lab.call("readPath", {"path": str(granted / "link")}), "NotCapable", "denied",
            "Requires read", "No such file")
    refused(await lab.call("writePath", {"path": str(tmp_path / "dropped.txt")}), "write access")
    assert not (tmp_path / "dropped.txt").exists()
    await healthy(lab)


async def test_network_without_a_grant(lab):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    path = lab.root / "agent.sock"
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(path))
    unix.listen()
    try:
        declare(lab)
        refused(await lab.call("tcpConnect", {"host": "127.0.0.1", "port": port}), "net access")
        refused(await lab.call("fetchUrl", {"url": f"http://127.0.0.1:{port}/"}), "net access")
        refused(await lab.call("udpSend", {"port": port}), "net access", "unstable", "not a function",
                "NotCapable")
        refused(await lab.call("unixConnect", {"path": str(path)}), "read access", "write access",
                "NotCapable")
    finally:
        server.close()
        unix.close()
    await healthy(lab)


async def test_env_binaries_signals_and_ffi(lab, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_SECRET", "hunter2")
    declare(lab)
    refused(await lab.call("readEnv", {"key": "WORKBENCH_TEST_SECRET"}), "env access")
    refused(await lab.call("runBinary", {"binary": "/bin/sh"}), "run access")
    refused(await lab.call("killHost", {"pid": os.getpid()}), "run access", "NotCapable", "sys access")
    refused(await lab.call("dlopen", {}), "ffi access", "NotCapable")
    await healthy(lab)


async def test_granted_run_cannot_leave_anything_behind(lab):
    # A duration sleep takes, and no other run of this test on the machine uses.
    marker = f"{random.randint(20_000, 90_000)}.{os.getpid()}"
    declare(lab, leaveBehind={"permissions": {"run": [{"binary": "/bin/sleep", "reason": "Sleep."}]}})
    outcome = await lab.call("leaveBehind", {"marker": marker})
    assert outcome.ok and outcome.result == "spawned", outcome.error
    deadline = time.monotonic() + 30
    while processes_with(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    left = processes_with(marker)
    assert left == [], described(left)


async def test_bounds_and_cancellation(lab):
    declare(lab, spin={"timeoutMs": 1500}, stubborn={"timeoutMs": 86_400_000})
    lab.host.sandbox.limits.memory_mb = 256
    shout = await lab.call("shout", {})
    assert shout.error["kind"] == "output_too_large", shout.error
    assert (await lab.call("spin", {})).error["kind"] == "timeout"
    memory = await lab.call("allocate", {})
    assert not memory.ok
    logged = asyncio.Event()
    lab.host.bus.subscribe(lambda e: logged.set() if isinstance(e, ToolCallLog) else None)
    task = asyncio.ensure_future(lab.call("stubborn", {}))
    await asyncio.wait_for(logged.wait(), 60)  # the tool runs, its signal ignored
    # The tool would run past the test's time-out (its own is a day): only a kill ends it.
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert lab.host.store.list_tool_calls()[0]["status"] == "cancelled"
    await healthy(lab)
