"""The store's write-behind: one thread that commits queued writes in groups, in order.

Some records are written on a hot path and read much later: a tool call's start and end
with their audit entries. Committing them in the caller cost two transactions per call;
here the caller only queues them (``submit``) and a single writer thread, with its own
connection to the same file (WAL), commits them in the order they were queued. Woken by
a first write, it waits ``GATHER_S`` for more to join, then takes everything queued as
one transaction (group commit): a fast call's start and end usually share one.

- Reading: the ``Store`` waits for the queue to drain (``flush``) before any statement
  that names a table written here, and before each of its own transactions, so a
  process reads what it wrote, in order (see ``StoreBase``).
- Errors: a group runs without savepoints; when one of its writes fails, the group is
  rolled back and run again with a savepoint per write, so the failed one alone is
  left out. It is logged at once and raised by the next ``flush`` (or ``close``) as a
  ``DeferredWriteError`` naming it. A write that depends on a failed one (a call's end
  whose start failed) is not attempted, and is named in the same error.
- Durability: a write is durable once its group has committed, some 20 ms after it
  was queued (``GATHER_S`` plus the commit). A process that dies without closing the
  store (SIGKILL, a crash, ``os._exit``) loses the writes of those last milliseconds:
  queued, or in a group not yet committed. ``close`` drains the queue; so
  does an ``atexit`` hook for a store never closed.
- Processes: the thread is started at the first write; ``close`` stops and joins it. A
  child forked from a process with a writer inherits neither the thread nor its queue:
  there the writer refuses new writes (the parent's store is not usable across a fork).

This module must not import anything above the store.
"""

from __future__ import annotations

import atexit
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from workbench.errors import StoreError

log = logging.getLogger(__name__)

THREAD_NAME = "workbench-store-writer"
"""The writer thread's name (one per open store that has written behind)."""

GATHER_S = 0.02
"""How long a woken writer waits for more writes to join its group (see ``Writer``).

Long enough that back-to-back calls (an MCP call takes about a millisecond) share a
commit ten or twenty at a time: each commit costs the writer CPU that the calls'
own thread would otherwise wait for, on the GIL (``bench/mcp.py``). Reads never wait
for it: a flush cuts the wait short."""

Apply = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True)
class Write:
    """One queued write: what to run on the writer's connection, and how to name it.

    Attributes:
        label: Names the write in logs and errors, e.g. ``start of tool call 'c1'``.
        apply: Runs the write's statements (inside a savepoint of the group); raises on
            failure.
        key: When this write fails, later writes that ``need`` the key are not attempted.
        needs: The key of an earlier write this one depends on.
    """

    label: str
    apply: Apply
    key: str | None = None
    needs: str | None = None


@dataclass(frozen=True)
class Failure:
    """A write that was not committed, and why."""

    label: str
    error: BaseException

    def __str__(self) -> str:
        return f"{self.label}: {self.error}"


class DeferredWriteError(StoreError):
    """Writes queued behind the caller could not be committed; ``failures`` names them."""

    def __init__(self, failures: list[Failure]) -> None:
        count = len(failures)
        listing = "; ".join(str(f) for f in failures)
        super().__init__(f"{count} record{'s' if count != 1 else ''} could not be written: "
                         f"{listing}")
        self.failures = failures


class _ApplyFailed(Exception):
    """A write of a group run without savepoints failed: run the group again with them."""


