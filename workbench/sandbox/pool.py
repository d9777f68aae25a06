"""Workers started ahead, a few per tool and policy, bounded in count and memory.

A worker still serves one call and dies; the pool only starts it before its call
arrives, so that calls of one tool in a row do not each wait for a worker to start.
A lane holds the workers started for one owner (a tool's grant key) and one policy
digest (the policy as JSON plus the identity of the extension's folder, entry file
and runtime folders). The caller computes the digest of what a fresh worker would get at call time
and is handed a pooled worker only when the digests are equal: a worker whose grants,
limits or code changed since it was started is never used.

How many a lane keeps (its ``target``) follows use: none until the tool was called,
one after a call, one more each time a call found no worker ready (or came while
another call of the lane ran), up to ``PoolLimits.per_tool``. A call after which its
lane still holds a ready worker puts the start of the next ones off until no call of
the lane came for ``REFILL_QUIET_S`` (a burst's next call takes the ready one, and
does not share the cores with workers starting); a lane dropped meanwhile starts none. A lane nobody called
for ``PoolLimits.idle_s`` seconds is dropped. All lanes together hold at most
``PoolLimits.total`` workers and ``PoolLimits.memory_mb`` of resident memory (each
worker charged what its processes hold once ready, one still starting what the last
ready one of its runtime held); a lane that needs room takes it from the one used
longest ago. Dropping a worker kills it.

The pool starts only what the caller hands it (``after`` with ``standing`` true: a
call whose every grant is a standing one); it never starts a worker for a grant given
for one call. A worker started ahead is sandboxed and waits with its runtime loaded:
its tool's module is imported only when its call arrives (``worker.py``,
``deno_worker.ts``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from workbench.sandbox.policy import Policy
from workbench.sandbox.worker_host import Worker

log = logging.getLogger(__name__)

DEFAULT_CHARGE_MB = 64.0
"""What a starting worker is charged before any worker of its runtime was measured."""

REFILL_QUIET_S = 0.008
"""A lane that still holds a ready worker after a call starts its next ones only once
no call of it came for this long: a worker's start costs some 10 ms of CPU (Deno's
more), which on a machine of few cores the next calls of a burst would wait for."""


@dataclass(frozen=True)
class PoolLimits:
    """How much the pool may keep (``[sandbox]`` ``pool_*`` settings)."""

    per_tool: int = 4
    """Workers one tool and policy keeps started ahead, at most (0: none)."""
    total: int = 8
    """Workers all tools keep started ahead together, at most."""
    memory_mb: int = 512
    """Resident memory of all workers kept started ahead together, in MiB, at most."""
    idle_s: float = 60.0
    """A tool's workers are dropped after this many seconds without a call of it."""


