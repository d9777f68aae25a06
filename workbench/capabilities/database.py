"""Each extension's private SQLite database, reached by its tools through ``ctx.db``.

The host runs the statements on the tool's behalf, so the file never enters the
sandbox. Each connection is set up so that a statement reaches the one file and no
more of the host: an authorizer refuses ``ATTACH``/``DETACH``, ``load_extension`` and
every ``PRAGMA`` but a list of harmless ones (``VACUUM INTO`` is refused by its words);
``max_page_count`` caps the file (and the temporary tables) at ``max_bytes``, past
which a write is refused with a clear error; a statement runs at most
``STATEMENT_SECONDS`` (it runs on the host's loop); a query's rows are bounded in
number and bytes; and SQLite's own limits bound one value's size.
The file and
its journals are opened only when none of them is a symbolic link (checked beneath
the databases folder with no link followed, ``sandbox/paths.py``), and a missing
file is created there, with ``O_NOFOLLOW``, before SQLite opens it.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from workbench.errors import ToolError
from workbench.sandbox.paths import open_beneath

JOURNALS = ("", "-wal", "-shm", "-journal")

MAX_ROWS = 10_000
MAX_RESULT_BYTES = 8 << 20
"""The most a query's rows may hold (text and blobs), above the output bound."""
MAX_VALUE_BYTES = 16 << 20
"""The largest text or blob one statement may make (``SQLITE_LIMIT_LENGTH``)."""
DEFAULT_MAX_BYTES = 256 << 20
"""The size a private database may reach when the host sets none."""
STATEMENT_SECONDS = 5.0
"""How long one statement may run before it is interrupted."""
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._@-]+")

READ_PRAGMAS = frozenset({
    "application_id", "auto_vacuum", "collation_list", "compile_options", "data_version",
    "encoding", "foreign_keys", "freelist_count", "function_list", "journal_mode",
    "max_page_count", "module_list", "page_count", "page_size", "pragma_list",
    "schema_version", "user_version"})
"""Pragmas a tool may read (with no argument): they describe its own file."""
NAMED_PRAGMAS = frozenset({
    "foreign_key_check", "foreign_key_list", "index_info", "index_list", "index_xinfo",
    "integrity_check", "quick_check", "table_info", "table_list", "table_xinfo"})
"""Pragmas that look at one table or index of its own, named by the argument."""
SET_PRAGMAS = frozenset({"application_id", "foreign_keys", "optimize", "user_version"})
"""Pragmas a tool may also set: they change nothing beyond its own file and connection."""
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
DENIED_TABLES = frozenset({"pragma_database_list"})
"""Table-valued pragmas that would show the host's paths."""


