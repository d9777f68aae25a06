"""Opening the SQLite file safely: checks before any write, pragmas, the lock, transactions.

``StoreBase`` owns the connection. Before anything is written it checks that an
existing file is a SQLite database and that its schema is not newer than this
code knows, reading it read-only, so a file from a newer workbench (or a file
that is not ours at all) is left byte for byte as it was.

Writes that may go behind the caller (a tool call's records, see ``writer.py``) are
queued to the store's ``Writer``; ``StoreBase`` keeps reads consistent with them: before
a statement that names one of ``DEFERRED_TABLES``, and before each transaction, it
waits for the queue to drain. Query modules need do nothing for it.

This module must not import the config package or anything above the store; the
table-specific queries live in the sibling modules, one per table group.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from workbench.errors import StoreCorruptError, StoreError, StoreTooNewError
from workbench.store.connection import Database
from workbench.store.migrations import LATEST_VERSION, migrate
from workbench.store.writer import Write, Writer

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

HEADER_SIZE = 100
USER_VERSION_OFFSET = 60
"""Where ``PRAGMA user_version`` sits in the file header (4 bytes, big-endian, signed)."""

BUSY_TIMEOUT_MS = 5_000
"""How long a write waits for another process's lock before failing."""

DEFERRED_TABLES = ("tool_calls", "audit_log")
"""The tables the writer thread writes to: a statement naming one first drains its queue."""

_NAMES_DEFERRED = re.compile(
    rf"\b(?:FROM|JOIN|INTO|UPDATE)\s+(?:{'|'.join(DEFERRED_TABLES)})\b", re.IGNORECASE)


def now_ms() -> int:
    """The current time as unix milliseconds."""
    return time.time_ns() // 1_000_000


def dump_json(value: Any) -> str | None:
    """A value as JSON text for a JSON column; None stays NULL."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def load_json(text: str | None) -> Any:
    """A JSON column's text as a value; NULL stays None."""
    return None if text is None else json.loads(text)


def connect(path: Path, **options: Any) -> sqlite3.Connection:
    """A connection to the store file with the pragmas every connection needs."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           **options)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _writer_connection(path: Path) -> sqlite3.Connection:
    """The writer thread's own connection: it begins and commits its groups itself."""
    conn = connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def check_existing_file(path: Path) -> None:
    """Refuse a file that is not a SQLite database or whose schema is too new.

    The file is only read: first its header bytes, then, through a read-only
    connection, ``PRAGMA user_version`` (which also sees a newer version still
    held in a write-ahead log).

    Args:
        path: The store file; a missing or empty file passes.

    Raises:
        StoreCorruptError: When the file is not a SQLite database.
        StoreTooNewError: When its schema version is newer than ``LATEST_VERSION``.
        StoreError: When the file cannot be read.
    """
    try:
        with path.open("rb") as handle:
            header = handle.read(HEADER_SIZE)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot read the store: {exc.strerror or exc}", where=str(path)) from None
    if not header:
        return
    if len(header) < HEADER_SIZE or not header.startswith(SQLITE_HEADER):
        raise StoreCorruptError("the store is not a SQLite database; it was left untouched",
                                where=str(path))
    _check_version(path, int.from_bytes(header[USER_VERSION_OFFSET:USER_VERSION_OFFSET + 4],
                                        "big", signed=True))
    # Without a write-ahead log beside it, the file alone holds the database, and
    # ``immutable`` reads it without creating ``-wal``/``-shm`` files next to it.
    wal = path.with_name(path.name + "-wal")
    query = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    try:
        reader = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the store: {exc}", where=str(path)) from None
    try:
        version = reader.execute("PRAGMA user_version").fetchone()[0]
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        raise StoreError(f"cannot read the store ({exc}); it was left untouched",
                         where=str(path)) from None
    except sqlite3.DatabaseError as exc:
        raise StoreCorruptError(f"the store cannot be read as a SQLite database ({exc}); "
                                "it was left untouched", where=str(path)) from None
    finally:
        reader.close()
    _check_version(path, version)


def _check_version(path: Path, version: int) -> None:
    if version > LATEST_VERSION:
        error = StoreTooNewError(
            f"the store has schema version {version}, newer than {LATEST_VERSION}, the "
            "highest this version of workbench knows; it was left untouched; upgrade "
            "workbench to open it", where=str(path))
        error.found_version = version
        error.known_version = LATEST_VERSION
        raise error


