"""Process states and their transitions, as in supervisord.

Every state change of a supervised thing goes through ``Stateful.change_state``,
which checks the transition and reports it once through ``on_state_change``;
operations guard themselves with ``_assert_in_state``.

This module must not depend on any other non-stdlib module.
"""

from __future__ import annotations

import enum


class ProcessState(enum.Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"
    STOPPING = "stopping"
    EXITED = "exited"
    FATAL = "fatal"


S = ProcessState

TRANSITIONS: dict[ProcessState, frozenset[ProcessState]] = {
    S.STOPPED: frozenset({S.STARTING}),
    S.STARTING: frozenset({S.RUNNING, S.BACKOFF, S.STOPPING}),
    S.RUNNING: frozenset({S.STOPPING, S.EXITED}),
    S.BACKOFF: frozenset({S.STARTING, S.FATAL, S.STOPPED}),
    S.STOPPING: frozenset({S.STOPPED}),
    S.EXITED: frozenset({S.STARTING}),
    S.FATAL: frozenset({S.STARTING}),
}
"""Which state may follow which (supervisord's, plus BACKOFF → STOPPED on a stop)."""


class InvalidTransition(RuntimeError):
    """A state change the table does not allow, or an operation in the wrong state."""


class Stateful:
    """A thing with a ``ProcessState``; subclasses report changes in ``on_state_change``."""

    state: ProcessState = ProcessState.STOPPED

    def change_state(self, new: ProcessState, reason: str = "") -> None:
        """Move to ``new`` and report it once.

        Raises:
            InvalidTransition: ``new`` may not follow the current state.
        """
        old = self.state
        if new not in TRANSITIONS[old]:
            raise InvalidTransition(f"{old.name} → {new.name} is not a transition")
        self.state = new
        self.on_state_change(old, new, reason)

    def on_state_change(self, old: ProcessState, new: ProcessState, reason: str) -> None:
        """Called once per transition."""

    def _assert_in_state(self, *states: ProcessState) -> None:
        if self.state not in states:
            names = ", ".join(s.name for s in states)
            raise InvalidTransition(f"expected to be {names}, but it is {self.state.name}")
