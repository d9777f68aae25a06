"""One change at a time, made in a thread: the pattern the Extensions and Tasks screens share.

A screen that mixes ``ChangesInThread`` in declares a reactive ``working`` (what is
going on; ``""`` when nothing) and a ``say(text, level)`` for its message line. A change
(install, pause, delete…) runs ``job`` in a thread so the screen never freezes, says what
it is doing meanwhile, refuses a second change while one runs, and on the event loop
either shows the ``WorkbenchError`` the job raised or hands the result to ``done``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import work

from workbench.errors import WorkbenchError


class ChangesInThread:
    """Mixin for a ``Screen`` with a reactive ``working`` and a ``say`` method."""

    working: str
    say: Callable[..., None]

    def _start(self, what: str, job: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """Run ``job`` in a thread, saying ``what`` meanwhile, then ``done(result)``."""
        if self.working:
            self.say(f"{self.working} is still going on; try again when it ends.", "error")
            return
        self.working = what
        self.say(f"{what}…", "working")
        self._run_change(job, done)

    @work(thread=True, group="screen-change")
    def _run_change(self, job: Callable[[], Any], done: Callable[[Any], None]) -> None:
        try:
            result = job()
        except WorkbenchError as exc:
            refusal = str(exc)
            self.app.call_from_thread(self._change_ended, lambda: self.say(refusal, "error"))
        else:
            self.app.call_from_thread(self._change_ended, lambda: done(result))

    def _change_ended(self, then: Callable[[], None]) -> None:
        self.working = ""
        if self.is_attached:
            then()
