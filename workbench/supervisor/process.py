"""One supervised child process: started with retries, watched, stopped with its whole tree.

States: STOPPED → STARTING → RUNNING → EXITED when it ends by itself; a start that
fails goes to BACKOFF and is retried after a pause, and to FATAL when the retries
are used up; a stop goes RUNNING → STOPPING → STOPPED, killing the process and
everything under it (``proctree.kill_tree``). Each transition is published once as a
``ProcessStateChanged``.

The child gets a session of its own (so its group can be signalled as one) and
``WORKBENCH_SUPERVISOR_PID``: a child that asks the kernel to kill it when its
parent dies (``PR_SET_PDEATHSIG``) checks that its parent is still this one.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.states import ProcessState, Stateful
from workbench.events import ProcessStateChanged
from workbench.supervisor.proctree import kill_tree

log = logging.getLogger(__name__)

BACKOFF_S = (0.2, 0.5, 1.0)
"""Pauses between start attempts; after the last one the process is FATAL."""


class SupervisedProcess(Stateful):
    """See the module docstring.

    Args:
        name: How events name it (``run:12``).
        argv: The command.
        env: Its whole environment.
        cwd: Where it starts.
        output: A file its stdout and stderr go to (appended); None discards them.
        publish: Receives each ``ProcessStateChanged``.
    """

    def __init__(self, name: str, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path,
                 output: Path | None = None, publish: Callable[[Any], None] = lambda e: None) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = {**env, "WORKBENCH_SUPERVISOR_PID": str(os.getpid())}
        self.cwd = cwd
        self.output = output
        self.publish = publish
        self.spawn = asyncio.create_subprocess_exec
        """How the child is started; a seam for tests."""
        self.backoff = BACKOFF_S
        self.process: asyncio.subprocess.Process | None = None
        self.returncode: int | None = None
        self.error: str | None = None
        """Why the start failed (FATAL)."""

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def on_state_change(self, old: ProcessState, new: ProcessState, reason: str) -> None:
        self.publish(ProcessStateChanged(name=self.name, old=old.value, new=new.value,
                                         pid=self.pid, reason=reason))

    async def start(self) -> bool:
        """Start the child, retrying a failed start; False once it is FATAL."""
        self._assert_in_state(ProcessState.STOPPED, ProcessState.EXITED, ProcessState.FATAL)
        self.change_state(ProcessState.STARTING)
        for attempt in range(len(self.backoff) + 1):
            try:
                self.process = await self._spawn()
            except OSError as exc:
                self.error = f"could not start {self.argv[0]}: {exc.strerror or exc}"
                log.warning("%s: %s", self.name, self.error)
                if attempt == len(self.backoff):
                    self.change_state(ProcessState.BACKOFF, self.error)
                    self.change_state(ProcessState.FATAL, "gave up after "
                                      f"{len(self.backoff) + 1} attempts")
                    return False
                self.change_state(ProcessState.BACKOFF, self.error)
                await asyncio.sleep(self.backoff[attempt])
                self.change_state(ProcessState.STARTING, f"attempt {attempt + 2}")
                continue
            self.change_state(ProcessState.RUNNING)
            return True
        return False

    async def _spawn(self) -> asyncio.subprocess.Process:
        out: Any = asyncio.subprocess.DEVNULL
        if self.output is not None:
            self.output.parent.mkdir(parents=True, exist_ok=True)
            out = open(self.output, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            return await self.spawn(*self.argv, env=self.env, cwd=str(self.cwd),
                                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
                                    start_new_session=True)
        finally:
            if out is not asyncio.subprocess.DEVNULL:
                out.close()

    async def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the child to end by itself (→ EXITED); None when ``timeout`` passed first."""
        self._assert_in_state(ProcessState.RUNNING)
        assert self.process is not None
        try:  # asyncio.timeout: wait_for may drop a cancellation landing with the exit
            async with asyncio.timeout(timeout):
                code = await asyncio.shield(self.process.wait())
        except TimeoutError:
            return None
        self.returncode = code
        self.change_state(ProcessState.EXITED, f"exit status {code}")
        return code

    async def stop(self, reason: str) -> list[int]:
        """Kill the child and its whole tree (→ STOPPING → STOPPED); returns the pids killed."""
        if self.state is ProcessState.BACKOFF:
            self.change_state(ProcessState.STOPPED, reason)
            return []
        self._assert_in_state(ProcessState.RUNNING, ProcessState.STARTING)
        self.change_state(ProcessState.STOPPING, reason)
        killed: list[int] = []
        if self.process is not None:
            killed = await asyncio.to_thread(kill_tree, self.process.pid)
            self.returncode = await self.process.wait()
        self.change_state(ProcessState.STOPPED, reason)
        return killed


PR_SET_PDEATHSIG = 1


def die_with_parent(env: Mapping[str, str]) -> bool:
    """In a supervised child: ask the kernel to kill this process when its parent dies.

    Returns False when the parent that started it (``WORKBENCH_SUPERVISOR_PID``) is
    already gone, so the child should not start its work at all.
    """
    expected = env.get("WORKBENCH_SUPERVISOR_PID", "")
    if not expected.isdigit():
        return True
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        log.debug("PR_SET_PDEATHSIG is not available here")
    return os.getppid() == int(expected)
