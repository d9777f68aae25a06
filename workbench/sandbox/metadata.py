"""Metadata changes a worker asks for, checked and made by its supervisor.

Landlock does not cover ``chmod``, ``chown``, ``utime`` or extended attributes, and
a worker of the person's own identity owns the person's files. The seccomp filter
therefore stops every metadata call: with no write grant it fails (``EPERM``); with
write grants it is handed to the supervisor (``SECCOMP_RET_USER_NOTIF``), which runs
outside the sandbox and:

1. reads the call's path (or descriptor) from the worker, and opens the object it
   names as the worker would — from the worker's root, working folder or descriptor,
   never through a magic link — as an ``O_PATH`` descriptor;
2. checks that this object lies inside a write grant: the kernel's own name for the
   descriptor is beneath a granted folder and still names the same device and inode;
3. makes the change itself on that descriptor (so what was checked is what changes)
   and answers the worker's call with the result.

Whatever the grants, a worker never sets the setuid or setgid bit on a file, never
gives a file away (``chown`` succeeds only when it changes nothing), and sets or
removes only ``user.*`` extended attributes (``security.capability`` or ``trusted.*``
would reach past the sandbox).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import stat
import struct

from workbench.sandbox._libc import MACHINE, libc
from workbench.sandbox.seccomp import ARCHES

NOTIF = struct.Struct("QIIiIQ6Q")
RESPONSE = struct.Struct("QqiI")
IOCTL_RECV = 0xC0502100
IOCTL_SEND = 0xC0182101
IOCTL_ID_VALID = 0x40082102

AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
AT_EMPTY_PATH = 0x1000
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_IN_ROOT = 0x10
SYS_OPENAT2 = 437
PATH_MAX = 4096
XATTR_NAME_MAX = 255
XATTR_SIZE_MAX = 65536

libc.utimensat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _signed(value: int) -> int:
    return ctypes.c_int32(value & 0xFFFFFFFF).value


class Refused(Exception):
    """The call is answered with ``errno`` and nothing is changed."""

    def __init__(self, code: int) -> None:
        super().__init__(os.strerror(code))
        self.code = code


class Broker:
    """Answers one worker's metadata calls (see the module docstring).

    Args:
        listener: The seccomp user-notification descriptor of the worker's filter.
        write_roots: The worker's write grants (its runtime's included).
        inside_owner: The uid and gid, outside, that the worker's uid 0 maps to.
    """

    def __init__(self, listener: int, write_roots: list[str], inside_owner: tuple[int, int]) -> None:
        self.listener = listener
        self.roots = sorted({os.path.realpath(r) for r in write_roots if os.path.exists(r)})
        self.owner = inside_owner
        numbers = ARCHES[MACHINE][1]
        self.handlers = {numbers[name]: getattr(self, "_" + name)
                         for name in ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown",
                                      "lchown", "fchownat", "utime", "utimes", "futimesat",
                                      "utimensat", "setxattr", "lsetxattr", "fsetxattr",
                                      "removexattr", "lremovexattr", "fremovexattr")
                         if name in numbers}
        self.handled = 0

    # The loop's side.

    def handle(self) -> bool:
        """Receive one notification and answer it; False once the worker is gone."""
        buffer = bytearray(NOTIF.size)
        try:
            fcntl.ioctl(self.listener, IOCTL_RECV, buffer)
        except OSError as exc:
            return exc.errno in (errno.EINTR, errno.ENOENT)
        notif_id, pid, _flags, nr, _arch, _ip, *args = NOTIF.unpack(buffer)
        self.handled += 1
        try:
            handler = self.handlers.get(nr)
            if handler is None:
                raise Refused(errno.EPERM)
            self.pid, self.notif_id = pid, notif_id
            handler(*args)
            code = 0
        except Refused as refused:
            code = refused.code
        except OSError as exc:
            code = exc.errno or errno.EPERM
        except Exception:
            code = errno.EPERM
        try:
            fcntl.ioctl(self.listener, IOCTL_SEND, RESPONSE.pack(notif_id, 0, -code if code else 0, 0))
        except OSError:
            pass  # the worker died while we worked
        return True

    # Reading the worker.

    def _still_valid(self) -> None:
        try:
            fcntl.ioctl(self.listener, IOCTL_ID_VALID, struct.pack("Q", self.notif_id))
        except OSError:
            raise Refused(errno.ESRCH) from None

    def _read(self, address: int, size: int) -> bytes:
        if address == 0:
            raise Refused(errno.EFAULT)
        fd = os.open(f"/proc/{self.pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
        try:
            data = os.pread(fd, size, address)
        except OSError:
            raise Refused(errno.EFAULT) from None
        finally:
            os.close(fd)
        self._still_valid()
        return data

    def _string(self, address: int, limit: int = PATH_MAX) -> str:
        out = b""
        while len(out) < limit:
            chunk = self._read(address + len(out), min(4096 - (address + len(out)) % 4096, limit - len(out)))
            end = chunk.find(b"\0")
            if end >= 0:
                return os.fsdecode(out + chunk[:end])
            out += chunk
        raise Refused(errno.ENAMETOOLONG)

    # Finding the object, as the worker would, and checking it.

    def _open_fd(self, fd: int) -> int:
        fd = _signed(fd)
        if fd < 0:
            raise Refused(errno.EBADF)
        try:
            return os.open(f"/proc/{self.pid}/fd/{fd}", os.O_PATH | os.O_CLOEXEC)
        except OSError:
            raise Refused(errno.EBADF) from None

    def _open_at(self, dirfd: int, address: int, *, follow: bool, empty_ok: bool = False) -> int:
        path = self._string(address)
        dirfd = _signed(dirfd)
        if not path:
            if not empty_ok:
                raise Refused(errno.ENOENT)
            return self._open_fd(dirfd) if dirfd != AT_FDCWD else os.open(
                f"/proc/{self.pid}/cwd", os.O_PATH | os.O_CLOEXEC)
        resolve = RESOLVE_NO_MAGICLINKS
        if path.startswith("/"):
            base = os.open(f"/proc/{self.pid}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            path = path.lstrip("/") or "."
            resolve |= RESOLVE_IN_ROOT
        elif dirfd == AT_FDCWD:
            base = os.open(f"/proc/{self.pid}/cwd", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        else:
            base = self._open_fd(dirfd)
        try:
            flags = os.O_PATH | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
            how = _OpenHow(flags, 0, resolve)
            result = libc.syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(base), os.fsencode(path),
                                  ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
            if result < 0:
                raise Refused(ctypes.get_errno() or errno.ENOENT)
            return int(result)
        finally:
            os.close(base)

    def _checked(self, fd: int) -> os.stat_result:
        """The object's status, when it lies inside a write grant; else refused."""
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
            info = os.fstat(fd)
        except OSError:
            raise Refused(errno.EPERM) from None
        if not name.startswith("/") or not any(name == r or name.startswith(r.rstrip("/") + "/")
                                               for r in self.roots):
            raise Refused(errno.EPERM)
        try:
            named = os.stat(name, follow_symlinks=False)
        except OSError:
            raise Refused(errno.EPERM) from None
        if (named.st_dev, named.st_ino) != (info.st_dev, info.st_ino):
            raise Refused(errno.EPERM)
        return info

    def _with(self, fd: int, change) -> None:
        try:
            info = self._checked(fd)
            change(fd, info)
        finally:
            os.close(fd)

    # The changes.

    @staticmethod
    def _set_mode(fd: int, info: os.stat_result, mode: int) -> None:
        mode &= 0o7777
        if mode & (stat.S_ISUID | stat.S_ISGID) and not stat.S_ISDIR(info.st_mode):
            raise Refused(errno.EPERM)
        if stat.S_ISLNK(info.st_mode):
            raise Refused(errno.EOPNOTSUPP)
        os.chmod(f"/proc/self/fd/{fd}", mode)

    def _set_owner(self, fd: int, info: os.stat_result, uid: int, gid: int) -> None:
        """Succeed only when nothing would change: ownership is never given away."""
        def inside(outside: int, mine: int) -> int:
            return 0 if outside == mine else 65534
        uid, gid = uid & 0xFFFFFFFF, gid & 0xFFFFFFFF
        if uid != 0xFFFFFFFF and uid != inside(info.st_uid, self.owner[0]):
            raise Refused(errno.EPERM)
        if gid != 0xFFFFFFFF and gid != inside(info.st_gid, self.owner[1]):
            raise Refused(errno.EPERM)

    def _set_times(self, fd: int, info: os.stat_result, times: bytes | None) -> None:
        buffer = ctypes.create_string_buffer(times, 32) if times is not None else None
        if libc.utimensat(fd, b"", buffer, AT_EMPTY_PATH) != 0:
            raise Refused(ctypes.get_errno())

    def _xattr(self, fd: int, info: os.stat_result, name: str, value: bytes | None, flags: int) -> None:
        if not name.startswith("user.") or stat.S_ISLNK(info.st_mode):
            raise Refused(errno.EPERM)
        target = f"/proc/self/fd/{fd}"
        if value is None:
            os.removexattr(target, name)
        else:
            os.setxattr(target, name, value, flags)

    def _times(self, address: int, kind: str) -> bytes | None:
        """The two times as ``struct timespec[2]``, from the call's own layout."""
        if address == 0:
            return None
        if kind == "timespec":
            return self._read(address, 32)
        if kind == "timeval":
            a_s, a_us, m_s, m_us = struct.unpack("qqqq", self._read(address, 32))
            if not (0 <= a_us < 1_000_000 and 0 <= m_us < 1_000_000):
                raise Refused(errno.EINVAL)
            return struct.pack("qqqq", a_s, a_us * 1000, m_s, m_us * 1000)
        access, modified = struct.unpack("qq", self._read(address, 16))
        return struct.pack("qqqq", access, 0, modified, 0)

    def _xattr_args(self, name_address: int, value_address: int | None, size: int) -> tuple[str, bytes | None]:
        name = self._string(name_address, XATTR_NAME_MAX + 1)
        if value_address is None:
            return name, None
        if size > XATTR_SIZE_MAX:
            raise Refused(errno.E2BIG)
        return name, self._read(value_address, size) if size else b""

    # One method per call, named after it.

    def _chmod(self, path, mode, *_):
        self._with(self._open_at(AT_FDCWD, path, follow=True), lambda fd, i: self._set_mode(fd, i, mode))

    def _fchmod(self, fd, mode, *_):
        self._with(self._open_fd(fd), lambda f, i: self._set_mode(f, i, mode))

    def _fchmodat(self, dirfd, path, mode, *_):
        self._with(self._open_at(dirfd, path, follow=True), lambda fd, i: self._set_mode(fd, i, mode))

    def _fchmodat2(self, dirfd, path, mode, flags, *_):
        target = self._open_at(dirfd, path, follow=not flags & AT_SYMLINK_NOFOLLOW,
                               empty_ok=bool(flags & AT_EMPTY_PATH))
        self._with(target, lambda fd, i: self._set_mode(fd, i, mode))

    def _chown(self, path, uid, gid, *_):
        self._with(self._open_at(AT_FDCWD, path, follow=True), lambda fd, i: self._set_owner(fd, i, uid, gid))

    def _lchown(self, path, uid, gid, *_):
        self._with(self._open_at(AT_FDCWD, path, follow=False), lambda fd, i: self._set_owner(fd, i, uid, gid))

    def _fchown(self, fd, uid, gid, *_):
        self._with(self._open_fd(fd), lambda f, i: self._set_owner(f, i, uid, gid))

    def _fchownat(self, dirfd, path, uid, gid, flags, *_):
        target = self._open_at(dirfd, path, follow=not flags & AT_SYMLINK_NOFOLLOW,
                               empty_ok=bool(flags & AT_EMPTY_PATH))
        self._with(target, lambda fd, i: self._set_owner(fd, i, uid, gid))

    def _utime(self, path, times, *_):
        value = self._times(times, "utimbuf")
        self._with(self._open_at(AT_FDCWD, path, follow=True), lambda fd, i: self._set_times(fd, i, value))

    def _utimes(self, path, times, *_):
        value = self._times(times, "timeval")
        self._with(self._open_at(AT_FDCWD, path, follow=True), lambda fd, i: self._set_times(fd, i, value))

    def _futimesat(self, dirfd, path, times, *_):
        value = self._times(times, "timeval")
        self._with(self._open_at(dirfd, path, follow=True), lambda fd, i: self._set_times(fd, i, value))

    def _utimensat(self, dirfd, path, times, flags, *_):
        value = self._times(times, "timespec")
        if path == 0:  # futimens(fd, times)
            target = self._open_fd(dirfd)
        else:
            target = self._open_at(dirfd, path, follow=not flags & AT_SYMLINK_NOFOLLOW,
                                   empty_ok=bool(flags & AT_EMPTY_PATH))
        self._with(target, lambda fd, i: self._set_times(fd, i, value))

    def _setxattr(self, path, name, value, size, flags, *_, follow=True):
        key, data = self._xattr_args(name, value, size)
        self._with(self._open_at(AT_FDCWD, path, follow=follow),
                   lambda fd, i: self._xattr(fd, i, key, data, _signed(flags)))

    def _lsetxattr(self, path, name, value, size, flags, *_):
        self._setxattr(path, name, value, size, flags, follow=False)

    def _fsetxattr(self, fd, name, value, size, flags, *_):
        key, data = self._xattr_args(name, value, size)
        self._with(self._open_fd(fd), lambda f, i: self._xattr(f, i, key, data, _signed(flags)))

    def _removexattr(self, path, name, *_, follow=True):
        key, _ = self._xattr_args(name, None, 0)
        self._with(self._open_at(AT_FDCWD, path, follow=follow), lambda fd, i: self._xattr(fd, i, key, None, 0))

    def _lremovexattr(self, path, name, *_):
        self._removexattr(path, name, follow=False)

    def _fremovexattr(self, fd, name, *_):
        key, _ = self._xattr_args(name, None, 0)
        self._with(self._open_fd(fd), lambda f, i: self._xattr(f, i, key, None, 0))
