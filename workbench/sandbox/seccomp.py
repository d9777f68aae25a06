"""A raw seccomp-BPF filter for tool workers, built with no library.

What it refuses (with ``EPERM`` unless said otherwise), whatever the grants:

- sockets other than TCP over IPv4 or IPv6: unix sockets (by path or abstract),
  UDP, raw, netlink, packet… (Landlock does not cover UDP or pathname sockets);
- leaving the process group or session (``setsid``, ``setpgid``), so that killing
  the group kills everything the tool started;
- new namespaces and mounts, ``ptrace``, ``process_vm_*``, ``bpf``, ``perf_event_open``,
  ``userfaultfd``, keyrings, module loading, ``io_uring`` (which would bypass this
  filter for network operations);
- ``clone3`` answers ``ENOSYS`` so that the C library falls back to ``clone``, whose
  flags a filter can read;
- without a ``run`` grant: any new process (``fork``, ``vfork``, ``clone`` without
  ``CLONE_THREAD``); threads stay allowed;
- watching the filesystem: ``inotify_*`` and ``fanotify_*``, outright (a read grant
  does not bring them back: a watch reports names and accesses the tool could not
  list itself);
- changing file metadata, which Landlock does not cover: the ``chmod``, ``chown``,
  ``utime`` and ``*setxattr``/``*removexattr`` families, and the ``FS_IOC_SETFLAGS``/
  ``FS_IOC_FSSETXATTR`` ioctls. A worker with no write grant gets ``EPERM``; one with
  write grants gets ``SECCOMP_RET_USER_NOTIF``, and its supervisor (outside the
  sandbox, see ``metadata.py``) checks the target against the write grants and
  performs the change itself (a ``chown`` to the worker's own ids is left to the
  kernel, which refuses it anything the worker does not own). The newer ``*xattrat`` and ``file_setattr`` calls
  answer ``ENOSYS`` (the C library falls back to the calls above);
- ``execveat``: it runs a descriptor (a ``memfd`` included) rather than a path;
- with a ``run`` grant (``deny_memfd``): ``memfd_create``, the one file a worker can
  make that is not on a ``noexec`` mount — a program copied into one could be run by
  the loader from ``/proc/self/fd`` (``libraries.py``).

A filter for another architecture is refused at once (the call kills the process).
"""

from __future__ import annotations

import ctypes
import errno
import struct

from workbench.sandbox._libc import (MACHINE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prctl,
                                     syscall)

# BPF instruction classes and fields.
_LD, _JMP, _RET, _ALU = 0x00, 0x05, 0x06, 0x04
_W, _ABS, _K = 0x00, 0x20, 0x00
_JEQ, _JSET, _AND = 0x10, 0x40, 0x50

RET_ALLOW = 0x7FFF0000
RET_USER_NOTIF = 0x7FC00000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCK_STREAM = 1
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET

ARCHES = {
    "x86_64": (0xC000003E, {
        "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "ptrace": 101,
        "setpgid": 109, "setsid": 112, "unshare": 272, "setns": 308, "clone3": 435,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248,
        "request_key": 249, "init_module": 175, "finit_module": 313, "kexec_load": 246,
        "process_vm_readv": 310, "process_vm_writev": 311, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsmount": 432, "setpriority": 141, "acct": 163, "swapon": 167,
        "reboot": 169, "sethostname": 170, "setdomainname": 171, "personality": 135,
        "ioctl": 16, "execveat": 322, "seccomp": 317, "memfd_create": 319,
        "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "utime": 132,
        "utimes": 235, "futimesat": 261, "fchownat": 260, "fchmodat": 268, "utimensat": 280,
        "fchmodat2": 452, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
        "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "setxattrat": 463,
        "removexattrat": 466, "file_setattr": 469,
        "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254,
        "fanotify_init": 300, "fanotify_mark": 301,
    }),
    "aarch64": (0xC00000B7, {
        "socket": 198, "socketpair": 199, "clone": 220, "ptrace": 117, "setpgid": 154,
        "setsid": 157, "unshare": 97, "setns": 268, "clone3": 435, "mount": 40, "umount2": 39,
        "pivot_root": 41, "chroot": 51, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        "keyctl": 219, "add_key": 217, "request_key": 218, "init_module": 105,
        "finit_module": 273, "kexec_load": 104, "process_vm_readv": 270,
        "process_vm_writev": 271, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsmount": 432, "acct": 89, "swapon": 224, "reboot": 142, "sethostname": 161,
        "setdomainname": 162, "personality": 92,
        "ioctl": 29, "execveat": 281, "seccomp": 277, "memfd_create": 279,
        "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "utimensat": 88,
        "fchmodat2": 452, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14,
        "lremovexattr": 15, "fremovexattr": 16, "setxattrat": 463, "removexattrat": 466,
        "file_setattr": 469, "inotify_init1": 26, "inotify_add_watch": 27,
        "fanotify_init": 262, "fanotify_mark": 263,
    }),
}

