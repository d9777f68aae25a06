"""The circuit breaker in front of one plugin instance.

Three calls in a row left unanswered (the connection refused, or the time limit
passed) open it: for 30 s every call fails at once. Then one call tries the instance
again; an answer of any status closes the breaker, no answer opens it for another
30 s. The clock is injected, so tests move time instead of waiting for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

THRESHOLD = 3
OPEN_S = 30.0


class Breaker:
    """Counts unanswered calls and says whether the next one may go.

    Args:
        clock: Monotonic seconds (``time.monotonic`` unless a test gives its own).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, threshold: int = THRESHOLD,
                 open_s: float = OPEN_S) -> None:
        self.clock = clock
        self.threshold = threshold
        self.open_s = open_s
        self.unanswered = 0
        """Calls left unanswered in a row."""
        self.opened_at: float | None = None
        """When it last opened; None while closed."""
        self.trial = False
        """Whether the one trial call after an open spell is on its way."""

    @property
    def state(self) -> str:
        """``closed``, ``open`` or ``half-open`` (the trial call may go or is going)."""
        if self.opened_at is None:
            return "closed"
        return "half-open" if self.clock() - self.opened_at >= self.open_s else "open"

    def retry_in(self) -> float:
        """Seconds until the trial call may go (0 when closed or half-open)."""
        if self.opened_at is None:
            return 0.0
        return max(0.0, self.open_s - (self.clock() - self.opened_at))

    def allow(self) -> bool:
        """Whether a call may go now; in the half-open state only the first does."""
        state = self.state
        if state == "closed":
            return True
        if state == "half-open" and not self.trial:
            self.trial = True
            return True
        return False

    def answered(self) -> None:
        """The instance answered (any status): close."""
        self.unanswered = 0
        self.opened_at = None
        self.trial = False

    def no_answer(self) -> None:
        """The instance refused the connection or ran out of time."""
        self.unanswered += 1
        if self.trial or self.unanswered >= self.threshold:
            self.opened_at = self.clock()
            self.trial = False

    def reset(self) -> None:
        """A restarted instance starts afresh."""
        self.answered()
