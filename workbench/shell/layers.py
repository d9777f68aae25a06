"""Reading a command's upper layer and applying it to the real project folder.

The sandbox hands the host the ``tmpfs`` that held the overlay's upper layer
(``sandbox/mounts.Layers``); once every process of the sandbox has ended, nothing can
change it. What it holds is still the command's work, so it is read as hostile:

- a regular file is new or modified; a symbolic link is made again as a link (never
  followed); a directory is new, or its mode changed; a character device 0/0 is a
  whiteout (the path was deleted); a directory marked opaque (``user.overlay.opaque``)
  replaced the one below, whose other entries were deleted;
- a FIFO, a socket or any other device is never made in the project, and no mode keeps
  a setuid, setgid or sticky bit: such entries are left out and said so;
- a hard link in the upper layer is applied as a copy.

The project is opened once (its pin checked) and every path beneath it is reached
from that descriptor with no symbolic link followed and never outside it
(``sandbox/paths.open_at_beneath``): a link the command planted, or one the person
has in the project, is replaced as an entry, never written through.

A path the person changed while the command ran (its change time at or after the
command's start, and not what our own last change left) keeps the person's version;
the command's file is saved beside it as ``NAME.shell-ID``. Every earlier content
the change overwrites or deletes is read (up to a budget) for the change set, so it
can be undone (``Changes.undo``).

This module imports only the sandbox's path helpers and the standard library.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass, field
from typing import Any

from workbench.sandbox.paths import open_at_beneath

OPAQUE = "user.overlay.opaque"
REDIRECT = "user.overlay.redirect"
METACOPY = "user.overlay.metacopy"
CHUNK = 1 << 20
MAX_DEPTH = 256
MODE_BITS = 0o777


def identity(info: os.stat_result) -> str:
    """What a path is now, to tell later whether someone changed it since."""
    kind = "dir" if stat.S_ISDIR(info.st_mode) else "link" if stat.S_ISLNK(info.st_mode) else "file"
    if kind == "dir":  # what it holds changes its times, not what it is
        return f"dir:{info.st_dev}:{info.st_ino}:{stat.S_IMODE(info.st_mode)}"
    return (f"{kind}:{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:"
            f"{info.st_ctime_ns}:{stat.S_IMODE(info.st_mode)}")


def kind_of(info: os.stat_result) -> str:
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISLNK(info.st_mode):
        return "link"
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "other"


@dataclass
class Applied:
    """What applying one upper layer did."""

    files: list[dict[str, Any]] = field(default_factory=list)
    """One row per path changed, in order (``store/changes.FILE_COLUMNS``)."""
    blobs: dict[str, bytes] = field(default_factory=dict)
    """Earlier contents kept for undo, by SHA-256."""
    skipped: list[str] = field(default_factory=list)
    """What was left out, each in words (a FIFO, a device, a redirect)."""
    identities: dict[str, str] = field(default_factory=dict)
    """What each changed path is now (``identity``), by path."""


class Applier:
    """Applies one upper layer to one project (see the module docstring).

    Args:
        project_fd: The project folder, opened (``O_PATH``) and checked against its pin.
        since_ns: When the command started (the coarse clock file times use).
        ours: The identity each path had after our own last change of it.
        copy_suffix: Appended to a file's name for the command's version of a file
            the person changed meanwhile (``.shell-ID``).
        budget: Bytes of earlier contents to keep for undo.
    """

    def __init__(self, project_fd: int, *, since_ns: int, ours: dict[str, str],
                 copy_suffix: str, budget: int) -> None:
        self.project = project_fd
        self.since_ns = since_ns
        self.ours = ours
        self.copy_suffix = copy_suffix
        self.budget = budget
        self.out = Applied()

    # --- the real folder ---------------------------------------------------------

    def _parent(self, rel: str) -> tuple[int, str]:
        """The folder holding ``rel`` (opened beneath the project) and its name there."""
        head, _, name = rel.rpartition("/")
        if not head:
            return os.dup(self.project), name
        return open_at_beneath(self.project, head, os.O_PATH | os.O_DIRECTORY), name

    @staticmethod
    def _lstat(parent: int, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def _changed_meanwhile(self, rel: str, info: os.stat_result | None) -> bool:
        if info is None or stat.S_ISDIR(info.st_mode):
            return False
        return info.st_ctime_ns >= self.since_ns and self.ours.get(rel) != identity(info)

    def _before(self, parent: int, name: str, rel: str, info: os.stat_result | None) -> dict[str, Any]:
        """The earlier state of ``rel`` for its change row, its contents kept if they fit."""
        row: dict[str, Any] = {"before_kind": None, "before_mode": None, "before_target": None,
                               "before_blob": None, "before_kept": 1}
        if info is None:
            return row
        row["before_kind"] = kind_of(info)
        row["before_mode"] = stat.S_IMODE(info.st_mode) & MODE_BITS
        if stat.S_ISLNK(info.st_mode):
            row["before_target"] = os.readlink(name, dir_fd=parent)
        elif stat.S_ISREG(info.st_mode):
            if info.st_size > self.budget:
                row["before_kept"] = 0
                row["note"] = (f"its earlier contents ({info.st_size} bytes) were more than the "
                               "room left for undo (shell.undo_mb): undo cannot bring them back")
                return row
            data = _read_all(parent, name, info.st_size + 1)
            sha = hashlib.sha256(data).hexdigest()
            if sha not in self.out.blobs:
                self.budget -= len(data)
            self.out.blobs[sha] = data
            row["before_blob"] = sha
        return row

    def _record(self, rel: str, action: str, kind: str, before: dict[str, Any], *,
                after_mode: int | None = None, copy: str | None = None, note: str = "") -> None:
        parent, name = self._parent(copy or rel)
        try:
            now = self._lstat(parent, name)
        finally:
            os.close(parent)
        after = identity(now) if now is not None else None
        if after is not None and copy is None:
            self.out.identities[rel] = after
        self.out.files.append({"seq": len(self.out.files), "path": rel, "action": action,
                               "kind": kind, **before, "after_mode": after_mode,
                               "after_identity": after, "copy": copy,
                               "note": note or before.get("note", "")})

    def _remove_tree(self, parent: int, name: str, rel: str, info: os.stat_result, depth: int = 0) -> None:
        """Delete ``rel`` (a folder: what it holds first), each path a change row."""
        if stat.S_ISDIR(info.st_mode):
            if depth > MAX_DEPTH:
                raise OSError(errno.ELOOP, "folders nested too deep", rel)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                            dir_fd=parent)
            try:
                for entry in sorted(os.listdir(inner)):
                    child = os.stat(entry, dir_fd=inner, follow_symlinks=False)
                    self._remove_tree(inner, entry, f"{rel}/{entry}", child, depth + 1)
            finally:
                os.close(inner)
            before = self._before(parent, name, rel, info)
            os.rmdir(name, dir_fd=parent)
        else:
            before = self._before(parent, name, rel, info)
            os.unlink(name, dir_fd=parent)
        self._record(rel, "deleted", "absent", before)

    # --- applying ------------------------------------------------------------------

    def apply(self, upper: int) -> Applied:
        """Apply the upper layer open as ``upper`` (the overlay's ``upper/`` folder)."""
        self._folder(upper, "", 0)
        return self.out

    def _folder(self, upper: int, prefix: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.out.skipped.append(f"{prefix}: folders nested too deep, left out")
            return
        for name in sorted(os.listdir(upper)):
            rel = f"{prefix}{name}"
            try:
                self._entry(upper, name, rel, depth)
            except OSError as exc:
                self.out.skipped.append(f"{rel}: not applied ({exc.strerror or exc})")

    def _entry(self, upper: int, name: str, rel: str, depth: int) -> None:
        info = os.stat(name, dir_fd=upper, follow_symlinks=False)
        mode = info.st_mode
        parent, real_name = self._parent(rel)
        try:
            real = self._lstat(parent, real_name)
            if stat.S_ISCHR(mode) and info.st_rdev == 0:
                self._whiteout(parent, real_name, rel, real)
            elif stat.S_ISDIR(mode):
                self._directory(upper, name, parent, real_name, rel, info, real, depth)
            elif stat.S_ISREG(mode):
                self._file(upper, name, parent, real_name, rel, info, real)
            elif stat.S_ISLNK(mode):
                self._link(upper, name, parent, real_name, rel, real)
            else:
                what = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                        else "a device")
                self.out.skipped.append(f"{rel}: {what} is never made in the project, left out")
        finally:
            os.close(parent)

    def _whiteout(self, parent: int, name: str, rel: str, real: os.stat_result | None) -> None:
        if real is None:
            return
        if self._changed_meanwhile(rel, real):
            self.out.skipped.append(f"{rel}: changed in the folder while the command ran; "
                                    "your version stays (the command deleted it)")
            return
        self._remove_tree(parent, name, rel, real)

    def _directory(self, upper: int, name: str, parent: int, real_name: str, rel: str,
                   info: os.stat_result, real: os.stat_result | None, depth: int) -> None:
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=upper)
        try:
            if _xattr(inner, REDIRECT) is not None:
                self.out.skipped.append(f"{rel}: a renamed folder (overlay redirect) is not applied")
                return
            opaque = _xattr(inner, OPAQUE) == b"y"
            mode = stat.S_IMODE(info.st_mode) & MODE_BITS
            if real is not None and not stat.S_ISDIR(real.st_mode):
                if self._changed_meanwhile(rel, real):
                    self.out.skipped.append(f"{rel}: changed in the folder while the command ran; "
                                            "your version stays (the command made a folder there)")
                    return
                self._remove_tree(parent, real_name, rel, real)
                real = None
            if real is None:
                os.mkdir(real_name, 0o700, dir_fd=parent)
                _chmod_dir(parent, real_name, mode)
                self._record(rel, "added", "dir", self._before(parent, real_name, rel, None),
                             after_mode=mode)
            else:
                if opaque:
                    self._clear_except(parent, real_name, rel, set(os.listdir(inner)))
                if stat.S_IMODE(real.st_mode) & MODE_BITS != mode:
                    before = self._before(parent, real_name, rel, real)
                    _chmod_dir(parent, real_name, mode)
                    self._record(rel, "mode", "dir", before, after_mode=mode)
            self._folder(inner, rel + "/", depth + 1)
        finally:
            os.close(inner)

    def _clear_except(self, parent: int, name: str, rel: str, keep: set[str]) -> None:
        """An opaque folder: delete what the real one holds beyond ``keep``."""
        real = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        try:
            for entry in sorted(set(os.listdir(real)) - keep):
                info = os.stat(entry, dir_fd=real, follow_symlinks=False)
                if self._changed_meanwhile(f"{rel}/{entry}", info):
                    self.out.skipped.append(f"{rel}/{entry}: changed in the folder while the command "
                                            "ran; your version stays (the command deleted it)")
                    continue
                self._remove_tree(real, entry, f"{rel}/{entry}", info)
        finally:
            os.close(real)

    def _file(self, upper: int, name: str, parent: int, real_name: str, rel: str,
              info: os.stat_result, real: os.stat_result | None) -> None:
        mode = stat.S_IMODE(info.st_mode) & MODE_BITS
        dropped = stat.S_IMODE(info.st_mode) & ~MODE_BITS
        source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=upper)
        try:
            metacopy = _xattr(source, METACOPY) is not None
            if real is not None and stat.S_ISREG(real.st_mode):
                same_data = metacopy or _same_contents(source, parent, real_name, info, real)
                if same_data and stat.S_IMODE(real.st_mode) & MODE_BITS == mode:
                    return  # opened for writing, or touched: nothing to apply
                if self._changed_meanwhile(rel, real):
                    if metacopy:
                        self.out.skipped.append(f"{rel}: changed in the folder while the command ran; "
                                                "your version stays (the command changed its mode)")
                        return
                    self._conflict(source, parent, real_name, rel, mode)
                    return
                before = self._before(parent, real_name, rel, real)
                if same_data:
                    _chmod_file(parent, real_name, mode)
                    self._record(rel, "mode", "file", before, after_mode=mode)
                    return
                _write_replace(source, parent, real_name, mode)
                self._record(rel, "modified", "file", before, after_mode=mode,
                             note=_dropped(dropped))
                return
            if metacopy:
                self.out.skipped.append(f"{rel}: its contents are gone from the folder; left out")
                return
            if real is not None:
                if self._changed_meanwhile(rel, real):
                    self._conflict(source, parent, real_name, rel, mode)
                    return
                if stat.S_ISDIR(real.st_mode):
                    self._remove_tree(parent, real_name, rel, real)
                    before = self._before(parent, real_name, rel, None)
                else:
                    before = self._before(parent, real_name, rel, real)
            else:
                before = self._before(parent, real_name, rel, None)
            _write_replace(source, parent, real_name, mode)
            action = "added" if before["before_kind"] is None else "modified"
            self._record(rel, action, "file", before, after_mode=mode, note=_dropped(dropped))
        finally:
            os.close(source)

    def _conflict(self, source: int, parent: int, real_name: str, rel: str, mode: int) -> None:
        copy_name = real_name + self.copy_suffix
        number = 1
        while self._lstat(parent, copy_name) is not None:
            number += 1
            copy_name = f"{real_name}{self.copy_suffix}-{number}"
        os.lseek(source, 0, os.SEEK_SET)
        _write_replace(source, parent, copy_name, mode, exclusive=True)
        head = rel.rpartition("/")[0]
        copy_rel = f"{head}/{copy_name}" if head else copy_name
        self._record(rel, "conflict", "file", self._before(parent, copy_name, copy_rel, None),
                     after_mode=mode, copy=copy_rel,
                     note=f"changed in the folder while the command ran: your version stays, the "
                          f"command's is {copy_rel}")

    def _link(self, upper: int, name: str, parent: int, real_name: str, rel: str,
              real: os.stat_result | None) -> None:
        target = os.readlink(name, dir_fd=upper)
        if real is not None and stat.S_ISLNK(real.st_mode) and os.readlink(real_name, dir_fd=parent) == target:
            return
        if self._changed_meanwhile(rel, real):
            self.out.skipped.append(f"{rel}: changed in the folder while the command ran; your "
                                    "version stays (the command made a link there)")
            return
        if real is not None and stat.S_ISDIR(real.st_mode):
            self._remove_tree(parent, real_name, rel, real)
            before = self._before(parent, real_name, rel, None)
        else:
            before = self._before(parent, real_name, rel, real)
        temporary = f".{real_name}.workbench-{os.getpid()}"
        os.symlink(target, temporary, dir_fd=parent)
        os.rename(temporary, real_name, src_dir_fd=parent, dst_dir_fd=parent)
        self._record(rel, "added" if before["before_kind"] is None else "modified", "link", before)


