"""Process states as in supervisord: every transition checked, each one a single event."""

from __future__ import annotations

import pytest

from workbench.events import ProcessStateChanged
from workbench.supervisor.pools import WarmPool
from workbench.states import TRANSITIONS, InvalidTransition, ProcessState, Stateful

S = ProcessState


class Recorder(Stateful):
    def __init__(self) -> None:
        self.changes: list[tuple[str, str, str]] = []

    def on_state_change(self, old, new, reason):
        self.changes.append((old.name, new.name, reason))


def test_the_table_is_supervisords():
    assert set(TRANSITIONS) == set(ProcessState)
    assert TRANSITIONS[S.STOPPED] == {S.STARTING}
    assert TRANSITIONS[S.STARTING] == {S.RUNNING, S.BACKOFF, S.STOPPING}
    assert TRANSITIONS[S.RUNNING] == {S.STOPPING, S.EXITED}
    assert TRANSITIONS[S.BACKOFF] == {S.STARTING, S.FATAL, S.STOPPED}
    assert TRANSITIONS[S.STOPPING] == {S.STOPPED}


def test_each_transition_is_reported_once_and_a_wrong_one_is_refused():
    thing = Recorder()
    thing.change_state(S.STARTING, "go")
    thing.change_state(S.RUNNING)
    thing.change_state(S.EXITED, "exit status 0")
    assert thing.changes == [("STOPPED", "STARTING", "go"), ("STARTING", "RUNNING", ""),
                             ("RUNNING", "EXITED", "exit status 0")]
    with pytest.raises(InvalidTransition, match="EXITED → RUNNING"):
        thing.change_state(S.RUNNING)
    assert thing.state is S.EXITED and len(thing.changes) == 3
    with pytest.raises(InvalidTransition, match="expected to be RUNNING"):
        thing._assert_in_state(S.RUNNING)


def test_a_warm_pool_stops_when_idle_and_starts_again_with_a_call():
    now = [100.0]
    events: list[ProcessStateChanged] = []
    stopped: list[bool] = []
    pool = WarmPool("pool:test", lambda: stopped.append(True), publish=events.append, clock=lambda: now[0])
    assert not pool.stop_if_idle(10)  # never used: nothing to stop
    pool.call_started()
    now[0] += 50
    assert not pool.stop_if_idle(10)  # a call is going on
    pool.call_ended()
    now[0] += 9
    assert not pool.stop_if_idle(10)
    now[0] += 2
    assert pool.stop_if_idle(10) and stopped == [True]
    assert not pool.stop_if_idle(10)
    pool.call_started()
    assert [(e.old, e.new) for e in events] == [
        ("stopped", "starting"), ("starting", "running"), ("running", "stopping"),
        ("stopping", "stopped"), ("stopped", "starting"), ("starting", "running")]
    assert events[2].reason == "idle for 10 s"