class Writer:
    """The single writer thread of one store file; see the module docstring.

    Args:
        connect: Opens the writer's own connection (called in the writer thread).
        gather_s: How long the writer, woken by a first write, waits for more to join
            its group (a fast call's end then shares its start's transaction); a flush
            or ``close`` cuts the wait short.
    """

    def __init__(self, connect: Callable[[], sqlite3.Connection],
                 gather_s: float = GATHER_S) -> None:
        self._connect = connect
        self.gather_s = gather_s
        self._mutex = threading.Lock()
        self._work = threading.Condition(self._mutex)
        """Wakes the thread: something was queued, a flush waits, or the store closes."""
        self._drained = threading.Condition(self._mutex)
        """Wakes flushes: a group was committed (or failed)."""
        self._queue: list[Write] = []
        self._submitted = 0
        """Writes queued since the start; ``_done`` counts those finished (committed or
        failed), so a flush waits for ``_done`` to reach what was queued before it."""
        self._done = 0
        self._failures: list[Failure] = []
        """Failures not yet raised by a flush."""
        self._failed_keys: set[str] = set()
        """Keys of failed writes whose dependent write has not come yet (thread only)."""
        self._thread: threading.Thread | None = None
        self._idle = False
        """Whether the thread waits for work (and only then needs waking)."""
        self._flushing = 0
        self._closing = False
        self._forked = False
        self.groups = 0
        """How many transactions the writer has committed."""
        self.trace: Callable[[str], None] | None = None
        """Called with each statement the writer runs (``set_trace_callback``), if set."""
        _WRITERS.add(self)

    @property
    def owes(self) -> bool:
        """Whether a flush has anything to wait for or to raise."""
        return self._submitted != self._done or bool(self._failures)

    def submit(self, write: Write) -> None:
        """Queue ``write``; it is committed after everything queued before it.

        Raises:
            StoreError: When the writer is closed, or belongs to the parent of this
                forked process.
        """
        with self._mutex:
            if self._forked:
                raise StoreError("the store was opened before this process was forked; "
                                 "open it again here")
            if self._closing:
                raise StoreError("the store is closed")
            self._queue.append(write)
            self._submitted += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
                self._thread.start()
            elif self._idle:
                self._idle = False
                self._work.notify()

    def flush(self) -> None:
        """Wait until every write queued before this call is committed or has failed.

        Raises:
            DeferredWriteError: Naming the writes that failed since the last flush
                (each failure is raised once).
        """
        with self._mutex:
            target = self._submitted
            if self._done < target:
                self._flushing += 1
                self._work.notify()
                try:
                    while self._done < target:
                        if self._thread is None or not self._thread.is_alive():
                            # Never wait on a thread that is gone: what it had not
                            # finished is lost, and said so.
                            self._lose_queue("the store's writer thread stopped")
                            break
                        self._drained.wait(timeout=1.0)
                finally:
                    self._flushing -= 1
            failures, self._failures = self._failures, []
        if failures:
            raise DeferredWriteError(failures)

    def close(self) -> None:
        """Commit what is queued, stop the thread and wait for it.

        Raises:
            DeferredWriteError: As ``flush`` does, for failures not raised yet.
        """
        with self._mutex:
            self._closing = True
            thread = self._thread
            self._work.notify()
        if thread is not None and not self._forked:
            thread.join()
        with self._mutex:
            self._thread = None
        _WRITERS.discard(self)
        self.flush()

    # --- the thread ---------------------------------------------------------

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                group = self._next_group()
                if not group:
                    return
                try:
                    if conn is None:
                        conn = self._connect()
                    conn.set_trace_callback(self.trace)
                    try:
                        failures = self._commit(conn, group, isolate=False)
                    except _ApplyFailed:
                        failures = self._commit(conn, group, isolate=True)
                except Exception as exc:  # no transaction: the whole group is lost
                    failures = [Failure(write.label, exc) for write in group]
                    self._failed_keys.update(w.key for w in group if w.key is not None)
                    if conn is not None:
                        conn.close()
                        conn = None
                for failure in failures:
                    log.error("store: %s was not written: %s", failure.label, failure.error)
                with self._mutex:
                    self._done += len(group)
                    self._failures.extend(failures)
                    self._drained.notify_all()
        finally:
            if conn is not None:
                conn.close()

    def _next_group(self) -> list[Write]:
        """Wait for work; then, unless hurried, let more join for ``gather_s``; take it all.

        Returns:
            Everything queued, in order; empty when the writer is closing with nothing left.
        """
        with self._mutex:
            while not self._queue and not self._closing:
                self._idle = True
                self._work.wait()
            self._idle = False
            if self.gather_s > 0 and self._queue:
                deadline = time.monotonic() + self.gather_s
                while not self._closing and not self._flushing:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._work.wait(left)
            group, self._queue = self._queue, []
            return group

    def _commit(self, conn: sqlite3.Connection, group: list[Write], *,
                isolate: bool) -> list[Failure]:
        """Run ``group`` in one transaction, in order.

        Args:
            isolate: Run each write in its own savepoint, so that one that fails is
                rolled back alone and named; without it (the usual case, two
                statements fewer per write) a failing write raises ``_ApplyFailed``
                and the whole transaction is rolled back.

        Raises:
            _ApplyFailed: Without ``isolate``, when a write failed.
            sqlite3.Error: When the transaction cannot begin or commit.
        """
        failures: list[Failure] = []
        failed: set[str] = set()
        consumed: set[str] = set()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for write in group:
                if write.needs is not None and (write.needs in failed
                                                or write.needs in self._failed_keys):
                    consumed.add(write.needs)
                    failures.append(Failure(write.label, StoreError(
                        "not attempted: the record it completes was not written")))
                    if write.key is not None:
                        failed.add(write.key)
                    continue
                if not isolate:
                    try:
                        write.apply(conn)
                    except Exception as exc:
                        raise _ApplyFailed() from exc
                    continue
                conn.execute("SAVEPOINT write")
                try:
                    write.apply(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO write")
                    failures.append(Failure(write.label, exc))
                    if write.key is not None:
                        failed.add(write.key)
                conn.execute("RELEASE write")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._failed_keys -= consumed
        self._failed_keys |= failed
        self.groups += 1
        return failures

    def _lose_queue(self, reason: str) -> None:
        """Count what is queued or was in progress as failed (the caller holds the mutex)."""
        lost, self._queue = self._queue, []
        in_progress = self._submitted - self._done - len(lost)
        if in_progress:
            self._failures.append(Failure(f"{in_progress} write(s) in progress", StoreError(reason)))
        self._failures.extend(Failure(write.label, StoreError(reason)) for write in lost)
        self._done = self._submitted

    def _after_fork(self) -> None:
        """In a forked child: the thread did not come along, and the queue is the parent's."""
        self._mutex = threading.Lock()
        self._work = threading.Condition(self._mutex)
        self._drained = threading.Condition(self._mutex)
        self._queue = []
        self._submitted = self._done = 0
        self._failures = []
        self._thread = None
        self._idle = False
        self._flushing = 0
        self._forked = True


_WRITERS: weakref.WeakSet[Writer] = weakref.WeakSet()
"""Writers whose store is open: drained at exit, disowned in a forked child."""


def _drain_at_exit() -> None:
    for writer in list(_WRITERS):
        try:
            writer.close()
        except StoreError as exc:
            log.error("store: at exit: %s", exc)


def _after_fork_in_child() -> None:
    for writer in list(_WRITERS):
        writer._after_fork()


atexit.register(_drain_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)
