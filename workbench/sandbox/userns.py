"""One sandboxed process tree: its user namespace, its other namespaces, its supervisor.

Both a tool's worker (forked by the zygote) and a sandboxed MCP server (started by
``workbench.mcp.launcher``) are made the same way, by this module:

- the **supervisor** stays outside the sandbox, as the host's own user. It forks the
  middle process, writes that one's id map when the sandbox's identity is not the
  host's (:func:`map_child`), then answers the metadata calls the seccomp filter hands
  it (:func:`watch`, ``metadata.Broker``) until the middle process ends;
- the **middle process** (:func:`middle`) joins the memory cgroup, enters a user
  namespace of its own (mapped by itself, or by the supervisor for an identity that is
  not the host's, such as ``process.UNUSED_ID`` on a root host), then fresh mount, PID,
  network, IPC and UTS namespaces owned by it, and forks the sandboxed process as PID 1
  there. It waits for it and hands its wait status to the supervisor;
- **PID 1** sets itself up (``process.private_root``, ``process.enter``), sends its
  seccomp listener to the supervisor over the same socket, and runs the tool or execs
  the server.

The socket between supervisor and middle process (``sync``, SOCK_SEQPACKET) carries
``user``/``mapped`` (the id map), ``{"listener": true}`` with the seccomp listener,
and ``status`` with the wait status of PID 1.
"""

from __future__ import annotations

import array
import os
import select
import signal
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from workbench.sandbox import cgroup, metadata
from workbench.sandbox._libc import (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUSER,
                                     CLONE_NEWUTS, PR_SET_PDEATHSIG, prctl, unshare)
from workbench.sandbox.policy import Policy

SUPERVISOR_GONE = 74
NOT_MAPPED = 73


def map_user(pid: int, uid: int, gid: int) -> None:
    """Map uid and gid 0 of ``pid``'s new user namespace to ``uid``/``gid`` outside.

    When that is not the host's own identity (a root host's unused id), the host's
    root is mapped too, as uid and gid 1: while it sets itself up, with capabilities
    in its namespace, the sandboxed process may then walk to root's files (an
    interpreter under ``/root``) to mount them; once its capabilities are dropped it
    is only uid 0 there — the unused id outside — and uid 1 is out of reach (no
    ``CAP_SETUID``, ``no_new_privs``, ``nosuid`` mounts).
    """
    extra = "\n1 0 1" if uid != os.getuid() and os.getuid() == 0 else ""
    with open(f"/proc/{pid}/setgroups", "w") as handle:  # own pid: before any other map
        handle.write("deny")
    with open(f"/proc/{pid}/uid_map", "w") as handle:
        handle.write(f"0 {uid} 1{extra}")
    with open(f"/proc/{pid}/gid_map", "w") as handle:
        handle.write(f"0 {gid} 1{extra}")


def enter_user_namespace(owner: tuple[int, int], sync: socket.socket, supervisor: int) -> None:
    """In the middle process: a user namespace of its own, whose uid 0 is ``owner``."""
    itself = owner == (os.getuid(), os.getgid())
    unshare(CLONE_NEWUSER)
    if itself:
        map_user(os.getpid(), *owner)
        return
    sync.send(b"user")
    if sync.recv(16) != b"mapped":
        os._exit(NOT_MAPPED)
    # Become uid and gid 0 of the namespace (the chosen identity outside): until now
    # this process kept the host's own ids, whatever the map says.
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a change of ids cleared it
    if os.getppid() != supervisor:
        os._exit(SUPERVISOR_GONE)


def middle(*, sync: socket.socket, supervisor: int, owner: tuple[int, int], memory: Path | None,
           pid1: Callable[[], int], forked: Callable[[], None] = lambda: None,
           failed: Callable[[str], object] = lambda note: None) -> NoReturn:
    """The middle process: its memory cgroup, its own user namespace, then the others,
    then ``pid1`` as PID 1 of them (see the module docstring).

    The PID namespace must belong to the new user namespace (for a ``/proc`` of its
    own), so PID 1 is forked once more; this process waits for it and hands its status
    to the supervisor. ``forked`` runs here once PID 1 is forked (close what only PID 1
    needs); ``failed`` is told why when PID 1's setup raised, and ``pid1``'s return
    value is its exit code.
    """
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != supervisor:
        os._exit(SUPERVISOR_GONE)  # the supervisor is already gone
    if memory is not None:
        cgroup.join(memory)
    enter_user_namespace(owner, sync, supervisor)
    unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = pid1()
        except BaseException as exc:  # fail closed: nothing runs half-sandboxed
            code = 71
            failed(f"sandbox setup failed: {type(exc).__name__}: {exc}\n")
        finally:
            os._exit(code)
    forked()
    _, status = os.waitpid(pid, 0)
    sync.send(b"status" + struct.pack("i", status))
    os._exit(0)