class StoreBase:
    """The connection to the store and the tools every query module shares.

    The connection may be used from any thread, one thread at a time: every
    public method takes ``_lock`` (re-entrant, so methods compose inside
    ``transaction()``).

    Writes queued with ``_write_behind`` are committed by ``writer`` on its own
    connection. Every statement run here that names a table it writes to, and every
    transaction begun here, first waits for its queue (``flush``), so what this process
    wrote is what it reads, in order; queued writes are never waited for inside a
    transaction (the writer could not commit while it is open, and it is empty then:
    submitting takes ``_lock`` too).
    """

    def __init__(self, path: Path, db: Database) -> None:
        self.path = path
        """The store file."""
        self._db = db
        self._lock = threading.RLock()
        self.clock: Callable[[], int] = now_ms
        """Returns the current time in unix milliseconds; replace it in tests."""
        self.writer = Writer(lambda: _writer_connection(path))
        """Commits the writes queued behind their callers; see ``writer.py``."""
        self._queued_starts: dict[str, Any] = {}
        """Tool calls whose start waits for the writer, by id: their end joins it
        (``toolcalls._QueuedStart``), so a fast call is written once."""

    @classmethod
    def open(cls, path: str | Path) -> Self:
        """Open (or create) the store at ``path`` and bring its schema up to date.

        The parent folder is created when missing. Nothing is written to an
        existing file before it has been checked.

        Args:
            path: The SQLite file, usually ``Home.db_path``.

        Returns:
            The open store.

        Raises:
            StoreTooNewError: When the file was written by a newer workbench (exit code 5).
            StoreCorruptError: When the file is not a SQLite database.
            StoreError: When the file cannot be opened or migrated.
        """
        path = Path(path).expanduser().absolute()
        check_existing_file(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(path)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the store: {exc}", where=str(path)) from None
        try:
            db = Database(conn)
            db.enable_wal()
            conn.execute("PRAGMA synchronous = NORMAL")
            migrate(db, str(path))
        except StoreError:
            conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"cannot open the store: {exc}", where=str(path)) from None
        return cls(path, db)

    def close(self) -> None:
        """Commit the queued writes, stop the writer thread and close the connection; the
        store cannot be used afterwards.

        Raises:
            DeferredWriteError: When queued writes failed and no flush has said so yet
                (everything is closed all the same).
        """
        with self._lock:
            try:
                self.writer.close()
            finally:
                self._db.close()

    def flush(self) -> None:
        """Wait until every write queued behind its caller so far is committed.

        Reads of the tables concerned do this themselves; call it before telling another
        process that a record is there.

        Raises:
            DeferredWriteError: Naming the queued writes that failed since the last flush.
        """
        with self._lock:
            self.writer.flush()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The schema version of the open file (the number of its last migration)."""
        with self._lock:
            return self._db.execute("PRAGMA user_version").fetchone()[0]

    def applied_migrations(self) -> list[dict[str, Any]]:
        """The migrations recorded in the file: ``number``, ``name``, ``applied_at``."""
        return self._all("SELECT number, name, applied_at FROM _migrations ORDER BY number")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes: all of them happen, or none (on an exception).

        Holds the store's lock for the whole block; nested blocks become savepoints. The
        outermost block first waits for the writes queued behind their callers.
        """
        with self._lock:
            if self.writer.owes and not self._db.conn.in_transaction:
                self.writer.flush()
            with self._db.atomic():
                yield

    def _write_behind(self, write: Write) -> None:
        """Queue ``write`` for the writer thread; inside a transaction of the calling
        thread, run it there instead, so it commits or rolls back with the rest.

        Raises:
            Exception: Whatever ``write.apply`` raises, when it runs here.
        """
        with self._lock:
            if self._db.conn.in_transaction:
                with self._db.atomic():
                    write.apply(self._db.conn)
            else:
                self.writer.submit(write)

    def _drain_for(self, sql: str) -> None:
        """Before ``sql`` runs: wait for queued writes when it names a table they go to
        (the caller holds ``_lock``)."""
        if (self.writer.owes and not self._db.conn.in_transaction
                and _NAMES_DEFERRED.search(sql)):
            self.writer.flush()

    def _all(self, sql: str, params: tuple | dict = ()) -> list[dict[str, Any]]:
        with self._lock:
            self._drain_for(sql)
            return list(self._db.query(sql, params))

    def _one(self, sql: str, params: tuple | dict = ()) -> dict[str, Any] | None:
        rows = self._all(sql, params)
        return rows[0] if rows else None

    def _execute(self, sql: str, params: tuple | dict = ()) -> sqlite3.Cursor:
        with self._lock:
            self._drain_for(sql)
            return self._db.execute(sql, params)
