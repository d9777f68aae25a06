"""Unpack an extension archive (``.tgz``, ``.tar.gz``, ``.zip``) as if it were hostile.

Every member is checked before a byte of it is written: no absolute paths or drive
letters, no ``..`` segments, no backslashes, no device files or FIFOs, and no links
at all. Links are refused outright rather than followed and checked: an extension is
a folder of plain files, ``npm pack`` never produces links, and a folder without
links cannot be tricked into writing or reading outside itself. The caps on the
number of entries, the size of one file and the size of everything together are
enforced on the bytes actually written, not only on the sizes the archive declares.
Every refusal names the offending member.

Tar archives are read as a stream (no seeking), so a compressed bomb is stopped at
the first member over a cap, not after it has been inflated. When everything sits
under one top folder (npm tarballs use ``package/``, GitHub zips ``repo-main/``),
that folder is the extension's root.

This module imports nothing of ours but ``workbench.ext.errors``.
"""

from __future__ import annotations

import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from workbench.ext.errors import ArchiveError

MIB = 1024 * 1024

IGNORED_TOP_FOLDERS = frozenset({"__MACOSX"})
"""Top-level folders some zip tools add that never belong to the content."""

_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ArchiveLimits:
    """The caps an archive must stay within.

    Attributes:
        max_total_bytes: All files together, uncompressed.
        max_files: Entries (files and folders).
        max_file_bytes: One file, uncompressed.
    """

    max_total_bytes: int = 100 * MIB
    max_files: int = 20_000
    max_file_bytes: int = 50 * MIB


class _Budget:
    """Counts what has been written against the limits."""

    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.entries = 0
        self.total = 0

    def entry(self, member: str) -> None:
        self.entries += 1
        if self.entries > self.limits.max_files:
            raise ArchiveError(f"refused at member {member!r}: the archive holds more than "
                               f"{self.limits.max_files} entries")

    def declared(self, member: str, size: int) -> None:
        if size > self.limits.max_file_bytes:
            raise ArchiveError(f"refused: member {member!r} is {size} bytes; the limit for "
                               f"one file is {self.limits.max_file_bytes}")
        if self.total + size > self.limits.max_total_bytes:
            raise ArchiveError(f"refused at member {member!r}: unpacking it would exceed "
                               f"{self.limits.max_total_bytes} bytes for the whole extension")

    def written(self, member: str, count: int, so_far: int) -> None:
        self.total += count
        if so_far > self.limits.max_file_bytes:
            raise ArchiveError(f"refused: member {member!r} is larger than "
                               f"{self.limits.max_file_bytes} bytes")
        if self.total > self.limits.max_total_bytes:
            raise ArchiveError(f"refused at member {member!r}: unpacking it would exceed "
                               f"{self.limits.max_total_bytes} bytes for the whole extension")


def member_parts(name: str) -> list[str]:
    """The path segments of an archive member, checked.

    Args:
        name: The member's name as stored in the archive.

    Returns:
        Its segments without empty and ``.`` ones; empty for the archive's root.

    Raises:
        ArchiveError: The name is absolute, has a drive letter, a ``..`` segment, a
            backslash or a NUL character.
    """
    if "\x00" in name:
        raise ArchiveError(f"refused: member {name!r} has a NUL character in its name")
    if "\\" in name:
        raise ArchiveError(f"refused: member {name!r} has a backslash in its name")
    if name.startswith("/"):
        raise ArchiveError(f"refused: member {name!r} has an absolute path")
    if len(name) >= 2 and name[1] == ":" and name[0].isalpha():
        raise ArchiveError(f"refused: member {name!r} starts with a drive letter")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"refused: member {name!r} has a '..' segment that leads "
                           "out of the extension folder")
    return parts


def _target(dest: Path, name: str, parts: list[str]) -> Path:
    target = dest.joinpath(*parts)
    # Belt and braces: with no links in the tree and no '..', this always holds.
    if os.path.commonpath([dest, target]) != str(dest):
        raise ArchiveError(f"refused: member {name!r} leads out of the extension folder")
    return target


