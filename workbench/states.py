"""Process states and their transitions: one vocabulary for everything workbench runs.

The supervisor's children (scheduled runs, the scheduler itself, warm-worker pools) and
the MCP server connections all say where they are with ``ProcessState``, the states of
supervisord. Every state change goes through ``Stateful.change_state``, which checks it
against the owner's transition table and reports it once through ``on_state_change``;
operations guard themselves with ``_assert_in_state``. The events the owners publish
carry ``state.value`` (``"running"``), so their shape does not depend on this module.

Two tables, because the two kinds of thing live differently:

- ``TRANSITIONS``: a supervised process, supervisord's table: it is stopped through
  ``STOPPING`` and may end by itself (``EXITED``).
- ``CONNECTION_TRANSITIONS``: a connection to a server that is restarted in place (an
  MCP server): a death goes straight to ``BACKOFF`` or, after too many, to ``FATAL``;
  a stop ends in ``STOPPED`` from wherever it was.

This module is a leaf: it must not depend on any other non-stdlib module, nor on any
other module of workbench.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class ProcessState(enum.Enum):
    """Where a process (or a connection to one) is in its life."""

    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"
    STOPPING = "stopping"
    EXITED = "exited"
    FATAL = "fatal"


S = ProcessState

TRANSITIONS: Mapping[ProcessState, frozenset[ProcessState]] = {
    S.STOPPED: frozenset({S.STARTING}),
    S.STARTING: frozenset({S.RUNNING, S.BACKOFF, S.STOPPING}),
    S.RUNNING: frozenset({S.STOPPING, S.EXITED}),
    S.BACKOFF: frozenset({S.STARTING, S.FATAL, S.STOPPED}),
    S.STOPPING: frozenset({S.STOPPED}),
    S.EXITED: frozenset({S.STARTING}),
    S.FATAL: frozenset({S.STARTING}),
}
"""Which state may follow which for a supervised process (supervisord's, plus
BACKOFF → STOPPED on a stop)."""

CONNECTION_TRANSITIONS: Mapping[ProcessState, frozenset[ProcessState]] = {
    S.STOPPED: frozenset({S.STARTING}),
    # STARTING → STARTING and RUNNING → STARTING: a stop that did not finish in time
    # cancels the supervision wherever it was, and the next need starts from there.
    S.STARTING: frozenset({S.STARTING, S.RUNNING, S.BACKOFF, S.FATAL, S.STOPPED}),
    S.RUNNING: frozenset({S.STARTING, S.BACKOFF, S.FATAL, S.STOPPED}),
    S.BACKOFF: frozenset({S.STARTING, S.STOPPED}),
    S.FATAL: frozenset({S.STARTING}),
}
"""Which state may follow which for a connection restarted in place (an MCP server);
it is never ``STOPPING`` or ``EXITED``."""


class InvalidTransition(RuntimeError):
    """A state change the table does not allow, or an operation in the wrong state."""


class Stateful:
    """A thing with a ``ProcessState``; subclasses report changes in ``on_state_change``."""

    state: ProcessState = ProcessState.STOPPED
    transitions: Mapping[ProcessState, frozenset[ProcessState]] = TRANSITIONS
    """The table ``change_state`` checks against."""

    def change_state(self, new: ProcessState, reason: str = "") -> None:
        """Move to ``new`` and report it once.

        Args:
            new: The state to move to.
            reason: Why, in words, for people (the event carries it).

        Raises:
            InvalidTransition: ``new`` may not follow the current state.
        """
        old = self.state
        if new not in self.transitions.get(old, frozenset()):
            raise InvalidTransition(f"{old.name} → {new.name} is not a transition")
        self.state = new
        self.on_state_change(old, new, reason)

    def on_state_change(self, old: ProcessState, new: ProcessState, reason: str) -> None:
        """Called once per transition."""

    def _assert_in_state(self, *states: ProcessState) -> None:
        if self.state not in states:
            names = ", ".join(s.name for s in states)
            raise InvalidTransition(f"expected to be {names}, but it is {self.state.name}")
