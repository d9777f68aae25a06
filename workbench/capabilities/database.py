"""Each extension's private SQLite database, reached by its tools through ``ctx.db``.

The host runs the statements on the tool's behalf, so the file never enters the
sandbox. An authorizer refuses what would reach beyond the one file: ``ATTACH``,
``DETACH`` and ``VACUUM INTO``; loading SQLite extensions stays off. The file and
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
from pathlib import Path
from typing import Any

from workbench.errors import ToolError
from workbench.sandbox.paths import open_beneath

JOURNALS = ("", "-wal", "-shm", "-journal")

MAX_ROWS = 10_000
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._@-]+")


def _authorizer(action: int, arg1, arg2, db_name, trigger) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


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

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._connections: dict[str, sqlite3.Connection] = {}
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
                conn.set_authorizer(_authorizer)
                conn.row_factory = sqlite3.Row
                self._connections[extension] = conn
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

    def query(self, extension: str, sql: str, params: Any = None) -> list[dict[str, Any]]:
        """Rows of a statement as objects keyed by column name."""
        conn = self._connect(extension)
        _refuse_outside_writes(sql)
        try:
            with self._lock:
                cursor = conn.execute(sql, _check_params(params))
                rows = cursor.fetchmany(MAX_ROWS + 1)
        except sqlite3.Error as exc:
            raise ToolError("tool", f"database error: {exc}") from exc
        if len(rows) > MAX_ROWS:
            raise ToolError("output_too_large", f"the query returned more than {MAX_ROWS} rows")
        return [dict(row) for row in rows]

    def execute(self, extension: str, sql: str, params: Any = None) -> dict[str, int]:
        """Run a statement; ``{changes, lastInsertRowId}``."""
        conn = self._connect(extension)
        _refuse_outside_writes(sql)
        try:
            with self._lock:
                cursor = conn.execute(sql, _check_params(params))
                return {"changes": cursor.rowcount if cursor.rowcount >= 0 else 0,
                        "lastInsertRowId": cursor.lastrowid or 0}
        except sqlite3.Error as exc:
            raise ToolError("tool", f"database error: {exc}") from exc

    def drop(self, extension: str) -> None:
        """Delete ``extension``'s database (at uninstall)."""
        with self._lock:
            conn = self._connections.pop(extension, None)
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
