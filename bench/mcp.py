"""A warm MCP tool call through the workbench, beside the same server called directly.

Run with ``.venv/bin/python bench/mcp.py`` (``make test`` installs the servers into
``.mcp-servers/``). In one run, for ``server-everything``'s ``echo`` (Node) and
``mcp-server-time``'s ``get_current_time`` (Python), it prints p50 and p95 of:

- the call made directly with the SDK's own client (``ClientSession`` over
  ``stdio_client``), warm: the baseline;
- the same call through the workbench, warm: ``ToolGateway.call`` (validation, hooks,
  permissions, the store's record and audit — queued to its writer thread, whose
  commits overlap the calls — events) and the MCP layer, same server;
- the MCP layer alone: the registry tool's handler (the workbench's own stdio
  transport, progress, cancellation and form wiring, the result kept whole);
- a no-op host-native tool through the same gateway: what the gateway alone costs.

The four are interleaved call by call, in a new random order each round (seeded, so runs
compare), so that a busy machine weighs on all alike. A fixed order would not: a call
that follows the direct one pays for the SDK's own server still finishing its reply on
the shared cores (about 50 us measured on a 2-core machine), whichever way it is.

Goal: the workbench's warm call at most 1.2x the direct one (p50).

Then, for the same two servers, the start: from the first call of a stopped server to its
answer (process start, MCP handshake, listing, the call), unsandboxed and sandboxed
(``sandbox = true``: launcher, user and other namespaces, private root, Landlock,
seccomp, the metadata supervisor), interleaved start by start (``BENCH_STARTS``, 15).
The sandboxed start is printed beside the unsandboxed baseline of the same run.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on the import path, and this file
# (mcp.py) would hide the ``mcp`` SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
ROOT = HERE.parent
SERVERS = ROOT / ".mcp-servers"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
TIME = SERVERS / "venv" / "bin" / "mcp-server-time"
RUNS = int(os.environ.get("BENCH_RUNS", "300"))
STARTS = int(os.environ.get("BENCH_STARTS", "15"))
WARMUP = 50
GOAL = 1.2

CASES = [
    ("everything", "node", [str(EVERYTHING), "stdio"], "echo", {"message": "hello"}),
    ("time", str(TIME), [], "get_current_time", {"timezone": "Europe/Paris"}),
]


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


async def timed(call) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def measure(name: str, command: str, args: list[str], tool: str,
                  arguments: dict) -> dict[str, list[float]]:
    """The four ways of one call, interleaved so that all of them see the same load."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from workbench.core.host import Host
    from workbench.mcp.config import ServerConfig, write_server
    from workbench.mcp.naming import tool_name
    from workbench.tools.context import ToolContext
    from workbench.tools.registry import HOST_RUNTIME, Tool

    home = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    os.environ["WORKBENCH_HOME"] = str(home)
    write_server(home / "config.toml", ServerConfig(name=name, command=command, args=tuple(args)))
    host = Host.open(cwd=home)

    async def noop(arguments: dict, ctx: object) -> dict:
        return {"ok": True}

    async def no_form(questions: list) -> list:
        return []

    host.registry.add(Tool(name="bench_noop", description="", parameters={"type": "object"},
                           extension="bench", source="builtin", function="noop", folder=home,
                           entry=None, runtime=HOST_RUNTIME, handler=noop))
    full = tool_name(name, tool)
    handler = host.registry.resolve(full).handler
    ctx = ToolContext(sink=lambda kind, data: None, asker=no_form)
    params = StdioServerParameters(command=command, args=args)
    ways = {
        "direct (SDK client)": None,
        "through the workbench": lambda: host.gateway.call(full, arguments),
        "MCP layer alone (its handler)": lambda: handler(arguments, ctx),
        "gateway alone (no-op host tool)": lambda: host.gateway.call("bench_noop", {}),
    }
    samples: dict[str, list[float]] = {way: [] for way in ways}
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            ways["direct (SDK client)"] = lambda: session.call_tool(tool, arguments)
            outcome = await host.gateway.call(full, arguments)
            assert outcome.ok, outcome.error
            order = list(ways)
            shuffle = random.Random(0).shuffle
            for run in range(WARMUP + RUNS):
                shuffle(order)
                for way in order:
                    took = await timed(ways[way])
                    if run >= WARMUP:
                        samples[way].append(took)
    finally:
        await host.aclose()
    return samples


async def measure_starts(name: str, command: str, args: list[str], tool: str,
                         arguments: dict) -> dict[str, list[float]]:
    """Start to first answer, unsandboxed and sandboxed, alternating."""
    from workbench.core.host import Host
    from workbench.mcp.config import ServerConfig, write_server

    home = Path(tempfile.mkdtemp(prefix="bench-mcp-start-"))
    os.environ["WORKBENCH_HOME"] = str(home)
    grants = (f"read:{SERVERS}",) if command == "node" else ()
    ways = {"unsandboxed": ServerConfig(name=f"{name}plain", command=command, args=tuple(args)),
            "sandboxed": ServerConfig(name=f"{name}boxed", command=command, args=tuple(args),
                                      sandbox=True, grants=grants)}
    for config in ways.values():
        write_server(home / "config.toml", config)
    host = Host.open(cwd=home)
    samples: dict[str, list[float]] = {way: [] for way in ways}
    try:
        for run in range(STARTS + 1):
            for way, config in ways.items():
                start = time.perf_counter()
                outcome = await host.tools.call(f"mcp__{config.name}__{tool}", arguments)
                took = time.perf_counter() - start
                assert outcome.ok, outcome.error
                if run:  # the first start of each warms the disk cache
                    samples[way].append(took)
                await host.mcp.manager.servers[config.name].stop()
    finally:
        await host.aclose()
    return samples


def _reporter():
    """``_report.report``, loaded by path: this file's folder is off the import path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_report", HERE / "_report.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules["_report"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.report


report = _reporter()


async def main() -> int:
    missing = [p for p in (EVERYTHING, TIME) if not p.exists()]
    if missing:
        print(f"missing {', '.join(map(str, missing))}; run `make test` (it installs them)")
        return 2
    worst = 0.0
    for name, command, args, tool, arguments in CASES:
        samples = await measure(name, command, args, tool, arguments)
        base, through = samples["direct (SDK client)"], samples["through the workbench"]
        ratio = pct(through, 0.5) / pct(base, 0.5)
        worst = max(worst, ratio)
        print(f"{name} / {tool} ({RUNS} warm calls each way, interleaved)")
        for label, found in samples.items():
            print(f"  {label:<34} p50 {pct(found, 0.5):6.3f} ms  p95 {pct(found, 0.95):6.3f} ms"
                  f"  mean {statistics.fmean(found) * 1000:6.3f} ms")
        report("mcp", f"warm call, {name} / {tool} through the workbench", pct(through, 0.5),
               pct(base, 0.5), "the SDK's direct call", max_ratio=GOAL)
    for name, command, args, tool, arguments in CASES:
        starts = await measure_starts(name, command, args, tool, arguments)
        print(f"{name}: start to first answer ({STARTS} starts each way, alternating)")
        for label, found in starts.items():
            print(f"  {label:<34} p50 {pct(found, 0.5):8.1f} ms  p95 {pct(found, 0.95):8.1f} ms")
        report("mcp", f"start to first answer, {name}, sandboxed", pct(starts["sandboxed"], 0.5),
               pct(starts["unsandboxed"], 0.5), "unsandboxed start")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
