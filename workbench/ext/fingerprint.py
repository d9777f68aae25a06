"""The fingerprint of an extension folder: the sha256 of every file, and one digest of all.

Files are named by their path relative to the folder, with ``/`` separators, and
sorted. The overall digest is the sha256 of the lines ``path\\0sha256\\n`` in that
order, written ``sha256:<hex>``. A symbolic link (which an install never creates)
counts as a file whose content is ``symlink:<target>``, so one planted by hand
shows up as a change; it is never followed.

Files the extension writes while it runs are left out: its private database
(``data.db`` and its journal files) and Python's ``__pycache__`` folders.

This module imports nothing of ours.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

RUNTIME_FILES = frozenset({"data.db", "data.db-wal", "data.db-shm", "data.db-journal"})
"""Files at an extension's root written while it runs: its private database."""

RUNTIME_DIRS = frozenset({"__pycache__"})
"""Folders, at any depth, written while an extension runs."""

_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class FileDigest:
    """One file of a fingerprint.

    Attributes:
        path: Relative to the extension folder, ``/``-separated.
        sha256: The hex sha256 of its bytes.
        size: Its size in bytes.
    """

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Fingerprint:
    """Every file of a folder with its digest, sorted by path, and the overall digest."""

    files: tuple[FileDigest, ...]

    def lines(self) -> bytes:
        """The text the overall digest (and the built-in's signature) covers."""
        return b"".join(f"{item.path}\0{item.sha256}\n".encode() for item in self.files)

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of :meth:`lines`."""
        return "sha256:" + hashlib.sha256(self.lines()).hexdigest()

    def by_path(self) -> dict[str, str]:
        """Each file's sha256 by path."""
        return {item.path: item.sha256 for item in self.files}

    @property
    def total_bytes(self) -> int:
        return sum(item.size for item in self.files)


@dataclass(frozen=True)
class FingerprintCheck:
    """How a folder's files compare with the recorded ones.

    Attributes:
        changed: Files whose content differs.
        added: Files that were not recorded.
        missing: Recorded files that are gone.
        digest: The folder's current overall digest.
    """

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    digest: str = ""
    current: Fingerprint = field(default_factory=lambda: Fingerprint(()), repr=False)

    @property
    def ok(self) -> bool:
        """True when nothing changed, was added or went missing."""
        return not (self.changed or self.added or self.missing)

    def paths(self) -> list[str]:
        """Every differing path, sorted."""
        return sorted({*self.changed, *self.added, *self.missing})

    def to_json(self) -> dict:
        return {"ok": self.ok, "changed": list(self.changed), "added": list(self.added),
                "missing": list(self.missing), "digest": self.digest}


def _hash_file(path: str) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    return hasher.hexdigest(), size


def file_digest(full: str, info: os.stat_result) -> str:
    """The sha256 one entry counts for in a fingerprint (``info`` is its ``lstat``): its
    bytes, a link's target, or a special file's type."""
    if stat.S_ISLNK(info.st_mode):
        return hashlib.sha256(f"symlink:{os.readlink(full)}".encode()).hexdigest()
    if stat.S_ISREG(info.st_mode):
        return _hash_file(full)[0]
    return hashlib.sha256(f"special:{stat.S_IFMT(info.st_mode)}".encode()).hexdigest()


def fingerprint(folder: Path, *, exclude: Iterable[str] = ()) -> Fingerprint:
    """Fingerprint every file under ``folder``.

    Args:
        folder: The extension folder.
        exclude: Relative paths of root-level files to leave out as well (the
            built-in's ``SIGNATURE``).

    Returns:
        The fingerprint; runtime files (:data:`RUNTIME_FILES`, :data:`RUNTIME_DIRS`)
        are not in it.
    """
    skip_root = RUNTIME_FILES | frozenset(exclude)
    found: list[FileDigest] = []
    root = os.fspath(folder)
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        relative_dir = os.path.relpath(directory, root)
        prefix = "" if relative_dir == "." else relative_dir.replace(os.sep, "/") + "/"
        kept_dirs = []
        for name in dirnames:
            full = os.path.join(directory, name)
            if os.path.islink(full):
                filenames.append(name)  # a link to a folder is recorded, not followed
            elif name not in RUNTIME_DIRS:
                kept_dirs.append(name)
        dirnames[:] = sorted(kept_dirs)
        for name in filenames:
            relative = prefix + name
            if not prefix and name in skip_root:
                continue
            full = os.path.join(directory, name)
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                content = f"symlink:{os.readlink(full)}".encode()
                found.append(FileDigest(relative, hashlib.sha256(content).hexdigest(),
                                        len(content)))
            elif stat.S_ISREG(info.st_mode):
                digest, size = _hash_file(full)
                found.append(FileDigest(relative, digest, size))
            else:
                found.append(FileDigest(relative, file_digest(full, info), 0))
    found.sort(key=lambda item: item.path)
    return Fingerprint(tuple(found))


def compare(recorded: Mapping[str, str], current: Fingerprint) -> FingerprintCheck:
    """Compare a recorded ``{path: sha256}`` with a folder's current fingerprint."""
    now = current.by_path()
    changed = tuple(sorted(p for p, h in now.items() if p in recorded and recorded[p] != h))
    added = tuple(sorted(p for p in now if p not in recorded))
    missing = tuple(sorted(p for p in recorded if p not in now))
    return FingerprintCheck(changed, added, missing, current.digest, current)
