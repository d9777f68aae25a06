"""A worker's start that is cancelled stays cancelled, whenever the cancellation lands.

ctrl+c cancels a call once; if the worker's ready message arrives in the same turn
of the loop and the start swallows the cancellation, the call runs on to its end
with nothing left to stop it. A spawn cancelled while the zygote forks leaves no worker
running either. The worker's side here is a real socket the test writes the ready
message to, so that the message is there before every cancel.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from types import SimpleNamespace

from workbench.sandbox import protocol
from workbench.sandbox.client import Spawned
from workbench.sandbox.worker_host import Worker


class Client:
    """The zygote's side: remembers which workers it was asked to kill."""

    def __init__(self) -> None:
        self.killed: list[int] = []
        self.ends: list = []
        self.asked = False

    async def spawn_async(self, policy) -> Spawned:
        self.asked = True
        # In a thread, as the zygote is asked: a cancellation does not stop it.
        return await asyncio.to_thread(self._spawn)

    def _spawn(self) -> Spawned:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        output_read, output_write = os.pipe()
        status_read, status_write = os.pipe()
        theirs.sendall(protocol.encode(protocol.notification("worker/ready", {})))
        self.ends = [theirs, output_write, status_write]
        return Spawned(pid=4242, bridge=ours, output_fd=output_read, status_fd=status_read)

    def kill_soon(self, pid: int) -> None:
        self.killed.append(pid)

    def close_ends(self) -> None:
        if self.ends:
            self.ends[0].close()
            for fd in self.ends[1:]:
                os.close(fd)


async def until(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


POLICY = SimpleNamespace(net=None, limits=SimpleNamespace(output_bytes=1 << 20))


async def test_a_start_cancelled_in_any_turn_of_the_loop_is_cancelled_and_its_worker_killed():
    turns = 0
    while True:
        client = Client()
        start = asyncio.ensure_future(Worker.start(client, POLICY))
        for _ in range(turns):
            await asyncio.sleep(0)
        if start.done():
            break  # started before this many turns: every earlier turn was tried
        start.cancel()
        try:
            worker = await start
        except asyncio.CancelledError:
            if client.asked:  # the spawn goes on in its thread: its worker is killed after
                await until(lambda client=client: client.killed)
            assert client.killed == ([4242] if client.asked else []), (
                f"cancelled after {turns} turns, the worker was left running")
        else:
            worker.kill()
            raise AssertionError(f"a cancellation after {turns} turns of the loop was lost: "
                                 "the worker started")
        finally:
            client.close_ends()
        turns += 1
    (await start).kill()
    assert turns > 1