def _dropped(bits: int) -> str:
    return "its setuid, setgid or sticky bit was not applied" if bits else ""


def _xattr(fd: int, name: str) -> bytes | None:
    try:
        return os.getxattr(fd, name)
    except OSError:
        return None


def _read_all(parent: int, name: str, limit: int) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", name)
        chunks, size = [], 0
        while size < limit and (chunk := os.read(fd, min(CHUNK, limit - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _same_contents(source: int, parent: int, name: str, info: os.stat_result,
                   real: os.stat_result) -> bool:
    if info.st_size != real.st_size:
        return False
    other = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent)
    try:
        offset = 0
        while True:
            mine, theirs = os.pread(source, CHUNK, offset), os.pread(other, CHUNK, offset)
            if mine != theirs:
                return False
            if not mine:
                return True
            offset += len(mine)
    finally:
        os.close(other)


def _write_replace(source: int, parent: int, name: str, mode: int, *, exclusive: bool = False) -> None:
    """Write ``source``'s contents as ``name`` in ``parent``: into a new file beside it,
    then renamed over it (an entry there — a link included — is replaced, never
    written through)."""
    temporary = f".{name}.workbench-{os.getpid()}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=parent)
    try:
        offset = 0
        while True:
            try:
                copied = os.copy_file_range(source, fd, CHUNK, offset)
            except OSError:
                copied = -1
            if copied < 0:
                data = os.pread(source, CHUNK, offset)
                copied = os.write(fd, data) if data else 0
            if copied == 0:
                break
            offset += copied
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        os.unlink(temporary, dir_fd=parent)
        raise
    os.close(fd)
    if exclusive:
        os.link(temporary, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
        os.unlink(temporary, dir_fd=parent)
    else:
        os.rename(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)


def _chmod_file(parent: int, name: str, mode: int) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", name)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _chmod_dir(parent: int, name: str, mode: int) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
