"""The store's connection: statements, rows as dicts, transactions with savepoints.

The store used ``sqlite_utils.Database`` for these five things alone (``execute``,
``query``, ``atomic``, ``enable_wal``, ``close``); importing sqlite-utils brings click,
pluggy and dateutil with it, a good part of every start (``workbench call``, the TUI's
first frame). ``Database`` keeps the same behaviour, taken from sqlite-utils 4.2:

- ``execute``: a write outside a transaction is committed at once (the driver opened an
  implicit transaction for it); a failed statement that opened one rolls it back;
- ``query``: rows as dicts (a repeated column name gets ``_2``, ``_3``…); a statement that
  returns no rows is refused with ``ValueError`` and undone (run in a savepoint);
- ``atomic``: ``BEGIN`` … ``COMMIT`` (rolled back on an exception), a savepoint when a
  transaction is already open;
- ``PRAGMA recursive_triggers = on`` for the connection.

It imports the standard library only.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

_TRANSACTION_CONTROL = {"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"}
_NOT_QUERIES = _TRANSACTION_CONTROL | {"VACUUM", "ATTACH", "DETACH"}
_NO_ROWS = "query() can only be used with SQL that returns rows - use execute() for other statements"

Params = Sequence[Any] | dict[str, Any] | None


def first_keyword(sql: str) -> str:
    """The first keyword of ``sql``, uppercased, past spaces, comments, bare ``;`` and a
    byte order mark; empty when there is none."""
    i, n = 0, len(sql)
    while i < n:
        if sql[i].isspace() or sql[i] in (";", "\ufeff"):
            i += 1
        elif sql.startswith("--", i):
            newline = sql.find("\n", i)
            if newline == -1:
                return ""
            i = newline + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            if end == -1:
                return ""
            i = end + 2
        else:
            break
    j = i
    while j < n and (sql[j].isalpha() or sql[j] == "_"):
        j += 1
    return sql[i:j].upper()


def dedupe_keys(keys: Iterable[str]) -> list[str]:
    """Column names made unique: a later repeat gets ``_2``, ``_3``… (one not taken)."""
    keys = list(keys)
    taken = set(keys)
    if len(taken) == len(keys):
        return keys
    seen: set[str] = set()
    result = []
    for key in keys:
        if key in seen:
            new_key, suffix = key, 2
            while new_key in seen or new_key in taken:
                new_key = f"{key}_{suffix}"
                suffix += 1
            key = new_key
        seen.add(key)
        result.append(key)
    return result


class Database:
    """A connection with the store's conveniences; see the module docstring.

    Args:
        conn: An open connection with the driver's default transaction handling.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.execute("PRAGMA recursive_triggers=on;")

    def execute(self, sql: str, parameters: Params = None) -> sqlite3.Cursor:
        """Run one statement; a write outside a transaction is committed."""
        was_in_transaction = self.conn.in_transaction
        try:
            cursor = self.conn.execute(sql, parameters) if parameters is not None else self.conn.execute(sql)
        except Exception:
            if not was_in_transaction and self.conn.in_transaction:
                self.conn.execute("ROLLBACK")  # the implicit transaction nothing would commit
            raise
        if (not was_in_transaction and self.conn.in_transaction and cursor.description is None
                and first_keyword(sql) not in _TRANSACTION_CONTROL):
            self.conn.execute("COMMIT")
        return cursor

    def query(self, sql: str, params: Params = None) -> Iterator[dict[str, Any]]:
        """Run ``sql`` now and return its rows, as dicts, to be read as they come.

        Raises:
            ValueError: ``sql`` returns no rows (it is undone).
        """
        keyword = first_keyword(sql)
        if keyword in _NOT_QUERIES:
            raise ValueError(_NO_ROWS)
        args: tuple = (params,) if params is not None else ()
        if keyword == "PRAGMA":
            if self.conn.in_transaction:
                cursor = self.conn.execute(sql, *args)
            else:
                with self._autocommit():
                    cursor = self.conn.execute(sql, *args)
            if cursor.description is None:
                raise ValueError(_NO_ROWS)
            keys = dedupe_keys(d[0] for d in cursor.description)
            return (dict(zip(keys, row)) for row in cursor)
        self.conn.execute('SAVEPOINT "store_query"')
        released = False
        try:
            cursor = self.conn.execute(sql, *args)
            if cursor.description is None:
                raise ValueError(_NO_ROWS)
            keys = dedupe_keys(d[0] for d in cursor.description)
            try:
                self.conn.execute('RELEASE "store_query"')
                released = True
            except sqlite3.OperationalError:
                # A write with RETURNING still running: read it to the end first.
                fetched = cursor.fetchall()
                self.conn.execute('RELEASE "store_query"')
                released = True
                return (dict(zip(keys, row)) for row in fetched)
            return (dict(zip(keys, row)) for row in cursor)
        finally:
            if not released and self.conn.in_transaction:
                self.conn.execute('ROLLBACK TO "store_query"')
                self.conn.execute('RELEASE "store_query"')

    @contextlib.contextmanager
    def atomic(self) -> Iterator[Database]:
        """A transaction (a savepoint inside one): committed at the end of the block,
        rolled back on an exception."""
        if self.conn.in_transaction:
            savepoint = f"store_{secrets.token_hex(16)}"
            self.conn.execute(f"SAVEPOINT {savepoint};")
            try:
                yield self
            except BaseException:
                # A RAISE(ROLLBACK) may have ended the whole transaction, savepoint and all.
                if self.conn.in_transaction:
                    self.conn.execute(f"ROLLBACK TO SAVEPOINT {savepoint};")
                    self.conn.execute(f"RELEASE SAVEPOINT {savepoint};")
                raise
            else:
                self.conn.execute(f"RELEASE SAVEPOINT {savepoint};")
        else:
            self.conn.execute("BEGIN")
            try:
                yield self
            except BaseException:
                self._rollback()
                raise
            else:
                try:
                    self.conn.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise

    def enable_wal(self) -> None:
        """Put the file in write-ahead-log mode (outside a transaction)."""
        if self.execute("PRAGMA journal_mode;").fetchone()[0] != "wal":
            if self.conn.in_transaction:
                raise sqlite3.OperationalError("enable_wal() cannot run inside a transaction")
            with self._autocommit():
                self.execute("PRAGMA journal_mode=wal;")

    def close(self) -> None:
        self.conn.close()

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    @contextlib.contextmanager
    def _autocommit(self) -> Iterator[None]:
        old = self.conn.isolation_level
        try:
            self.conn.isolation_level = None
            yield
        finally:
            self.conn.isolation_level = old
