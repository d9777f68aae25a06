"""A call's cancellation signal: what a tool polls and what a thread waits on agree,
whichever comes first, the abort or the first wait."""

from __future__ import annotations

import threading

from workbench.tools.context import Signal


def test_an_abort_before_anyone_waits_is_seen_by_a_later_wait():
    signal = Signal()
    signal.abort("timeout")
    assert signal.aborted
    assert signal.reason == "timeout"
    assert signal.event.wait(timeout=0)


def test_a_thread_waiting_first_is_woken_by_the_abort():
    signal = Signal()
    event = signal.event
    woken = threading.Event()
    waiter = threading.Thread(target=lambda: event.wait(timeout=30) and woken.set())
    waiter.start()
    assert not signal.aborted
    signal.abort()
    waiter.join(timeout=30)
    assert woken.is_set()
    assert signal.aborted
    assert signal.event is event


def test_aborts_racing_first_waits_are_never_lost():
    for _ in range(200):
        signal = Signal()
        seen: list[bool] = []
        waiter = threading.Thread(target=_wait_into, args=(signal, seen))
        aborter = threading.Thread(target=signal.abort)
        waiter.start()
        aborter.start()
        aborter.join(timeout=30)
        waiter.join(timeout=30)
        assert seen == [True]


def _wait_into(signal: Signal, seen: list[bool]) -> None:
    seen.append(signal.event.wait(timeout=30))
