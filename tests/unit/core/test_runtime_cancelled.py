"""A hook's or a provider's call that is cancelled stays cancelled, whenever the
cancellation lands, and a warm worker handed over as a call is cancelled is killed.

ctrl+c cancels a turn once. If the handler's answer arrives in the same turn of the
loop and the wait swallows the cancellation (``asyncio.wait_for`` on Python 3.11),
the answer is acted on and the turn runs on with nothing left to stop it. The
answer here comes over a real socket, written before the call starts, so that it is
there before every cancel; the test cancels after 0, 1, 2, … turns of the loop until
the call ends first.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

import pytest

from workbench.core.hook_runtime import HookRuntime
from workbench.core.provider_registry import RegisteredProvider
from workbench.core.provider_runtime import ProviderRuntime
from workbench.hooks.registry import Hook
from workbench.permissions.broker import Broker
from workbench.permissions.requirements import TemplateRoots
from workbench.sandbox.policy import Policy
from workbench.sandbox.pool import WorkerPool
from workbench.store import Store

POLICY = Policy(runtime="python", entry="", function="", extension_dir="")


class SocketRunner:
    """A runner whose worker's answer is already waiting on a real socket."""

    def __init__(self) -> None:
        self.ends: list[socket.socket] = []
        self.answered = 0

    async def __call__(self, tool, arguments, ctx, *, timeout_ms: int):
        ours, theirs = socket.socketpair()
        self.ends += [ours, theirs]
        theirs.sendall(json.dumps({"result": "answer"}).encode() + b"\n")
        reader, writer = await asyncio.open_connection(sock=ours)
        try:
            line = await reader.readline()
        finally:
            writer.close()
        self.answered += 1
        return json.loads(line)["result"]

    def close(self) -> None:
        for end in self.ends:
            end.close()


async def cancelled_in_every_turn(call) -> int:
    """Cancel ``call()`` after 0, 1, 2, … loop turns until it ends first; return how
    many turns that took. Every cancelled call must raise CancelledError."""
    turns = 0
    while True:
        task = asyncio.ensure_future(call())
        for _ in range(turns):
            await asyncio.sleep(0)
        if task.done():
            assert await task == "answer"
            return turns
        task.cancel()
        try:
            result = await task
        except asyncio.CancelledError:
            pass
        else:
            raise AssertionError(f"a cancellation after {turns} turns of the loop was lost: "
                                 f"the call went on with {result!r}")
        turns += 1


HOOK = Hook(extension="guard", event="on_tool_call", function="guard", folder=Path("/nonexistent"),
            entry=Path("/nonexistent/main.py"), runtime="python")


async def test_a_hook_cancelled_in_any_turn_of_the_loop_is_cancelled():
    runner = SocketRunner()
    runtime = HookRuntime(registry=None, runner=runner, budget_ms=30_000, cwd="/")
    try:
        turns = await cancelled_in_every_turn(lambda: runtime.run(HOOK, {"tool": "x"}))
    finally:
        runner.close()
    assert turns > 1 and runner.answered >= 1


async def test_a_provider_cancelled_in_any_turn_of_the_loop_is_cancelled(tmp_path):
    runner = SocketRunner()
    provider = RegisteredProvider(type="memory", name="keeper", extension="keepers", source="extension",
                                  function="keep", folder=tmp_path, entry=tmp_path / "main.py",
                                  runtime="python")
    with Store.open(tmp_path / "workbench.db") as store:
        runtime = ProviderRuntime(registry=None, runner=runner, broker=Broker(store), store=store,
                                  roots=TemplateRoots.for_host(tmp_path), responder=lambda: None,
                                  default_timeout_ms=30_000)
        try:
            turns = await cancelled_in_every_turn(lambda: runtime.call(provider, {"op": "put"}))
        finally:
            runner.close()
    assert turns > 1 and runner.answered >= 1


class Handed:
    """A warm worker: killed (its descriptors closed) or left running."""

    def __init__(self) -> None:
        self.read, self.write = os.pipe()
        self.killed = False
        self.finished = False
        self.pid = -1  # nothing to measure

    def kill(self) -> None:
        self.killed = True
        os.close(self.read)
        os.close(self.write)


async def test_a_warm_worker_handed_over_as_its_call_is_cancelled_is_killed():
    turns = 0
    while True:
        worker = Handed()
        ours, theirs = socket.socketpair()
        theirs.sendall(b"ready\n")

        async def start(ours=ours, worker=worker) -> Handed:  # the worker says it is ready
            reader, writer = await asyncio.open_connection(sock=ours)
            try:
                await reader.readline()
            except asyncio.CancelledError:  # as Worker.start: a cancelled start kills its worker
                worker.kill()
                raise
            finally:
                writer.close()
            return worker

        pool = WorkerPool(lambda policy, start=start: start())
        pool.after("tool", "digest", POLICY, standing=True, took=False)
        take = asyncio.ensure_future(pool.take("tool", "digest", standing=True))
        for _ in range(turns):
            await asyncio.sleep(0)
        try:
            if take.done():
                assert await take is worker
                worker.kill()
                break
            take.cancel()
            with pytest.raises(asyncio.CancelledError):
                await take
            for kept in pool.starting():  # cancelled before it took the worker: the pool keeps it
                (await kept).kill()
            for _ in range(100):  # the warm start ends on its own; then it is killed
                if worker.killed:
                    break
                await asyncio.sleep(0.01)
            assert worker.killed, f"cancelled after {turns} turns, the warm worker was left running"
        finally:
            theirs.close()
        turns += 1
    assert turns > 1
