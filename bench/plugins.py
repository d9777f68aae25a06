"""Plugins: a warm tool call through the contract (the core service, the breaker, the
HTTP call to the sandboxed process, the checks of its answer) beside the same handler
called in-process through the SDK's routing; and the start of an instance (sandboxed,
to its first answer) beside the same plugin started unsandboxed.

Run: ``.venv/bin/python bench/plugins.py``. The figures are medians.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "plugins" / "echo"
WARM = 300
STARTS = 7


def _reporter():
    """``_report.report``, loaded by path: this file's folder is off the import path."""
    spec = importlib.util.spec_from_file_location("_report", HERE / "_report.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules["_report"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.report


report = _reporter()


class PlainSpawner:
    """The baseline: the plugin's process started with no sandbox."""

    async def __call__(self, spec):
        argv = [sys.executable if spec.argv[0] in ("python", "python3") else spec.argv[0], *spec.argv[1:]]
        env = dict(spec.env, WORKBENCH_PLUGIN_LISTEN_FD=str(spec.listen_fd))
        with open(spec.log, "ab") as log:
            return subprocess.Popen(argv, cwd=spec.cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=log, pass_fds=(spec.listen_fd,), start_new_session=True)


def in_process_server():
    """The example's own server object, its handlers called without HTTP."""
    os.chdir(EXAMPLE)
    spec = importlib.util.spec_from_file_location("echo_server", EXAMPLE / "server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Server(secret="s", version="0.1.0", tools={"score": module.score})


async def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="bench-plugins-"))
    os.environ["WORKBENCH_HOME"] = str(root / "home")
    project = root / "project"
    (project / ".workbench").mkdir(parents=True)
    (project / ".workbench" / "config.toml").write_text("[plugins.echo]\nenabled = true\n")
    from workbench.config.home import Home
    from workbench.config.trust import trust_project
    from workbench.core.plugin_service import open_plugins

    home = Home.resolve().ensure()
    trust_project(home, project)
    service = open_plugins(project)
    await service.install(service.plan(EXAMPLE))
    arguments = {"answer": "a fairly short answer"}
    server = in_process_server()
    body = json.dumps({"input": arguments}).encode()
    headers = {"authorization": "Bearer s"}
    through, direct = [], []
    try:
        await service.call_tool("echo", "score", arguments)
        for _ in range(WARM):  # interleaved, so both see the same load
            start = time.perf_counter()
            await service.call_tool("echo", "score", arguments)
            through.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            status, value = server.handle("POST", "/tools/score", headers, body)
            json.dumps(value)
            direct.append((time.perf_counter() - start) * 1000)
        starts: dict[str, list[float]] = {"sandboxed": [], "unsandboxed": []}
        sandboxed = service.spawner
        for run in range(STARTS):
            for way, spawner in (("sandboxed", sandboxed), ("unsandboxed", PlainSpawner())):
                await service.stop("echo")
                service.spawner = spawner
                service.instances.clear()
                start = time.perf_counter()
                await service.call_tool("echo", "score", arguments)
                if run:  # the first of each warms the disk cache
                    starts[way].append((time.perf_counter() - start) * 1000)
        service.spawner = sandboxed
    finally:
        await service.aclose()
    load = os.getloadavg()[0]
    print(f"load average {load:.2f}; {WARM} warm calls each way, interleaved; {STARTS - 1} starts each way")
    report("plugins", "warm tool call through the contract (sandboxed)", statistics.median(through),
           statistics.median(direct), "the same handler in-process", max_over_ms=5.0)
    report("plugins", "start of an instance to its first answer, sandboxed",
           statistics.median(starts["sandboxed"]), statistics.median(starts["unsandboxed"]),
           "the same plugin unsandboxed")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
