"""The worker's own filesystem: a private mount namespace whose root holds only what
the worker needs.

Run by the worker (PID 1 of its PID namespace, uid 0 of its user namespace, before
any other layer) right after its namespaces are made. The new root is an empty
``tmpfs``; into it go, each bind-mounted at its own path:

- the runtime's files (shared libraries, the interpreter or Deno, the extension's
  folder and installed requirements) and the system files every runtime reads;
- the tool's read, write and run grants;
- ``/dev/null``, ``/dev/urandom``, ``/dev/random``, and a ``/proc`` of the worker's
  own PID namespace.

Nothing else exists: a path outside every grant is not found, so its name, size,
owner and times cannot be learnt. A symbolic link on the way to a bound path (``/lib``
to ``usr/lib``) is made again as the same link, so paths resolve as on the host.

Every bind is ``nosuid``; all but write grants are read-only; and all are ``noexec``
except the runtime's own folders, the granted binaries, the loader and the shared
objects the worker needs, bound file by file over the ``noexec`` library folders
(``process.binds``, ``libraries.py``) — so the dynamic loader (``ld.so PROGRAM``)
cannot map a program from a read grant, a write grant, the extension's folder or a
library folder, and a program that is not bound at all does not exist. Landlock,
applied afterwards, still decides every access by path.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from dataclasses import dataclass

from workbench.sandbox._libc import MACHINE, check, libc, syscall

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
MNT_DETACH = 2
ST_RDONLY, ST_NOSUID, ST_NODEV, ST_NOEXEC = 1, 2, 4, 8
ST_NOATIME, ST_NODIRATIME, ST_RELATIME = 1024, 2048, 4096
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
STAGES = ("/mnt", "/media", "/srv", "/tmp", "/var/tmp", "/opt")
"""Where the new root may be assembled before it becomes ``/``: the first existing
folder of these that no bind is in or holds (a tmpfs mounted over a granted folder
would stand between the grant and its bind)."""


def _stage(reals: list[str]) -> str:
    for candidate in STAGES:
        if (os.path.isdir(candidate) and not os.path.islink(candidate)
                and not any(_under(real, [candidate]) or _under(candidate, [real]) for real in reals)):
            return candidate
    raise OSError(errno.EBUSY, "no folder outside the grants to assemble the worker's root in")

libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]

DEVICES = ("/dev/null", "/dev/urandom", "/dev/random")


@dataclass(frozen=True)
class Bind:
    """One host path bound into the new root."""

    path: str
    writable: bool = False
    executable: bool = False
    device: bool = False


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    check(libc.mount(os.fsencode(source) if source else None, os.fsencode(target),
                     fstype.encode() if fstype else None, flags, data.encode() if data else None),
          f"mount({target})")


def _locked_flags(fd: int) -> int:
    """The flags a bind of this mount must keep (a user namespace cannot clear them)."""
    info = os.statvfs(f"/proc/self/fd/{fd}")
    flags = 0
    for st, ms in ((ST_RDONLY, MS_RDONLY), (ST_NOSUID, MS_NOSUID), (ST_NODEV, MS_NODEV),
                   (ST_NOEXEC, MS_NOEXEC), (ST_NOATIME, MS_NOATIME), (ST_NODIRATIME, MS_NODIRATIME)):
        if info.f_flag & st:
            flags |= ms
    if not info.f_flag & (ST_NOATIME | ST_RELATIME):
        flags |= MS_STRICTATIME
    return flags


def _resolve(path: str, links: dict[str, str]) -> str | None:
    """The real path of ``path``, noting each link met on the way (link -> target).

    None when the path does not exist (a grant on a missing path binds nothing).
    """
    parts = [p for p in path.split("/") if p]
    current = "/"
    hops = 0
    while parts:
        candidate = os.path.join(current, parts.pop(0))
        try:
            info = os.lstat(candidate)
        except OSError:
            return None
        if stat.S_ISLNK(info.st_mode):
            hops += 1
            if hops > 40:
                return None
            target = os.readlink(candidate)
            links.setdefault(candidate, target)
            base = "/" if target.startswith("/") else current
            parts = [p for p in os.path.normpath(os.path.join(base, target)).split("/") if p] + parts
            current = "/"
            continue
        current = candidate
    return current


def _plan(binds: list[Bind], links: dict[str, str]) -> list[tuple[Bind, str]]:
    """Each bind with the real path it lands on, parents first; two binds of one path
    merge into one with the wider rights."""
    merged: dict[str, Bind] = {}
    for bind in binds:
        real = _resolve(os.path.abspath(bind.path), links)
        if real is None:
            continue
        old = merged.get(real)
        if old is not None:
            bind = Bind(real, old.writable or bind.writable, old.executable or bind.executable,
                        old.device or bind.device)
        merged[real] = Bind(real, bind.writable, bind.executable, bind.device)
    ordered = sorted(((b, p) for p, b in merged.items()), key=lambda item: item[1].count("/"))
    kept: list[tuple[Bind, str]] = []
    for bind, real in ordered:
        # A bind inside another with the same rights brings nothing (the outer one is recursive).
        parents = [b for b, p in kept if _under(real, [p])]
        if parents and _covers(parents[-1], bind):
            continue
        kept.append((bind, real))
    return kept


def _covers(outer: Bind, inner: Bind) -> bool:
    return (outer.writable, outer.executable, outer.device) == (inner.writable, inner.executable, inner.device)


def _under(path: str, folders) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


@dataclass
class Layers:
    """A copy-on-write view of one folder (the shell's project), mounted at the
    folder's own path in the new root: an overlay whose lower layer is the folder
    (opened with no link followed, checked against its pin) and whose upper layer is
    a ``tmpfs`` of ``upper_mb`` — what the sandboxed command writes there goes to
    that memory, bounded, never to the host's disk or folder. The ``tmpfs`` is
    unmounted from every path once the overlay holds it: the command cannot reach
    the upper layer beneath the view, and ``upper_fd`` (an ``O_PATH`` descriptor of
    the ``tmpfs`` root, holding ``upper/`` and ``work/``) is handed to the host, which
    reads the changes through it once every process of the sandbox has ended. A
    private ``tmpfs`` of ``tmp_mb`` is the command's ``/tmp``."""

    path: str
    device: int
    inode: int
    upper_mb: int
    tmp_mb: int
    lower_fd: int = -1
    upper_fd: int = -1


@dataclass
class Root:
    """A planned root: each bind with its real path and an ``O_PATH`` descriptor of
    its source (opened before the stage hides anything), and the links to make again."""

    plan: list[tuple[Bind, str, int]]
    links: dict[str, str]
    layers: Layers | None = None

    @property
    def fds(self) -> list[int]:
        return [fd for _, _, fd in self.plan]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


def prepare(binds: list[Bind], aliases: dict[str, str] | None = None,
            layers: Layers | None = None) -> Root:
    """Resolve and open every bind's source, in the worker's new mount namespace;
    ``aliases`` (a granted path as granted → the path it resolved to) become links.

    Raises:
        OSError: The folder of ``layers`` has a link in it or is not the pinned one.
    """
    links: dict[str, str] = dict(aliases or {})
    plan = []
    if layers is not None:
        from workbench.sandbox.paths import Pin, open_pinned

        fd = open_pinned(Pin(layers.path, layers.device, layers.inode))
        if fd is None or not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.ENOTDIR, "the project folder is not a folder", layers.path)
        layers.lower_fd = fd
    for bind, real in _plan(binds, links):
        try:
            fd = os.open(real, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        plan.append((bind, real, fd))
    return Root(plan, links, layers)


LAYERS_STAGE = "/.layers"


def _mount_tmp(stage: str, layers: Layers) -> None:
    """The command's private ``/tmp``, mounted before anything else of the new root: a
    bound program folder or the project may lie beneath ``/tmp`` (a virtual environment
    made there), and what is mounted after it is seen on top of it, not hidden by it."""
    tmp = stage + "/tmp"
    os.makedirs(tmp, exist_ok=True)
    _mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV, f"size={layers.tmp_mb}m,mode=1777")


