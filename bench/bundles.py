"""Extension bundles: one ``extension_call`` of a small Node tool bundle through the gateway
(the revision read and checked against its digest, staged, run by Node in a shell worker
of the sandbox, its answer parsed) beside a plain ``node file.mjs`` that imports the same
entrypoint and prints its result, measured in the same run. Also the same call under
Deno's Node compatibility beside a plain ``deno run``.

Goal: a bundle call adds at most 250 ms to the plain run (a fresh sandboxed worker per
call: the zygote's fork, the namespaces, the private root, the runtime's own start).

Run: ``.venv/bin/python bench/bundles.py`` (``BENCH_RUNS`` calls each, default 15).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import report  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "15"))
ENTRY = "export function run(input) { return { count: Object.keys(input).length } }\n"
BUNDLE = {"manifest": {"schemaVersion": 1, "id": "count-entries", "kind": "tool",
                       "description": "Counts the entries in a JSON object", "entrypoint": "index.mjs",
                       "inputSchema": {"type": "object"}},
          "files": {"index.mjs": ENTRY}}
MAIN = ("import { run } from './index.mjs';\n"
        "console.log(JSON.stringify(run({ a: 1, b: 2 })));\n")


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def plain(folder: Path, command: list[str]) -> list[float]:
    (folder / "index.mjs").write_text(ENTRY)
    (folder / "main.mjs").write_text(MAIN)
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=True)
        samples.append(time.perf_counter() - start)
        assert done.stdout.strip() == '{"count":2}', done.stdout
    return samples


async def bundle_calls(project: Path, runtime: str) -> list[float]:
    from workbench.core.bundles import bundles, set_runtime
    from workbench.core.calls import CallOptions
    from workbench.core.host import Host

    options = CallOptions(grants=(("write", os.path.realpath(project)), ("read", os.path.realpath(project))))
    samples = []
    with Host.open(cwd=project) as host:
        await host.sandbox.report()
        set_runtime(host, runtime)
        digest = bundles(host).create(project, BUNDLE)["digest"]
        arguments = {"id": "count-entries", "digest": digest, "input": {"a": 1, "b": 2}}
        for _ in range(RUNS + 1):
            start = time.perf_counter()
            outcome = await host.tools.call("extension_call", arguments, options)
            samples.append(time.perf_counter() - start)
            assert outcome.ok and outcome.result["result"] == {"count": 2}, outcome.error
    return samples[1:]  # the first pays for the zygote's start


def main() -> None:
    from workbench.bundles.runtime import deno_binary, node_binary

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.environ.setdefault("WORKBENCH_HOME", str(root / "home"))
        for runtime, binary in (("node", node_binary()), ("deno", deno_binary())):
            if binary is None:
                print(f"{runtime}: not installed, skipped")
                continue
            folder = root / f"plain-{runtime}"
            folder.mkdir()
            command = [binary, "main.mjs"] if runtime == "node" else [
                binary, "run", "--no-prompt", "--quiet", f"--allow-read={folder}", "main.mjs"]
            base = median_ms(plain(folder, command))
            project = root / f"project-{runtime}"
            project.mkdir()
            figure = median_ms(asyncio.run(bundle_calls(project, runtime)))
            report("bundles", f"extension_call of a tool bundle ({runtime})", figure, base,
                   f"a plain `{runtime} {'run ' if runtime == 'deno' else ''}main.mjs`", max_over_ms=250)


if __name__ == "__main__":
    main()
