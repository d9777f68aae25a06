"""The pool of workers started ahead, with real workers: none until a tool is called,
one after a call, more after calls back to back (up to its bound), none once the tool
is idle, none under settings that changed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from extension_folders import write_extension

from workbench.core.host import Host
from workbench.sandbox.pool import PoolLimits
from workbench.tools.loader import load_extension


def trivial(root: Path) -> Path:
    return write_extension(root / "counter", "counter", ["count"],
                           code="def count(args, ctx):\n    return args.get('n', 0) + 1\n")


async def settled(host: Host) -> int:
    """Wait for the workers started ahead to be ready; how many there are."""
    tasks = host.sandbox.pool.starting()
    for task in tasks:
        await task
    return len(tasks)


async def test_the_pool_follows_use_and_lets_go(tmp_path):
    async with Host.open(cwd=tmp_path) as host:
        load_extension(host.registry, trivial(tmp_path))
        host.sandbox.pool.limits = PoolLimits(per_tool=3, total=8, memory_mb=1024, idle_s=3600)
        assert await settled(host) == 0, "nothing is started before a tool is called"
        assert (await host.tools.call("count", {"n": 1})).result == 2
        assert await settled(host) == 1, "one worker after a call"
        for n in range(6):  # back to back: a call finds its worker ready, the next does not
            assert (await host.tools.call("count", {"n": n})).result == n + 1
        assert await settled(host) == 3, "more after calls in a row, up to the bound"
        for n in range(3):  # spaced calls find one ready each time: the lane stays at its size
            assert (await host.tools.call("count", {"n": n})).result == n + 1
            assert await settled(host) == 3

        host.sandbox.pool.limits = PoolLimits(per_tool=3, total=8, memory_mb=1024, idle_s=0.05)
        assert (await host.tools.call("count", {"n": 1})).result == 2
        assert await settled(host) >= 1
        deadline = time.monotonic() + 30
        while host.sandbox.pool.starting() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert not host.sandbox.pool.starting(), "an idle tool keeps no worker"
        assert host.sandbox.pool.sizes() == {}


async def test_a_settings_change_drops_the_workers_started_ahead(tmp_path):
    async with Host.open(cwd=tmp_path) as host:
        load_extension(host.registry, trivial(tmp_path))
        assert (await host.tools.call("count", {"n": 1})).result == 2
        assert await settled(host) == 1
        host.folder.follow_config()  # nothing changed: they stay
        assert len(host.sandbox.pool.starting()) == 1
        host.config.set("sandbox.memory_mb", 512)
        host.folder.follow_config()
        assert host.sandbox.pool.starting() == []
        assert (await host.tools.call("count", {"n": 1})).result == 2
        host.config.set("sandbox.pool_size", 0)
        host.folder.follow_config()
        assert (await host.tools.call("count", {"n": 1})).result == 2
        assert await settled(host) == 0, "sandbox.pool_size 0 starts none"