def _mount_layers(stage: str, layers: Layers) -> None:
    """Mount ``layers`` in the new root being assembled at ``stage`` (see ``Layers``)."""
    held = stage + LAYERS_STAGE
    os.makedirs(held, exist_ok=True)
    _mount("tmpfs", held, "tmpfs", MS_NOSUID | MS_NODEV, f"size={layers.upper_mb}m,mode=0700")
    os.mkdir(held + "/upper", 0o755)
    os.mkdir(held + "/work", 0o700)
    layers.upper_fd = os.open(held, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    target = stage + layers.path
    os.makedirs(target, exist_ok=True)
    _mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV,
           f"lowerdir=/proc/self/fd/{layers.lower_fd},upperdir={held}/upper,"
           f"workdir={held}/work,userxattr")
    os.close(layers.lower_fd)
    layers.lower_fd = -1
    check(libc.umount2(os.fsencode(held), MNT_DETACH), "umount(layers)")
    os.rmdir(held)


def enter_private_root(root: Root, cwd: str) -> str:
    """Replace this process's root with one holding only the planned binds (see the
    module docstring).

    Must run in a fresh mount namespace owned by this process's user namespace, as
    PID 1 of a fresh PID namespace (for ``/proc``). Returns the working folder it
    entered (``cwd``, made empty on the new root when no bind holds it).

    Raises:
        OSError: A mount failed (the caller fails closed).
    """
    layers = root.layers
    stage = _stage([real for _bind, real, _fd in root.plan] + ([layers.path] if layers else []))
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    if layers is not None:
        _mount_tmp(stage, layers)
    bound: list[str] = []
    for bind, real, fd in root.plan:
        target = stage + real
        if not _under(real, bound):
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(target, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                if not os.path.lexists(target):
                    os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        elif not os.path.lexists(target):
            continue
        _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
        flags = MS_REMOUNT | MS_BIND | MS_NOSUID | _locked_flags(fd)
        if not bind.writable:
            flags |= MS_RDONLY
        if not bind.executable:
            flags |= MS_NOEXEC
        if not bind.device:
            flags |= MS_NODEV
        _mount(None, target, None, flags)
        bound.append(real)
    root.close()
    if layers is not None:
        _mount_layers(stage, layers)
    for link, target in root.links.items():  # outside the binds only: never write to the host
        if not _under(link, bound) and not os.path.lexists(stage + link):
            os.makedirs(os.path.dirname(stage + link), exist_ok=True)
            os.symlink(target, stage + link)
    os.makedirs(stage + "/proc", exist_ok=True)
    _mount("proc", stage + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    entered = cwd or "/"
    if not _under(entered, bound) and not os.path.lexists(stage + entered):
        try:
            os.makedirs(stage + entered, exist_ok=True)
        except OSError:
            entered = "/"
    os.chdir(stage)
    syscall(SYS_PIVOT_ROOT[MACHINE], b".", b".", what="pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "umount(old root)")
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    try:
        os.chdir(entered)
    except OSError:
        entered = "/"
        os.chdir("/")
    return entered