def digest(policy: Policy) -> str:
    """What a worker for ``policy`` is: its policy, and the extension folder, entry file
    and runtime folders (its installed dependencies among them) it would find now: an
    extension installed again, by this process or another, is another folder or file,
    even under the same path."""
    seen: list[list[int] | None] = []
    for path in (policy.extension_dir, policy.entry, *policy.python_path, *policy.runtime_read):
        try:
            info = os.stat(path)
            seen.append([info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns])
        except OSError:
            seen.append(None)
    blob = json.dumps([policy.to_json(), seen], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()


def resident_mb(pid: int) -> float:
    """Resident memory of a worker's supervisor and everything under it, in MiB."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/status") as status:
                for row in status:
                    if row.startswith("VmRSS:"):
                        total += int(row.split()[1])
                        break
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    todo.extend(int(child) for child in children.read().split())
        except (OSError, ValueError):
            continue
    return total / 1024


class _Lane:
    """The workers started ahead for one owner and one policy digest."""

    def __init__(self, owner: str, digest: str, policy: Policy) -> None:
        self.owner = owner
        self.digest = digest
        self.policy = policy
        self.workers: list[asyncio.Task[Worker]] = []
        self.target = 0
        self.running = 0
        self.idle: asyncio.TimerHandle | None = None
        self.refill: asyncio.TimerHandle | None = None
        """The start of its next workers, put off while its calls come in a burst."""

    def has_ready(self) -> bool:
        """Whether a worker of the lane is ready (its start ended, without an error)."""
        return any(task.done() and not task.cancelled() and task.exception() is None
                   for task in self.workers)


class WorkerPool:
    """The pool of one ``SandboxRunner``; see the module docstring.

    Args:
        start: Starts a worker for a policy (``Worker.start`` on the runner's zygote).
        limits: The bounds.
        clock: Seconds, monotonic.
    """

    def __init__(self, start: Callable[[Policy], Awaitable[Worker]], limits: PoolLimits | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._start = start
        self.limits = limits or PoolLimits()
        self.clock = clock
        self._lanes: OrderedDict[tuple[str, str], _Lane] = OrderedDict()
        """Least recently called first."""
        self._charge: dict[asyncio.Task[Worker], float] = {}
        self._measured: dict[str, float] = {}
        """The resident size of the last worker of each runtime that became ready."""
        self._epoch = 0
        self._epochs: dict[str, int] = {}

    # --- what the runner asks ----------------------------------------------------

    async def take(self, owner: str, digest: str, *, standing: bool) -> Worker | None:
        """A worker started ahead for exactly this owner and digest, or None.

        A call whose grants are all standing drops the owner's lanes of any other
        digest: its grants (or its code, or its limits) changed since they started.
        """
        if standing:
            for key in [k for k in self._lanes if k[0] == owner and k[1] != digest]:
                self._drop(key)
        lane = self._lanes.get((owner, digest))
        if lane is None:
            return None
        if any(task.get_loop() is not asyncio.get_running_loop() for task in lane.workers):
            self._drop((owner, digest))  # started on a loop that is not this call's
            return None
        self._lanes.move_to_end((owner, digest))
        self._touch(lane)
        ready = [task for task in lane.workers if task.done()]
        if (not ready or lane.running) and lane.target < self.limits.per_tool:
            lane.target += 1  # called again before a worker was ready: keep one more
        lane.running += 1
        while lane.workers:
            ready = [task for task in lane.workers if task.done()]
            task = ready[0] if ready else lane.workers[0]
            lane.workers.remove(task)
            self._charge.pop(task, None)
            try:
                # Shielded: a cancellation landing as the worker is handed over would
                # drop it running, its descriptors open; it is killed instead.
                worker = await asyncio.shield(task)
            except asyncio.CancelledError:
                _discard(task)
                raise
            except Exception as exc:  # ToolError, SandboxUnavailable, OSError: start anew
                log.debug("a worker started ahead for %s failed: %s", owner, exc)
                continue
            if not worker.finished:
                return worker
        return None

    def epoch(self, owner: str) -> tuple[int, int]:
        """What ``forget`` has dropped so far, for everyone and for ``owner``: taken by a
        call before its policy is built, handed back to ``after``."""
        return self._epoch, self._epochs.get(owner, 0)

    def after(self, owner: str, digest: str, policy: Policy, *, standing: bool, took: bool,
              epoch: tuple[int, int] | None = None) -> None:
        """A call of ``owner`` ended: start its next workers when ``standing``.

        Args:
            owner: The tool's grant key.
            digest: Its policy's ``digest``.
            policy: The policy (what the workers started ahead get).
            standing: Whether every grant of the call was a standing one; when not,
                nothing is started.
            took: Whether ``take`` was asked for this call and counted it running.
            epoch: ``epoch(owner)`` before the call's policy was built: when its lanes
                were dropped since (its grants were revoked, the extensions reloaded,
                the settings changed while it ran), nothing is started for its policy.
        """
        lane = self._lanes.get((owner, digest))
        if lane is not None and took:
            lane.running = max(0, lane.running - 1)
        if not standing or self.limits.per_tool <= 0:
            return
        if epoch is not None and epoch != self.epoch(owner):
            return
        if lane is None:
            lane = self._lanes[(owner, digest)] = _Lane(owner, digest, policy)
            self._touch(lane)
        lane.target = max(lane.target, 1)
        if lane.refill is not None:
            lane.refill.cancel()
            lane.refill = None
        if not lane.has_ready():
            self._fill(lane)  # the next call would wait for a worker: start it now
            return
        with contextlib.suppress(RuntimeError):  # no running loop: start now
            lane.refill = asyncio.get_running_loop().call_later(
                REFILL_QUIET_S, self._refill, (owner, digest), lane)
            return
        self._fill(lane)

    def _refill(self, key: tuple[str, str], lane: _Lane) -> None:
        lane.refill = None
        if self._lanes.get(key) is lane:  # not dropped since (grants, code or settings changed)
            self._fill(lane)

    def forget(self, owner: str | None = None) -> None:
        """Drop the lanes of one owner, or all (grants, extensions or settings changed)."""
        if owner is None:
            self._epoch += 1
        else:
            self._epochs[owner] = self._epochs.get(owner, 0) + 1
        for key in [k for k in self._lanes if owner is None or k[0] == owner]:
            self._drop(key)

    def sizes(self) -> dict[str, int]:
        """Workers kept started ahead, by owner (for tests and benchmarks)."""
        found: dict[str, int] = {}
        for lane in self._lanes.values():
            found[lane.owner] = found.get(lane.owner, 0) + len(lane.workers)
        return found

    def put_off(self) -> list[str]:
        """The owners whose lane's next workers are put off until its burst of calls ends."""
        return [lane.owner for lane in self._lanes.values() if lane.refill is not None]

    def lanes(self) -> list[tuple[str, Policy, int]]:
        """Each lane's owner, policy and how many workers it holds."""
        return [(lane.owner, lane.policy, len(lane.workers)) for lane in self._lanes.values()]

    def held(self) -> tuple[int, float]:
        """How many workers the pool holds, and the memory charged for them (MiB)."""
        return len(self._charge), sum(self._charge.values())

    def starting(self) -> list[asyncio.Task[Worker]]:
        """The workers the pool holds, ready or still starting; a start put off while a
        lane's calls came in a burst (``REFILL_QUIET_S``) is made now, since whoever asks
        is about to wait for what a next call would find."""
        for key, lane in list(self._lanes.items()):
            if lane.refill is not None:
                lane.refill.cancel()
                self._refill(key, lane)
        return self._tasks()

    def _tasks(self) -> list[asyncio.Task[Worker]]:
        return [task for lane in self._lanes.values() for task in lane.workers]

    async def aclose(self) -> None:
        """Drop every lane, awaiting the workers still starting so none is left running."""
        tasks = self._tasks()
        for key in list(self._lanes):
            lane = self._lanes.pop(key)
            for handle in (lane.idle, lane.refill):
                if handle is not None:
                    handle.cancel()
        self._charge.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                worker = await task
            except BaseException:
                continue
            worker.kill()

    # --- keeping the bounds ------------------------------------------------------

    def _fill(self, lane: _Lane) -> None:
        while len(lane.workers) < lane.target and self._room(lane):
            task = asyncio.ensure_future(self._started(lane.policy))
            lane.workers.append(task)
            self._charge[task] = self._measured.get(lane.policy.runtime, DEFAULT_CHARGE_MB)

    def _room(self, lane: _Lane) -> bool:
        """Whether one more worker fits, after dropping those of lanes used longer ago."""
        return self._within(1, self._measured.get(lane.policy.runtime, DEFAULT_CHARGE_MB), spare=lane)

    def _within(self, count: int, memory_mb: float, spare: _Lane | None = None) -> bool:
        """Drop workers, those of the lanes called longest ago first (never ``spare``'s),
        until ``count`` more workers holding ``memory_mb`` fit in the bounds; whether
        they do."""
        while (len(self._charge) + count > self.limits.total
               or sum(self._charge.values()) + memory_mb > self.limits.memory_mb):
            victim = next((other for other in self._lanes.values()
                           if other is not spare and other.workers), None)
            if victim is None:
                return False
            task = victim.workers.pop()
            self._charge.pop(task, None)
            _discard(task)
        return True

    async def _started(self, policy: Policy) -> Worker:
        worker = await self._start(policy)
        task = asyncio.current_task()
        measuring = asyncio.get_running_loop().run_in_executor(None, resident_mb, worker.pid)
        measuring.add_done_callback(lambda done: self._measured_as(task, policy.runtime, done))
        return worker

    def _measured_as(self, task: asyncio.Task[Worker] | None, runtime: str, done: asyncio.Future) -> None:
        """Charge a ready worker what its processes hold (measured beside, not awaited:
        a call waiting for it is not held up)."""
        size = done.result() if not done.cancelled() and done.exception() is None else 0.0
        if size <= 0:
            return
        self._measured[runtime] = size
        if task in self._charge:
            self._charge[task] = size
            self._within(0, 0.0)  # measured larger than it was charged: back within the bounds

    def _touch(self, lane: _Lane) -> None:
        if lane.idle is not None:
            lane.idle.cancel()
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to time
            lane.idle = asyncio.get_running_loop().call_later(
                self.limits.idle_s, self._expire, (lane.owner, lane.digest))

    def _expire(self, key: tuple[str, str]) -> None:
        lane = self._lanes.get(key)
        if lane is None:
            return
        if lane.running:
            self._touch(lane)
            return
        self._drop(key)

    def _drop(self, key: tuple[str, str]) -> None:
        lane = self._lanes.pop(key, None)
        if lane is None:
            return
        for handle in (lane.idle, lane.refill):
            if handle is not None:
                handle.cancel()
        lane.refill = None
        for task in lane.workers:
            self._charge.pop(task, None)
            _discard(task)
        lane.workers.clear()


def _discard(task: asyncio.Task[Worker]) -> None:
    """Kill the worker of ``task``, now or as soon as it has started."""
    if task.done():
        if not task.cancelled() and task.exception() is None:
            task.result().kill()
    else:
        task.add_done_callback(lambda t: t.result().kill()
                               if not t.cancelled() and t.exception() is None else None)
