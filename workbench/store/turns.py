"""A turn the disk cut short: saved up to where it failed and marked failed.

A turn's messages are written as they complete, so a crash keeps what was said. When
a write of the turn fails because the disk is full (``is_disk_full``), the turn loop
calls ``fail_turn``: with the room of the store's reserve (``reserve.py``) it saves,
in one transaction, what the person typed (when that was what failed), an answer for
each call without one (its recorded outcome, as ``settle_session`` gives it) and a
``turn_failed`` system message saying the turn failed and why. So the session holds
either a whole turn or one marked failed, and the next turn (or model) reads it so.
When even that cannot be written, the calls are answered by the next turn's
``settle_session``, as after a crash.

This module must not import anything above the store.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from typing import Any

from workbench.errors import StoreError
from workbench.store.db import StoreBase
from workbench.store.owners import this_process
from workbench.store.reserve import Reserve
from workbench.store.writer import DeferredWriteError

FAILED_NAME = "turn_failed"
"""The ``name`` of the system message that marks a failed turn."""

FAILED_LABEL = "[turn failed]"
"""How that message begins, for the model and for a person reading the session."""

SQLITE_FULL = 13


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it, or a queued write it names) says the disk
    holding the store is full."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(exc, sqlite3.Error) and (
                getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in str(exc)):
            return True
        if isinstance(exc, DeferredWriteError) and any(is_disk_full(f.error) for f in exc.failures):
            return True
        if isinstance(exc, StoreError) and "disk is full" in str(exc):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def disk_full_words(exc: BaseException) -> str:
    """What the failing write said (``database or disk is full``), for a message."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, DeferredWriteError):
            for failure in exc.failures:
                if is_disk_full(failure.error):
                    return disk_full_words(failure.error)
        if isinstance(exc, (sqlite3.Error, OSError)) and is_disk_full(exc):
            return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))
        exc, seen = exc.__cause__ or exc.__context__, seen + 1  # type: ignore[assignment]
    return "database or disk is full"


class TurnsMixin(StoreBase):
    """``fail_turn``; see the module docstring."""

    @property
    def reserve(self) -> Reserve:
        return Reserve(self.path)

    @staticmethod
    def disk_full(exc: BaseException) -> str | None:
        """What a failed write said (``database or disk is full``) when ``exc`` says the
        disk holding the store is full; None for any other failure."""
        return disk_full_words(exc) if is_disk_full(exc) else None

    def fail_turn(self, session_id: str, reason: str, typed: str | None = None) -> bool:
        """Mark the turn under way in ``session_id`` failed, in the room of the reserve.

        Args:
            reason: Why, as the marker says it.
            typed: What the person typed, when it is not saved yet.

        Returns:
            Whether the marker was saved (False: the disk is full even so).
        """
        self.reserve.release()
        try:
            with self._lock:
                with contextlib.suppress(DeferredWriteError):
                    self.flush()  # what failed behind the turn is what is marked here
                with self.transaction():
                    if typed is not None:
                        self.add_message(session_id, "user", content=typed)  # type: ignore[attr-defined]
                    self._end_own_running_calls(session_id, reason)
                    self.settle_session(session_id)  # type: ignore[attr-defined]
                    self.add_message(session_id, "system",  # type: ignore[attr-defined]
                                     content=f"{FAILED_LABEL} {reason}", name=FAILED_NAME)
        except (sqlite3.Error, StoreError):
            return False
        return True

    def _end_own_running_calls(self, session_id: str, reason: str) -> None:
        """This process's calls of the session still ``running`` (their end could not
        be written) end ``error``, saying so."""
        from workbench.store.db import dump_json

        me = this_process()
        error = {"kind": "error", "message": f"the end of this call could not be saved: {reason}"}
        self._db.conn.execute(
            "UPDATE tool_calls SET status = 'error', error = ?, ended_at = ? WHERE session_id = ? "
            "AND status = 'running' AND owner_pid IS ? AND owner_start IS ?",
            (dump_json(error), self.clock(), session_id, me.pid, me.start))


def failed_turn(message: dict[str, Any]) -> bool:
    """Whether a stored message is the marker of a failed turn."""
    return message.get("role") == "system" and message.get("name") == FAILED_NAME
