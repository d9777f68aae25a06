"""The few libc calls the sandbox makes through ctypes, with errors as ``OSError``."""

from __future__ import annotations

import ctypes
import os
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

MACHINE = platform.machine()

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUTS = 0x04000000


def check(result: int, what: str) -> int:
    """Raise ``OSError`` with errno when a libc call returned -1."""
    if result == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    return check(libc.prctl(option, arg2, arg3, arg4, arg5), f"prctl({option})")


def syscall(number: int, *args, what: str = "syscall") -> int:
    return check(libc.syscall(ctypes.c_long(number), *args), what)


def unshare(flags: int) -> None:
    check(libc.unshare(ctypes.c_int(flags)), "unshare")
