"""Database files: where they live, how one is opened, created and deleted.

A database is ``<data>/databases/<id>.db``: directory 0700, files 0600, WAL,
foreign keys on, busy timeout 3 s, at most 10 s for one operation and at most
1 GiB per file (``max_page_count``, set on every connection). An id matches
``^[a-z][a-z0-9-]{0,63}$`` and is refused before it reaches the file system; a
symbolic link is never followed, neither on the way to the folder nor as a file.

Creation and deletion are steps of which exactly one is the point of no return, so
a crash (kill -9) between any two of them leaves the database whole or gone:

- creation: (1) an empty file under a temporary name ``<id>.partial-…``, (2) the
  catalog built in it and the connection closed, (3) the file hard-linked to
  ``<id>.db`` (the point of no return: a complete file appears at once), (4) the
  temporary name removed;
- deletion: (1) ``<id>.db`` renamed to ``.deleting<id>-…`` (the point of no return:
  the database is gone at once), (2) its ``-wal``/``-shm``/``-journal`` files removed,
  (3) the renamed file removed.

``settle`` runs whenever the folder is opened — at the start of every call of every
tool, in any process, before any database is read — and finishes or drops what a
crash left: temporary and renamed-aside files, and journal files whose database is
gone (a stale ``-wal`` must never be replayed into a new database of the same id).
Each step holds a shared lock on ``databases/.steps.lock``; ``settle`` cleans only
when it gets the lock exclusively, so it never takes a file another process is still
building or deleting.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sqlite3
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from tablesdb.errors import TablesError, invalid, unknown_database

ID = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
MAX_BYTES = 1024 ** 3
BUSY_MS = 3000
OPERATION_S = 10.0
EXPORT_S = 24 * 3600
"""How long an export file is kept."""
_PARTIAL = ".partial"
_DELETING = ".deleting"
_LOCK = ".steps.lock"
_JOURNALS = ("-wal", "-shm", "-journal")
CREATE_STEPS = ("partial", "built", "linked", "cleaned")
"""The steps of a creation, as ``build`` reports them to its ``step`` hook."""
DELETE_STEPS = ("aside", "journals", "removed")
"""The steps of a deletion, as ``remove`` reports them to its ``step`` hook."""


def _no_step(name: str) -> None:
    """A step done (tests stop a process here with kill -9)."""


def check_id(resource_id: object) -> str:
    if not isinstance(resource_id, str) or not ID.match(resource_id):
        raise invalid("resourceId must match ^[a-z][a-z0-9-]{0,63}$")
    return resource_id


def _no_links(path: Path) -> None:
    """Refuse ``path`` when it, or any folder on the way to it, is a symbolic link."""
    current = Path(path.anchor)
    for part in path.parts[1:]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode):
            raise TablesError("invalid", f"{current} is a symbolic link, which Tables never follows")


class Folder:
    """The add-on's data folder (``$data`` of the extension), holding ``databases/``
    and ``exports/``."""

    def __init__(self, root: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> None:
        self.root = Path(os.path.abspath(root))
        self.max_bytes = max_bytes
        _no_links(self.root)
        self.databases = self.root / "databases"
        self.exports = self.root / "exports"
        for folder in (self.root, self.databases, self.exports):
            _no_links(folder)
            folder.mkdir(mode=0o700, exist_ok=True)
        self.settle()

    def path(self, resource_id: str) -> Path:
        return self.databases / f"{check_id(resource_id)}.db"

    def exists(self, resource_id: str) -> bool:
        path = self.path(resource_id)
        _no_links(path)
        return path.is_file()

    def ids(self) -> list[str]:
        found = []
        for entry in os.scandir(self.databases):
            name = entry.name
            if name.endswith(".db") and ID.match(name[:-3]) and entry.is_file(follow_symlinks=False):
                found.append(name[:-3])
        return sorted(found)

    @contextlib.contextmanager
    def _steps(self, exclusive: bool = False) -> Iterator[bool]:
        """Hold the lock of the creation and deletion steps: shared while one runs,
        exclusive (without waiting) to settle; yields whether it is held."""
        lock = self.databases / _LOCK
        _no_links(lock)
        fd = os.open(lock, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # releases the lock

    def settle(self, now: float | None = None) -> None:
        """Drop what an interrupted creation left (a partial file is never a database),
        finish an interrupted deletion, drop journal files whose database is gone, and
        remove exports older than a day (an export is a temporary file). Skipped for
        the databases while another process is between the steps of one."""
        with self._steps(exclusive=True) as alone:
            if alone:
                names = {entry.name for entry in os.scandir(self.databases)}
                for name in names:
                    base = next((name[:-len(j)] for j in _JOURNALS if name.endswith(j)), None)
                    orphan = base is not None and base.endswith(".db") and base not in names
                    if _PARTIAL in name or name.startswith(_DELETING) or orphan:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(self.databases / name)
        limit = (time.time() if now is None else now) - EXPORT_S
        for entry in os.scandir(self.exports):
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < limit:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)

    @contextlib.contextmanager
    def connect(self, resource_id: str, *, create: bool = False) -> Iterator[Connection]:
        """A connection to the database ``resource_id``; ``unknown`` when there is none."""
        path = self.path(resource_id)
        _no_links(path)
        if not create and not path.is_file():
            raise unknown_database()
        conn = open_file(path, self.max_bytes)
        try:
            yield conn
        finally:
            conn.close()

    def build(self, resource_id: str, init, step=_no_step) -> bool:
        """Create ``resource_id`` with ``init(conn)`` under a temporary name, then link it
        into place (``CREATE_STEPS``). False when it already exists (nothing is changed)."""
        final = self.path(resource_id)
        _no_links(final)
        if final.exists():
            return False
        with self._steps():
            partial = self.databases / f"{resource_id}{_PARTIAL}-{os.getpid()}-{time.monotonic_ns()}"
            fd = os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
            os.close(fd)
            step("partial")
            try:
                conn = open_file(partial, self.max_bytes, wal=False)
                try:
                    init(conn)
                    conn.execute("PRAGMA journal_mode=WAL")
                finally:
                    conn.close()
                step("built")
                try:
                    os.link(partial, final)
                except FileExistsError:
                    return False
                step("linked")
            finally:
                for suffix in ("", *_JOURNALS):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"{partial}{suffix}")
            step("cleaned")
        return True

    def remove(self, resource_id: str, step=_no_step) -> bool:
        """Delete ``resource_id`` and its journal files (``DELETE_STEPS``); False when it
        was gone."""
        path = self.path(resource_id)
        _no_links(path)
        with self._steps():
            aside = self.databases / f"{_DELETING}{resource_id}-{time.monotonic_ns()}"
            try:
                os.rename(path, aside)
            except FileNotFoundError:
                return False
            step("aside")
            for suffix in _JOURNALS:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{path}{suffix}")
            step("journals")
            os.unlink(aside)
            step("removed")
        return True


class Connection(sqlite3.Connection):
    """A connection that carries the deadline of its current operation."""

    deadline: list[float]


def open_file(path: Path, max_bytes: int, *, wal: bool = True) -> Connection:
    conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=BUSY_MS / 1000,
                           isolation_level=None, check_same_thread=False, factory=Connection)
    conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    if wal:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            conn.close()
            raise TablesError("invalid", f"{path.name} cannot be opened in WAL mode")
    conn.execute("PRAGMA synchronous=FULL")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={max(1, int(max_bytes) // int(page))}")
    conn.execute("PRAGMA trusted_schema=OFF")
    deadline = [time.monotonic() + OPERATION_S]

    def guard() -> int:
        return 1 if time.monotonic() > deadline[0] else 0

    conn.set_progress_handler(guard, 1000)
    conn.deadline = deadline
    return conn


def restart_clock(conn: sqlite3.Connection) -> None:
    """Give the next operation on ``conn`` its own 10 s."""
    deadline = getattr(conn, "deadline", None)
    if deadline is not None:
        deadline[0] = time.monotonic() + OPERATION_S
