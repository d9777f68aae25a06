"""Opening paths without following symbolic links, and pinning a granted path.

Two uses, one module:

- **Granted paths.** When a person grants a path, it is *pinned*: the path it
  resolves to then (``os.path.realpath``) and the device and inode found there
  (:func:`pin_path`). Each time a worker starts, the pinned path is opened again
  with no symbolic link followed in any component (:func:`open_pinned`) and must
  be the same device and inode; the Landlock rule is made from that very
  descriptor, so nothing can be swapped between the check and the rule. A link
  planted in the path, a folder renamed or bind-mounted over it, a file replaced
  by a new one or by a hard link: each is :class:`PathChanged`, naming the path.
- **Files the host reads or writes for a tool** (shipped knowledge, skill files,
  images): :func:`open_beneath` opens a relative path inside a folder, refusing
  absolute paths, ``..``, and every symbolic link on the way, and never leaves
  the folder.

Both use ``openat2(2)`` with ``RESOLVE_NO_SYMLINKS`` (and ``RESOLVE_BENEATH``)
where the kernel has it (Linux 5.6 and later), and otherwise walk the path one
component at a time with ``O_NOFOLLOW``. This module imports nothing of ours but
the libc binding, and is cheap to import (the zygote and the host both do).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from dataclasses import dataclass

from workbench.sandbox._libc import libc

SYS_OPENAT2 = 437
RESOLVE_NO_XDEV = 0x01
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08

AT_FDCWD = -100


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_openat2_works: bool | None = None
"""Whether this kernel has ``openat2`` (found out at the first use)."""


def _openat2(dirfd: int, path: str, flags: int, resolve: int, mode: int = 0) -> int:
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, resolve)
    fd = libc.syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(dirfd),
                      ctypes.c_char_p(os.fsencode(path)), ctypes.byref(how),
                      ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)
    return int(fd)


def has_openat2() -> bool:
    """Whether this kernel has ``openat2`` (else paths are walked with ``O_NOFOLLOW``)."""
    global _openat2_works
    if _openat2_works is None:
        try:
            os.close(_openat2(AT_FDCWD, "/", os.O_PATH, RESOLVE_NO_SYMLINKS))
            _openat2_works = True
        except OSError as exc:
            _openat2_works = exc.errno not in (errno.ENOSYS, errno.EPERM, errno.EINVAL)
    return _openat2_works


def _walk(dirfd: int, parts: list[str], flags: int, shown: str) -> int:
    """Open ``parts`` under ``dirfd`` one component at a time, never following a link."""
    current = os.dup(dirfd) if dirfd != AT_FDCWD else os.open(".", os.O_PATH | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            step = (flags if last else os.O_PATH | os.O_DIRECTORY) | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                nxt = os.open(part, step, dir_fd=current)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(current, part):
                    raise OSError(errno.ELOOP, "a symbolic link is in the way", shown) from None
                raise OSError(exc.errno, exc.strerror, shown) from None
            os.close(current)
            current = nxt
            if last and flags & os.O_PATH and stat.S_ISLNK(os.fstat(current).st_mode):
                raise OSError(errno.ELOOP, "a symbolic link is in the way", shown)
        result, current = current, -1
        return result
    finally:
        if current >= 0:
            os.close(current)


def _is_link(dirfd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_nofollow(path: str, flags: int = os.O_PATH) -> int:
    """Open the absolute ``path`` with no symbolic link followed in any component.

    Raises:
        OSError: ``ELOOP`` when a link is in the way; whatever else ``open`` raises.
    """
    if not os.path.isabs(path):
        raise OSError(errno.EINVAL, "not an absolute path", path)
    path = os.path.normpath(path)
    if has_openat2():
        try:
            return _openat2(AT_FDCWD, path, flags, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
        except OSError as exc:
            raise OSError(exc.errno, "a symbolic link is in the way" if exc.errno == errno.ELOOP
                          else exc.strerror, path) from None
    root = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        parts = [part for part in path.split("/") if part]
        return _walk(root, parts, flags, path) if parts else os.dup(root)
    finally:
        os.close(root)


def _relative_parts(relative: str) -> list[str]:
    if not relative or os.path.isabs(relative) or "\0" in relative:
        raise OSError(errno.EINVAL, "not a path inside the folder", relative)
    parts = [part for part in relative.split("/") if part and part != "."]
    if not parts or ".." in parts:
        raise OSError(errno.EINVAL, "not a path inside the folder", relative)
    return parts


def open_beneath(root: str | os.PathLike[str], relative: str, flags: int = os.O_RDONLY) -> int:
    """Open ``relative`` inside the folder ``root``: never outside it, never through a
    symbolic link (the folder itself is chosen by the host and may be reached
    through links; nothing below it may be one).

    Raises:
        OSError: ``EINVAL`` for an absolute path or one with ``..``; ``ELOOP`` when a
            link is in the way; ``EXDEV`` when the path would leave the folder.
    """
    parts = _relative_parts(relative)
    base = os.open(os.fspath(root), os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if has_openat2():
            try:
                return _openat2(base, "/".join(parts), flags,
                                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
            except OSError as exc:
                raise OSError(exc.errno, "a symbolic link is in the way"
                              if exc.errno == errno.ELOOP else exc.strerror, relative) from None
        return _walk(base, parts, flags, relative)
    finally:
        os.close(base)


def open_at_beneath(dirfd: int, relative: str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """Open ``relative`` beneath the folder open as ``dirfd`` (as :func:`open_beneath`:
    never outside it, never through a symbolic link, ``..`` refused); ``mode`` for a
    file ``O_CREAT`` makes. The folder is the descriptor, so nothing can be swapped
    between the caller's check of it and this open.

    Raises:
        OSError: As :func:`open_beneath`.
    """
    parts = _relative_parts(relative)
    if has_openat2():
        try:
            return _openat2(dirfd, "/".join(parts), flags,
                            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, mode)
        except OSError as exc:
            raise OSError(exc.errno, "a symbolic link is in the way"
                          if exc.errno == errno.ELOOP else exc.strerror, relative) from None
    if flags & os.O_CREAT:
        parent = _walk(dirfd, parts[:-1], os.O_PATH | os.O_DIRECTORY, relative) if parts[:-1] else os.dup(dirfd)
        try:
            return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
        finally:
            os.close(parent)
    return _walk(dirfd, parts, flags, relative)


def read_beneath(root: str | os.PathLike[str] | int, relative: str, limit: int, *,
                 head: bool = False) -> bytes:
    """The bytes of the regular file ``relative`` inside ``root`` (see
    :func:`open_beneath`; ``root`` may be a folder's descriptor, as for
    :func:`open_at_beneath`), at most ``limit`` of them; with ``head``, its first
    ``limit`` bytes whatever its size.

    Raises:
        OSError: As :func:`open_beneath`; ``EISDIR``/``EINVAL`` for what is not a
            regular file (a FIFO is never opened for reading: it could block); ``EFBIG``
            past ``limit`` (unless ``head``).
    """
    probe = (open_at_beneath(root, relative, os.O_PATH) if isinstance(root, int)
             else open_beneath(root, relative, os.O_PATH))
    try:
        info = os.fstat(probe)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EISDIR if stat.S_ISDIR(info.st_mode) else errno.EINVAL,
                          "not a regular file", relative)
        # Reopened through the descriptor itself: the very file checked above.
        fd = os.open(f"/proc/self/fd/{probe}", os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    finally:
        os.close(probe)
    try:
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 16, limit + 1 - size) if head else 1 << 16):
            size += len(chunk)
            if size > limit:
                if head:
                    chunks.append(chunk[: len(chunk) - (size - limit)])
                    break
                raise OSError(errno.EFBIG, f"larger than {limit} bytes", relative)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def stat_beneath(root: str | os.PathLike[str], relative: str) -> os.stat_result:
    """``lstat`` of ``relative`` inside ``root``, reached as :func:`open_beneath` does."""
    fd = open_beneath(root, relative, os.O_PATH)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Pin:
    """What a granted path was when it was granted.

    Attributes:
        path: The path it resolved to (no symbolic links left in it).
        device: The device of what was there; 0 with ``inode`` 0 when nothing was.
        inode: Its inode.
    """

    path: str
    device: int
    inode: int

    @property
    def absent(self) -> bool:
        return self.device == 0 and self.inode == 0

    def to_json(self) -> dict[str, object]:
        return {"resolved": self.path, "device": self.device, "inode": self.inode}


class PathChanged(Exception):
    """A granted path is not what was granted any more; ``path`` and ``why`` say how."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path} {why}")
        self.path = path
        self.why = why