def _authorizer(action: int, arg1, arg2, db_name, trigger) -> int:
    """SQLite's authorizer: only what stays inside the one file (see the module docstring)."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in NAMED_PRAGMAS or (arg2 is None and name in READ_PRAGMAS) or name in SET_PRAGMAS:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_READ and (arg1 or "").lower() in DENIED_TABLES:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


class _Deadline:
    """A progress handler that interrupts a statement running past its time."""

    def __init__(self) -> None:
        self.until = float("inf")

    def start(self) -> None:
        self.until = time.monotonic() + STATEMENT_SECONDS

    def __call__(self) -> int:
        return 1 if time.monotonic() > self.until else 0


def _refuse_outside_writes(sql: str) -> None:
    """``VACUUM INTO 'file'`` writes a copy anywhere the host can: refused."""
    if re.match(r"\s*vacuum\b", sql, re.IGNORECASE) and re.search(r"\binto\b", sql, re.IGNORECASE):
        raise ToolError("permission", "VACUUM INTO would write outside the private database")


def _check_params(params: Any) -> list[Any]:
    if params is None:
        return []
    if not isinstance(params, list):
        raise ToolError("invalid_arguments", "db params must be a list")
    for value in params:
        if not (value is None or isinstance(value, (str, int, float, bool))):
            raise ToolError("invalid_arguments",
                            "db params must be strings, numbers, booleans or null")
    return params


class ExtensionDatabases:
    """Opens (on first use) and serves the private database of each extension."""

    def __init__(self, folder: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        """The most each database (and its temporary tables) may hold."""
        self._connections: dict[str, sqlite3.Connection] = {}
        self._deadlines: dict[str, _Deadline] = {}
        self._lock = threading.Lock()

    def path(self, extension: str) -> Path:
        """Where ``extension``'s database lives."""
        return self.folder / f"{_SAFE_NAME.sub('_', extension)}.db"

    def _connect(self, extension: str) -> sqlite3.Connection:
        with self._lock:
            if extension not in self._connections:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._check_files(extension)
                conn = sqlite3.connect(self.path(extension), check_same_thread=False,
                                       isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA foreign_keys=ON")
                self._cap(conn)
                conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
                conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
                deadline = _Deadline()
                conn.set_progress_handler(deadline, 10_000)
                conn.set_authorizer(_authorizer)
                conn.row_factory = sqlite3.Row
                self._connections[extension] = conn
                self._deadlines[extension] = deadline
            return self._connections[extension]

    def _check_files(self, extension: str) -> None:
        """Refuse a database whose file or journal is a symbolic link; create a missing
        file as a plain one.

        Raises:
            ToolError: of kind ``permission``, naming the file.
        """
        name = self.path(extension).name
        for suffix in JOURNALS:
            flags = os.O_RDWR | os.O_CREAT if not suffix else os.O_PATH
            try:
                os.close(open_beneath(self.folder, name + suffix, flags | os.O_NOFOLLOW))
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise ToolError("permission", f"the private database file {name}{suffix} of "
                                    f"{extension} is a symbolic link; it is not opened "
                                    f"(in {self.folder})") from None
                raise ToolError("unavailable", f"the private database of {extension} cannot "
                                f"be opened: {exc.strerror}") from None

    def _cap(self, conn: sqlite3.Connection) -> None:
        """``max_page_count`` of the file and of the temporary tables, from ``max_bytes``."""
        pages = max(1, self.max_bytes // conn.execute("PRAGMA page_size").fetchone()[0])
        conn.execute(f"PRAGMA main.max_page_count={pages}")
        conn.execute(f"PRAGMA temp.max_page_count={pages}")

    def _failed(self, extension: str, exc: sqlite3.Error) -> ToolError:
        """A statement's error in words that say what to do."""
        name = getattr(exc, "sqlite_errorname", "")
        if name == "SQLITE_FULL":
            return ToolError("tool", f"the private database of {extension} is full: it may "
                             f"hold at most {self.max_bytes >> 20} MiB; "
                             "the write was refused")
        if name == "SQLITE_INTERRUPT":
            return ToolError("timeout", f"the statement ran longer than {STATEMENT_SECONDS:g} s "
                             "and was stopped")
        if name == "SQLITE_AUTH" or "not authorized" in str(exc):  # functions: SQLITE_ERROR
            return ToolError("permission", f"database error: {exc} (a private database allows "
                             "no ATTACH, no load_extension and only harmless pragmas)")
        return ToolError("tool", f"database error: {exc}")

    def query(self, extension: str, sql: str, params: Any = None) -> list[dict[str, Any]]:
        """Rows of a statement as objects keyed by column name."""
        conn = self._connect(extension)
        _refuse_outside_writes(sql)
        try:
            with self._lock:
                self._deadlines[extension].start()
                cursor = conn.execute(sql, _check_params(params))
                rows: list[Any] = []
                size = 0
                while len(rows) <= MAX_ROWS and (batch := cursor.fetchmany(500)):
                    rows.extend(batch)
                    size += sum(len(value) for row in batch for value in row
                                if isinstance(value, (str, bytes)))
                    if size > MAX_RESULT_BYTES:
                        raise ToolError("output_too_large", "the query's rows hold more than "
                                        f"{MAX_RESULT_BYTES} bytes")
        except sqlite3.Error as exc:
            raise self._failed(extension, exc) from exc
        if len(rows) > MAX_ROWS:
            raise ToolError("output_too_large", f"the query returned more than {MAX_ROWS} rows")
        return [dict(row) for row in rows]

    def execute(self, extension: str, sql: str, params: Any = None) -> dict[str, int]:
        """Run a statement; ``{changes, lastInsertRowId}``."""
        conn = self._connect(extension)
        _refuse_outside_writes(sql)
        try:
            with self._lock:
                self._deadlines[extension].start()
                cursor = conn.execute(sql, _check_params(params))
                return {"changes": cursor.rowcount if cursor.rowcount >= 0 else 0,
                        "lastInsertRowId": cursor.lastrowid or 0}
        except sqlite3.Error as exc:
            raise self._failed(extension, exc) from exc

    def drop(self, extension: str) -> None:
        """Delete ``extension``'s database (at uninstall)."""
        with self._lock:
            conn = self._connections.pop(extension, None)
            self._deadlines.pop(extension, None)
            if conn is not None:
                conn.close()
        base = self.path(extension)
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{base}{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        with self._lock:
            for conn in self._connections.values():
                conn.close()
            self._connections.clear()
            self._deadlines.clear()