def map_child(pid: int, owner: tuple[int, int], sync: socket.socket) -> None:
    """In the supervisor: write the middle process's id map when it asks (an identity
    that is not the host's own; the middle process maps itself otherwise)."""
    if owner != (os.getuid(), os.getgid()) and sync.recv(16) == b"user":
        map_user(pid, *owner)
        sync.send(b"mapped")


def watch(pid: int, sync: socket.socket, policy: Policy, owner: tuple[int, int],
          tick: Callable[[], None] | None = None, every_s: float = 0.5,
          on_status: Callable[[int], None] | None = None) -> int:
    """In the supervisor: serve the sandboxed process's metadata calls until the middle
    process ends; its wait status (PID 1's, when it reported one). ``tick``, when
    given, is called at least every ``every_s`` seconds meanwhile; ``on_status`` as soon
    as the middle process reports PID 1's status — by then every process of the PID
    namespace has ended (the kernel ends them before PID 1's own end), while the middle
    process may still be tearing its mount namespace down."""
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(sync.fileno(), select.POLLIN)
    middle = _Middle(sync, poller, policy, owner, on_status)
    timeout = int(every_s * 1000) if tick is not None else None
    while True:
        ready = poller.poll(timeout)
        if tick is not None:
            tick()
        for fd, events in ready:
            if fd == pidfd:
                _, status = os.waitpid(pid, 0)
                os.close(pidfd)
                # What the middle process sent before it ended is read first, whatever
                # order the poll listed the two in: PID 1's status may be among it.
                while middle.open and select.select([sync], [], [], 0)[0]:
                    middle.receive()
                if middle.broker is not None:
                    os.close(middle.broker.listener)
                return middle.reported if middle.reported is not None else status
            if fd == sync.fileno():
                middle.receive()
            elif middle.broker is not None and fd == middle.broker.listener:
                if events & (select.POLLHUP | select.POLLERR) or not middle.broker.handle():
                    poller.unregister(fd)


class _Middle:
    """What the middle process sent the supervisor: PID 1's status, the metadata broker."""

    def __init__(self, sync: socket.socket, poller: select.poll, policy: Policy,
                 owner: tuple[int, int], on_status: Callable[[int], None] | None) -> None:
        self.sync = sync
        self.poller = poller
        self.policy = policy
        self.owner = owner
        self.on_status = on_status
        self.broker: metadata.Broker | None = None
        self.reported: int | None = None
        """PID 1's wait status, once the middle process sent it."""
        self.open = True
        """Whether the sync socket may still bring a message."""

    def receive(self) -> None:
        """One message from the middle process: PID 1's status, or the broker's socket."""
        try:
            message, fds = recv_raw(self.sync)
        except OSError:
            message, fds = b"", []
        if message.startswith(b"status") and len(message) == 10:
            self.reported = struct.unpack("i", message[6:])[0]
            if self.on_status is not None:
                self.on_status(self.reported)
        elif fds and self.broker is None and message.startswith(b'{"listener"'):
            self.broker = metadata.Broker(fds[0], [*self.policy.write, *self.policy.runtime_write],
                                          self.owner)
            self.poller.register(fds[0], select.POLLIN)
            fds = fds[1:]
        for extra in fds:
            os.close(extra)
        if not message:
            self.poller.unregister(self.sync.fileno())
            self.open = False


def recv_raw(sock: socket.socket, max_fds: int = 2) -> tuple[bytes, list[int]]:
    """One message of at most 64 bytes and the descriptors it carries."""
    fds = array.array("i")
    data, ancillary, _flags, _addr = sock.recvmsg(64, socket.CMSG_SPACE(max_fds * fds.itemsize))
    for level, kind, blob in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(blob[:len(blob) - (len(blob) % fds.itemsize)])
    return data, list(fds)