def pin_path(path: str) -> Pin:
    """Pin ``path`` as it is now (see :class:`Pin`).

    Raises:
        PathChanged: It changed while it was being pinned (a link appeared).
    """
    resolved = os.path.realpath(path)
    try:
        fd = open_nofollow(resolved)
    except FileNotFoundError:
        return Pin(resolved, 0, 0)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathChanged(path, "changed while it was being granted (a symbolic link "
                              "appeared in it)") from None
        return Pin(resolved, 0, 0)
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    return Pin(resolved, info.st_dev, info.st_ino)


def open_pinned(pin: Pin) -> int | None:
    """Open ``pin.path`` (``O_PATH``, no link followed) and check it is what was pinned.

    Returns:
        The descriptor, or None when nothing was there when it was pinned and
        nothing is there now. A path that was absent and exists now is accepted when
        it is reached with no link: no link can make it lead elsewhere.

    Raises:
        PathChanged: A symbolic link is in the path now, it is gone, or it is another
            file or folder (replaced, renamed over, mounted over, a hard link).
    """
    try:
        fd = open_nofollow(pin.path)
    except FileNotFoundError:
        if pin.absent:
            return None
        raise PathChanged(pin.path, "is gone since it was granted") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise PathChanged(pin.path, "has a symbolic link in it since it was granted "
                              "(links are never followed in a granted path)") from None
        raise PathChanged(pin.path, f"cannot be opened: {exc.strerror}") from None
    if pin.absent:
        return fd
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != (pin.device, pin.inode):
        os.close(fd)
        what = "folder" if stat.S_ISDIR(info.st_mode) else "file"
        raise PathChanged(pin.path, f"is another {what} than the one granted (it was replaced, "
                          "renamed over, mounted over or hard-linked since)")
    return fd


def check_pinned(path: str, pin: Pin) -> None:
    """Check on the host that the granted ``path`` still leads to what ``pin`` holds.

    Raises:
        PathChanged: It resolves elsewhere now, or :func:`open_pinned` refuses it.
    """
    now = os.path.realpath(path)
    if now != pin.path:
        raise PathChanged(path, f"now leads to {now}, not to {pin.path} as when it was granted")
    fd = open_pinned(pin)
    if fd is not None:
        os.close(fd)