def _make_dir(dest: Path, name: str, parts: list[str]) -> None:
    target = _target(dest, name, parts)
    try:
        target.mkdir(mode=0o755, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ArchiveError(f"refused: member {name!r} is a folder where a file of the same "
                           "name was already unpacked") from None


def _write_file(dest: Path, name: str, parts: list[str], stream: BinaryIO,
                executable: bool, budget: _Budget) -> None:
    target = _target(dest, name, parts)
    try:
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ArchiveError(f"refused: member {name!r} lies under a path that was unpacked "
                           "as a file") from None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o755 if executable else 0o644)
    except FileExistsError:
        raise ArchiveError(f"refused: member {name!r} appears more than once") from None
    except IsADirectoryError:
        raise ArchiveError(f"refused: member {name!r} is a file where a folder of the same "
                           "name was already unpacked") from None
    size = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
            budget.written(name, len(chunk), size)
            out.write(chunk)


def _extract_tar(archive: Path, dest: Path, budget: _Budget) -> None:
    import tarfile  # an install's alone: not at every start, which imports this module

    with tarfile.open(archive, mode="r|*") as tar:
        for member in tar:
            name = member.name
            budget.entry(name)
            if member.issym() or member.islnk():
                kind = "symbolic link" if member.issym() else "hard link"
                raise ArchiveError(f"refused: member {name!r} is a {kind} (to "
                                   f"{member.linkname!r}); links are not accepted in "
                                   "extension archives")
            if member.ischr() or member.isblk() or member.isfifo():
                raise ArchiveError(f"refused: member {name!r} is a device file or FIFO")
            if not (member.isreg() or member.isdir()):
                raise ArchiveError(f"refused: member {name!r} is not a regular file or "
                                   f"folder (tar type {member.type!r})")
            parts = member_parts(name)
            if not parts or parts[0] in IGNORED_TOP_FOLDERS:
                continue
            if member.isdir():
                _make_dir(dest, name, parts)
                continue
            budget.declared(name, member.size)
            stream = tar.extractfile(member)
            assert stream is not None  # a regular member always has data
            _write_file(dest, name, parts, stream, bool(member.mode & 0o111), budget)


def _extract_zip(archive: Path, dest: Path, budget: _Budget) -> None:
    import zipfile

    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        if len(infos) > budget.limits.max_files:
            raise ArchiveError(f"refused: the archive holds {len(infos)} entries; the limit "
                               f"is {budget.limits.max_files}")
        for info in infos:
            name = info.filename
            budget.entry(name)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(f"refused: member {name!r} is a symbolic link; links are "
                                   "not accepted in extension archives")
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) \
                    or stat.S_ISSOCK(mode):
                raise ArchiveError(f"refused: member {name!r} is a device file, FIFO or socket")
            if info.flag_bits & 0x1:
                raise ArchiveError(f"refused: member {name!r} is encrypted")
            parts = member_parts(name)
            if not parts or parts[0] in IGNORED_TOP_FOLDERS:
                continue
            if info.is_dir():
                _make_dir(dest, name, parts)
                continue
            budget.declared(name, info.file_size)
            with zf.open(info) as stream:
                _write_file(dest, name, parts, stream, bool(mode & 0o111), budget)


def content_root(dest: Path) -> Path:
    """The folder holding the extension: ``dest``, or its only child folder."""
    children = list(dest.iterdir())
    if len(children) == 1 and children[0].is_dir() and not children[0].is_symlink():
        return children[0]
    return dest


def extract_archive(archive: Path, dest: Path,
                    limits: ArchiveLimits | None = None) -> Path:
    """Unpack ``archive`` into the new folder ``dest``, refusing anything unsafe.

    On a refusal ``dest`` may hold part of the archive; the caller, who made the
    staging folder, removes it.

    Args:
        archive: A ``.zip`` file, or a tar archive (gzip-compressed or not).
        dest: A folder that does not exist yet; its parent must.
        limits: The caps; :class:`ArchiveLimits` defaults when omitted.

    Returns:
        The extension's root folder: ``dest``, or the single top folder inside it.

    Raises:
        ArchiveError: A member is unsafe or over a cap (the message names it), or the
            file is not a readable archive.
    """
    import tarfile
    import zipfile

    budget = _Budget(limits or ArchiveLimits())
    dest.mkdir(mode=0o755)
    try:
        if archive.name.lower().endswith(".zip"):
            _extract_zip(archive, dest, budget)
        else:
            _extract_tar(archive, dest, budget)
    except ArchiveError as exc:
        exc.where = str(archive)
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ArchiveError(f"not a readable archive ({exc})", where=str(archive)) from None
    except OSError as exc:
        raise ArchiveError(f"cannot unpack: {exc.strerror or exc}", where=str(archive)) from None
    return content_root(dest)
