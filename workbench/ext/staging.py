"""The staging area beside the extensions folder, its journal, the install lock, and copying.

Every install, update and removal works in a private folder under
``<home>/staging/`` (the same filesystem as ``<home>/extensions/``, so the step that
puts files in place is one atomic ``rename``). A staging folder is named after the
process that made it, so a later start can tell the leftovers of a killed run from
the work of a live one. Before the rename that commits a change, a journal
(``journal.json``) records what is being done, so recovery can finish or undo it.

Changes to the extensions folder and its records are serialized between processes
by an exclusive lock on ``<home>/extensions.lock``.

This module imports nothing of ours but ``workbench.ext``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.ext.archive import ArchiveLimits
from workbench.ext.errors import ExtensionError
from workbench.ext.fingerprint import RUNTIME_DIRS, RUNTIME_FILES

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

JOURNAL_NAME = "journal.json"
"""The file in a staging folder that says which change is being committed."""

SKIPPED_DIRS = frozenset({".git", "node_modules"}) | RUNTIME_DIRS
"""Folders never copied from a source folder: version control, installed
dependencies (they are resolved at install, never shipped) and Python's caches."""

STALE_AFTER_S = 24 * 3600
"""A staging folder older than this is a leftover even if its process id is in use
again (on systems where liveness cannot be checked, the only test)."""


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class StagingArea:
    """Private working folders under ``root``, one per change.

    Args:
        root: ``<home>/staging``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def new(self) -> Path:
        """Make a fresh private staging folder named after this process."""
        folder = self.root / f"{os.getpid()}-{secrets.token_hex(6)}"
        for _attempt in range(5):
            self.root.mkdir(mode=0o700, exist_ok=True)
            try:
                folder.mkdir(mode=0o700)
            except FileNotFoundError:
                continue  # another process removed the empty area in between
            return folder
        raise ExtensionError("cannot make a staging folder", where=str(self.root))

    def discard(self, stage: Path) -> None:
        """Delete a staging folder, and the staging area itself once it is empty."""
        remove_tree(stage)
        with contextlib.suppress(OSError):
            self.root.rmdir()

    def leftovers(self) -> list[Path]:
        """Staging folders whose process is gone (or that are older than a day)."""
        if not self.root.is_dir():
            return []
        found = []
        now = time.time()
        for entry in sorted(self.root.iterdir()):
            pid_text = entry.name.split("-", 1)[0]
            try:
                age = now - entry.lstat().st_mtime
            except OSError:
                continue
            dead = not pid_text.isdigit() or not _alive(int(pid_text))
            if dead or age > STALE_AFTER_S:
                found.append(entry)
        return found


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename in it) to disk, where the system allows it."""
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_journal(stage: Path, data: dict[str, Any]) -> None:
    """Write ``journal.json`` into a staging folder, durably, before a commit."""
    path = stage / JOURNAL_NAME
    partial = stage / (JOURNAL_NAME + ".part")
    with partial.open("w", encoding="utf-8") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)
    fsync_dir(stage)


def read_journal(stage: Path) -> dict[str, Any] | None:
    """The journal of a staging folder, or None when it has none or it is unreadable."""
    try:
        data = json.loads((stage / JOURNAL_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def remove_tree(path: Path) -> None:
    """Delete a file or folder if it exists, making read-only entries writable first."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
        return
    if not path.exists():
        return

    def retry(func, name, _error) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(name), 0o700)
            os.chmod(name, 0o700)
            func(name)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def copy_folder(src: Path, dest: Path, limits: ArchiveLimits | None = None) -> None:
    """Copy an extension folder into the new folder ``dest`` as plain files.

    ``.git``, ``node_modules``, ``__pycache__`` and a private database at the root
    are left behind. Links are refused, as in archives; so are device files.

    Raises:
        ExtensionError: A link or special file, or the folder is over a cap; the
            message names the file.
    """
    limits = limits or ArchiveLimits()
    dest.mkdir(mode=0o755)
    entries = total = 0
    for directory, dirnames, filenames in os.walk(src, followlinks=False):
        here = Path(directory)
        relative_dir = here.relative_to(src)
        for name in list(dirnames):
            if (here / name).is_symlink():
                raise ExtensionError(f"{relative_dir / name} is a symbolic link; links are "
                                     "not accepted in extensions", where=str(src))
        dirnames[:] = sorted(name for name in dirnames if name not in SKIPPED_DIRS)
        for name in dirnames:
            entries += 1
            (dest / relative_dir / name).mkdir(mode=0o755)
        for name in sorted(filenames):
            relative = relative_dir / name
            if relative_dir == Path(".") and name in RUNTIME_FILES:
                continue
            info = os.lstat(here / name)
            if stat.S_ISLNK(info.st_mode):
                raise ExtensionError(f"{relative} is a symbolic link; links are not accepted "
                                     "in extensions", where=str(src))
            if not stat.S_ISREG(info.st_mode):
                raise ExtensionError(f"{relative} is not a regular file", where=str(src))
            entries += 1
            total += info.st_size
            if entries > limits.max_files:
                raise ExtensionError(f"the folder holds more than {limits.max_files} files "
                                     f"and folders (at {relative})", where=str(src))
            if info.st_size > limits.max_file_bytes:
                raise ExtensionError(f"{relative} is {info.st_size} bytes; the limit for one "
                                     f"file is {limits.max_file_bytes}", where=str(src))
            if total > limits.max_total_bytes:
                raise ExtensionError(f"the folder is larger than {limits.max_total_bytes} "
                                     f"bytes (at {relative})", where=str(src))
            target = dest / relative
            shutil.copyfile(here / name, target, follow_symlinks=False)
            os.chmod(target, 0o755 if info.st_mode & 0o111 else 0o644)


def prune_runtime_files(folder: Path) -> None:
    """Delete what an extension writes while it runs from freshly unpacked files:
    a private database at the root and ``__pycache__`` folders."""
    for name in RUNTIME_FILES:
        remove_tree(folder / name)
    for directory, dirnames, _ in os.walk(folder):
        for name in list(dirnames):
            if name in RUNTIME_DIRS:
                remove_tree(Path(directory) / name)
                dirnames.remove(name)


def move_runtime_files(src: Path, dest: Path) -> list[str]:
    """Move an extension's private database files from ``src`` to ``dest`` (an update
    keeps the person's data).

    Returns:
        The names moved.
    """
    moved = []
    for name in sorted(RUNTIME_FILES):
        if (src / name).is_file() and not (dest / name).exists():
            os.rename(src / name, dest / name)
            moved.append(name)
    return moved
