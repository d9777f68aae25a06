"""The cost of a sandboxed tool call, beside its baselines, in one run.

Run with ``.venv/bin/python bench/tool_calls.py``. For a trivial tool in Python and in
TypeScript (Deno) it prints p50 and p95 of:

- the same function called in-process (the floor: no isolation at all);
- a bare interpreter start (``python -I -S -c pass``), what any fresh process costs;
- the first call through the gateway and the sandbox (no worker waiting yet);
- later calls, each finding a worker started ahead with the tool's grants.

Overhead is a call's time minus the in-process time. Goals: later calls at most 4 ms
(Python) and 5 ms (Deno) at p50; a first call at most 60 ms for either.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = int(os.environ.get("BENCH_RUNS", "40"))
FIRSTS = int(os.environ.get("BENCH_FIRSTS", "8"))
GAP_S = 0.05
"""Pause between later calls, as a model's turn would leave: time for the next worker."""

PY = "def trivial(args, ctx):\n    return {'n': args.get('n', 0) + 1}\n"
TS = "export function trivial(args: { n?: number }) { return { n: (args.n ?? 0) + 1 }; }\n"


def make_extension(root: Path, runtime: str) -> Path:
    folder = root / f"bench-{runtime}"
    folder.mkdir(parents=True)
    entry = "main.py" if runtime == "python" else "index.ts"
    (folder / entry).write_text(PY if runtime == "python" else TS)
    (folder / "loca.json").write_text(json.dumps({
        "name": f"bench-{runtime}", "displayName": "Bench", "description": "A trivial tool.",
        "entry": entry, "tools": [{"name": f"trivial_{runtime}", "description": "Add one.",
                                   "parameters": {"type": "object"}, "function": "trivial"}]}))
    return folder


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


def line(label: str, samples: list[float], floor_ms: float = 0.0, goal: float | None = None) -> str:
    p50, p95 = pct(samples, 0.5), pct(samples, 0.95)
    text = f"{label:<34} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms"
    if floor_ms or goal is not None:
        text += f"   overhead p50 {p50 - floor_ms:6.2f} ms"
    if goal is not None:
        text += f"   goal <= {goal:g} ms  {'ok' if p50 - floor_ms <= goal else 'OVER'}"
    return text


def in_process_floor() -> list[float]:
    namespace: dict = {}
    exec(PY, namespace)
    samples = []
    for _ in range(RUNS * 10):
        start = time.perf_counter()
        namespace["trivial"]({"n": 1}, None)
        samples.append(time.perf_counter() - start)
    return samples


def bare_interpreter() -> list[float]:
    samples = []
    for _ in range(max(5, RUNS // 4)):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        samples.append(time.perf_counter() - start)
    return samples


def frame_checks() -> tuple[list[float], list[float]]:
    """A trivial call's messages from its worker (ready, result) parsed as bare JSON, and
    checked as the host checks them (``protocol.decode``: bounds, depth, UTF-8, NaN,
    lone surrogates): the cost of the check is the difference."""
    from workbench.sandbox import protocol

    lines = [protocol.encode(protocol.notification("worker/ready", {})),
             protocol.encode(protocol.result(1, {"n": 2}))]
    bare, checked = [], []
    for _ in range(RUNS * 10):
        start = time.perf_counter()
        for raw in lines:
            json.loads(raw)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        for raw in lines:
            protocol.decode(raw)
        checked.append(time.perf_counter() - start)
    return bare, checked


async def measure(root: Path, runtime: str) -> tuple[list[float], list[float]]:
    from workbench.core.host import Host
    from workbench.tools.loader import load_extension

    folder = make_extension(root, runtime)
    name = f"trivial_{runtime}"
    firsts, laters = [], []
    with Host.open(cwd=root) as host:
        load_extension(host.registry, folder)
        await host.sandbox.report()
        for index in range(FIRSTS):
            host.sandbox.forget()
            await asyncio.sleep(0.05)
            start = time.perf_counter()
            outcome = await host.call_tool(name, {"n": index})
            firsts.append(time.perf_counter() - start)
            assert outcome.ok, outcome.error
        for index in range(RUNS):
            await asyncio.sleep(GAP_S)
            start = time.perf_counter()
            outcome = await host.call_tool(name, {"n": index})
            laters.append(time.perf_counter() - start)
            assert outcome.ok and outcome.result == {"n": index + 1}, outcome.error
    return firsts, laters


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="workbench-bench-"))
    os.environ["WORKBENCH_HOME"] = str(root / "home")
    floor = in_process_floor()
    floor_ms = pct(floor, 0.5)
    print(line("in-process call (floor)", floor))
    print(line("bare interpreter start", bare_interpreter()))
    bare, checked = frame_checks()
    print(line("a call's messages, json.loads", bare))
    print(line("a call's messages, protocol.decode", checked, pct(bare, 0.5)))
    goals = {"python": (60, 4), "deno": (60, 5)}
    for runtime in ("python", "deno"):
        firsts, laters = asyncio.run(measure(root, runtime))
        first_goal, later_goal = goals[runtime]
        print(line(f"{runtime}: first call (cold worker)", firsts, floor_ms, first_goal))
        print(line(f"{runtime}: later calls (warm worker)", laters, floor_ms, later_goal))


if __name__ == "__main__":
    main()