DENIED_ALWAYS = ("setsid", "setpgid", "ptrace", "unshare", "setns", "mount", "umount2", "pivot_root",
                 "chroot", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key",
                 "request_key", "init_module", "finit_module", "kexec_load", "process_vm_readv",
                 "process_vm_writev", "io_uring_setup", "io_uring_enter", "io_uring_register",
                 "open_tree", "move_mount", "fsopen", "fsmount", "acct", "swapon", "reboot",
                 "sethostname", "setdomainname", "personality", "execveat",
                 "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init",
                 "fanotify_mark")

METADATA = ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
            "utime", "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr",
            "removexattr", "lremovexattr", "fremovexattr")
"""Calls that change a file's mode, owner, times or extended attributes."""

METADATA_NEWER = ("setxattrat", "removexattrat", "file_setattr")
"""Newer forms of the same (structs the filter cannot read): ``ENOSYS``, so the C
library falls back to the calls above."""

FS_IOC_SETFLAGS = (0x40086602, 0x40046602)  # and its 32-bit form
FS_IOC_FSSETXATTR = 0x401C5820

X32_SYSCALL_BIT = 0x40000000

SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3


def supported() -> bool:
    """Whether a filter can be built for this machine's architecture."""
    return MACHINE in ARCHES


class _Program:
    """Assembles BPF with symbolic jump targets."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def ld(self, offset: int) -> None:
        self.code.append((_LD | _W | _ABS, 0, 0, offset))

    def and_(self, value: int) -> None:
        self.code.append((_ALU | _AND | _K, 0, 0, value))

    def jeq(self, value: int, true: str | int = 0, false: str | int = 0) -> None:
        self.code.append((_JMP | _JEQ | _K, true, false, value))

    def jset(self, value: int, true: str | int = 0, false: str | int = 0) -> None:
        self.code.append((_JMP | _JSET | _K, true, false, value))

    def ret(self, value: int) -> None:
        self.code.append((_RET | _K, 0, 0, value))

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, jt, jf, k) in enumerate(self.code):
            def resolve(target, index=index):
                if isinstance(target, str):
                    offset = self.labels[target] - index - 1
                    if not 0 <= offset <= 255:
                        raise ValueError(f"jump to {target} out of range")
                    return offset
                return target
            out += struct.pack("HBBI", code, resolve(jt), resolve(jf), k & 0xFFFFFFFF)
        return bytes(out)


def build_filter(*, allow_processes: bool, notify_metadata: bool = False,
                 deny_memfd: bool = False, shell: bool = False) -> bytes:
    """The filter program as raw ``sock_filter`` bytes for this architecture.

    Args:
        shell: For a ``shell`` command, which runs any program of the host's
            installation: metadata calls are let through (every mount it may write
            is its own — the overlay's upper layer, its ``/tmp`` — and the rest is
            read-only), and so are ``setsid``/``setpgid`` (its PID namespace, not its
            process group, ends everything it started).
        allow_processes: The tool was granted ``run``.
        deny_memfd: Refuse ``memfd_create`` (a tool worker that may start processes).
        notify_metadata: Metadata calls go to the supervisor (the tool has write
            grants) instead of failing with ``EPERM``.
    """
    arch, numbers = ARCHES[MACHINE]
    nr_offset, arch_offset = 0, 4

    def arg(i: int) -> int:
        return 16 + 8 * i  # low 32 bits on little-endian machines

    p = _Program()
    p.ld(arch_offset)
    p.jeq(arch, 1, 0)
    p.ret(RET_KILL_PROCESS)
    p.ld(nr_offset)
    if MACHINE == "x86_64":
        p.jset(X32_SYSCALL_BIT, "eperm", 0)  # the x32 numbering would dodge every check below
    p.jeq(numbers["socket"], "socket")
    p.jeq(numbers["clone3"], "enosys")
    p.jeq(numbers["clone"], "clone")
    if not allow_processes:
        for name in ("fork", "vfork"):
            if name in numbers:
                p.jeq(numbers[name], "eperm")
    for name in DENIED_ALWAYS:
        if name in numbers and not (shell and name in ("setsid", "setpgid")):
            p.jeq(numbers[name], "eperm")
    if deny_memfd:
        p.jeq(numbers["memfd_create"], "eperm")
    if notify_metadata:
        # A chown to the worker's own ids (SQLite does it on every journal it opens as
        # uid 0) is left to the kernel: with no CAP_CHOWN, it changes nothing the worker
        # does not own, and every mount but the write grants is read-only.
        for name, first in (("chown", 1), ("fchown", 1), ("lchown", 1), ("fchownat", 2)):
            if name in numbers:
                p.jeq(numbers[name], f"own-{first}")
    for name in METADATA:
        if name in numbers and not shell:
            p.jeq(numbers[name], "metadata")
    for name in METADATA_NEWER:
        p.jeq(numbers[name], "enosys")
    p.jeq(numbers["ioctl"], "ioctl")
    p.ret(RET_ALLOW)

    p.label("ioctl")
    p.ld(arg(1))
    for request in (*FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR):
        p.jeq(request, "eperm")
    p.ret(RET_ALLOW)

    if notify_metadata:
        for first in (1, 2):
            p.label(f"own-{first}")
            for index in (first, first + 1):
                p.ld(arg(index))
                p.jeq(0, 1, 0)
                p.jeq(0xFFFFFFFF, 0, "notify")
            p.ret(RET_ALLOW)
        p.label("notify")
    p.label("metadata")
    p.ret(RET_USER_NOTIF if notify_metadata else RET_ERRNO | errno.EPERM)

    p.label("socket")
    p.ld(arg(0))
    p.jeq(AF_INET, "stream", 0)
    p.jeq(AF_INET6, "stream", "eafnosupport")
    p.label("stream")
    p.ld(arg(1))
    p.and_(0xF)
    p.jeq(SOCK_STREAM, "allow", "eperm")

    p.label("clone")
    p.ld(arg(0))
    p.jset(CLONE_NAMESPACES, "eperm", 0)
    if not allow_processes:
        p.jset(CLONE_THREAD, "allow", "eperm")
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("eperm")
    p.ret(RET_ERRNO | errno.EPERM)
    p.label("enosys")
    p.ret(RET_ERRNO | errno.ENOSYS)
    p.label("eafnosupport")
    p.ret(RET_ERRNO | errno.EAFNOSUPPORT)
    return p.assemble()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load(program: bytes, *, listener: bool = False) -> int | None:
    """Install ``program`` on the calling thread (no_new_privs first, as the kernel asks).

    Args:
        listener: Ask for a user-notification descriptor (the program returns
            ``RET_USER_NOTIF`` for some calls) and return it.

    Raises:
        OSError: The kernel refused the filter (the caller fails closed).
    """
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    buffer = ctypes.create_string_buffer(program)
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if not listener:
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))
        return None
    return syscall(ARCHES[MACHINE][1]["seccomp"], ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
                   ctypes.c_uint(SECCOMP_FILTER_FLAG_NEW_LISTENER), ctypes.byref(fprog),
                   what="seccomp(NEW_LISTENER)")
