"""Pools of warm workers, stopped when idle.

A host keeps the next worker of each tool started ahead of its call; a pool nobody
has called for ``sandbox.idle_stop_s`` seconds is stopped (its warm workers
killed), and starts again with the next call. The pool is told when calls begin
and end; the supervisor asks it, at each tick, to stop if idle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from workbench.events import ProcessStateChanged, ToolCallEnded, ToolCallStarted
from workbench.states import ProcessState, Stateful


class WarmPool(Stateful):
    """One host's warm workers; see the module docstring.

    Args:
        name: How events name it (``pool:host``).
        stop: Kills the warm workers (the host's ``sandbox.forget``).
        publish: Receives each ``ProcessStateChanged``.
        clock: Seconds, monotonic.
    """

    def __init__(self, name: str, stop: Callable[[], None], *, publish: Callable[[Any], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self._stop = stop
        self.publish = publish
        self.clock = clock
        self.calls = 0
        self.last_used = clock()

    def on_state_change(self, old: ProcessState, new: ProcessState, reason: str) -> None:
        self.publish(ProcessStateChanged(name=self.name, old=old.value, new=new.value, reason=reason))

    def call_started(self) -> None:
        """A call began: the pool is in use (and is started again if it was stopped)."""
        self.calls += 1
        self.last_used = self.clock()
        if self.state is not ProcessState.RUNNING:
            self.change_state(ProcessState.STARTING, "a tool call")
            self.change_state(ProcessState.RUNNING)

    def track(self, event: Any) -> None:
        """Follow a host's events: its tool calls starting and ending."""
        if isinstance(event, ToolCallStarted):
            self.call_started()
        elif isinstance(event, ToolCallEnded):
            self.call_ended()

    def call_ended(self) -> None:
        self.calls = max(0, self.calls - 1)
        self.last_used = self.clock()

    def stop_if_idle(self, idle_s: float) -> bool:
        """Stop the pool when no call ran for ``idle_s`` seconds; returns whether it stopped."""
        if self.state is not ProcessState.RUNNING or self.calls or self.clock() - self.last_used < idle_s:
            return False
        self.change_state(ProcessState.STOPPING, f"idle for {idle_s:g} s")
        self._stop()
        self.change_state(ProcessState.STOPPED, f"idle for {idle_s:g} s")
        return True
