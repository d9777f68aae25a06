"""The breaker: three unanswered calls open it for 30 s, then one trial call; the clock
is the test's."""

from __future__ import annotations

from workbench.plugins.breaker import Breaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_three_unanswered_calls_open_it_and_one_trial_follows() -> None:
    clock = Clock()
    breaker = Breaker(clock)
    for _ in range(2):
        assert breaker.allow()
        breaker.no_answer()
    assert breaker.state == "closed"
    assert breaker.allow()
    breaker.no_answer()
    assert breaker.state == "open" and not breaker.allow() and breaker.retry_in() == 30
    clock.now += 29.9
    assert not breaker.allow()
    clock.now += 0.1
    assert breaker.state == "half-open"
    assert breaker.allow() and not breaker.allow()  # one trial only
    breaker.no_answer()
    assert breaker.state == "open"  # the trial failed: 30 s more
    clock.now += 30
    assert breaker.allow()
    breaker.answered()
    assert breaker.state == "closed" and breaker.unanswered == 0 and breaker.allow()


def test_an_answer_resets_the_count() -> None:
    breaker = Breaker(Clock())
    breaker.no_answer()
    breaker.no_answer()
    breaker.answered()
    breaker.no_answer()
    breaker.no_answer()
    assert breaker.state == "closed"
