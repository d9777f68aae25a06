"""A small ctypes binding of Landlock: paths (read, write, execute) and TCP ports.

Landlock restricts the calling thread (and what it forks or execs) for good. The
rights asked for are masked down to what the running kernel's ABI knows, and the
ABI is reported so that ``workbench doctor`` can say what is enforced here. Not
covered by Landlock: UDP and connecting to a pathname unix socket — the seccomp
filter and the network namespace close those.
"""

from __future__ import annotations

import ctypes
import os
import stat
from dataclasses import dataclass, field

from workbench.sandbox._libc import check, libc
from workbench.sandbox.paths import Pin, open_pinned

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13        # ABI 2
TRUNCATE = 1 << 14     # ABI 3
IOCTL_DEV = 1 << 15    # ABI 5

NET_BIND_TCP = 1 << 0     # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1                # ABI 6

FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = READ_FILE | READ_DIR
READ_EXEC = READ | EXECUTE
WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM
         | MAKE_FIFO | MAKE_SOCK | REFER | TRUNCATE)
ALL_FS = (1 << 16) - 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def abi_version() -> int:
    """The kernel's Landlock ABI, or 0 when Landlock is not available."""
    result = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                          ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(0, int(result))


def fs_mask(abi: int) -> int:
    """The filesystem rights the kernel's ABI knows."""
    mask = (1 << 13) - 1
    if abi >= 2:
        mask |= REFER
    if abi >= 3:
        mask |= TRUNCATE
    if abi >= 5:
        mask |= IOCTL_DEV
    return mask


@dataclass
class Ruleset:
    """What a sandboxed process may reach; ``restrict()`` makes it so, for good.

    Attributes:
        paths: ``(path, rights)`` pairs; a missing path is skipped.
        connect_ports: TCP ports the process may connect to.
        bind_ports: TCP ports it may bind.
        pins: ``[device, inode]`` by path for granted paths (``[device, inode,
            resolved]`` for a granted binary, whose rule goes on the file it resolved
            to): such a path is opened with no symbolic link followed, must still be
            that device and inode (``PathChanged`` otherwise), and its rule is made
            from that descriptor.
    """

    paths: list[tuple[str, int]] = field(default_factory=list)
    connect_ports: set[int] = field(default_factory=set)
    bind_ports: set[int] = field(default_factory=set)
    pins: dict[str, list] = field(default_factory=dict)

    def allow(self, path: str, rights: int) -> None:
        self.paths.append((path, rights))

    def restrict(self, abi: int | None = None) -> int:
        """Apply the ruleset to the calling thread; returns the ABI used.

        Raises:
            OSError: Landlock is missing or a call failed (the caller fails closed).
        """
        abi = abi_version() if abi is None else abi
        if abi < 1:
            raise OSError(38, "Landlock is not available on this kernel")
        handled_fs = fs_mask(abi)
        attr = _RulesetAttr(handled_fs,
                            (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0,
                            (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0)
        size = ctypes.sizeof(_RulesetAttr) if abi >= 4 else 8
        if abi < 6:
            size = min(size, 16)
        ruleset = check(libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr),
                                     ctypes.c_size_t(size), ctypes.c_uint32(0)), "landlock_create_ruleset")
        try:
            for path, rights in self.paths:
                self._add_path(ruleset, path, rights & handled_fs, self.pins.get(path))
            if abi >= 4:
                for port in sorted(self.connect_ports):
                    self._add_port(ruleset, port, NET_CONNECT_TCP)
                for port in sorted(self.bind_ports):
                    self._add_port(ruleset, port, NET_BIND_TCP)
            check(libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset),
                               ctypes.c_uint32(0)), "landlock_restrict_self")
        finally:
            os.close(ruleset)
        return abi

    @staticmethod
    def _add_path(ruleset: int, path: str, rights: int, pin: list | None = None) -> None:
        if pin is not None:
            # A granted path: the descriptor checked is the one the rule is made from.
            # ``[device, inode]``, or ``[device, inode, resolved]`` for a path reached
            # through a link on purpose (a granted binary): the rule goes on ``resolved``.
            found = open_pinned(Pin(str(pin[2]) if len(pin) > 2 else path, int(pin[0]), int(pin[1])))
            if found is None:
                return
            fd = found
        else:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                return
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= FILE_ONLY
            if not rights:
                return
            rule = _PathBeneath(rights, fd)
            check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset),
                               ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)),
                  f"landlock_add_rule({path})")
        finally:
            os.close(fd)

    @staticmethod
    def _add_port(ruleset: int, port: int, right: int) -> None:
        rule = _NetPort(right, port)
        check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset),
                           ctypes.c_int(RULE_NET_PORT), ctypes.byref(rule), ctypes.c_uint32(0)),
              f"landlock_add_rule(port {port})")
