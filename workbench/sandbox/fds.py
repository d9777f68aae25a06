"""JSON messages with file descriptors (SCM_RIGHTS) over a Unix socket.

The host and the zygote speak this on their SOCK_SEQPACKET socket; workers hand the
host their proxy listener with it. It imports the standard library only, so that the
host's side of the sandbox loads without the sandbox itself (its ctypes bindings for
Landlock and seccomp, the mounts, the namespaces), which only the zygote runs.
"""

from __future__ import annotations

import array
import json
import socket

MAX_MESSAGE = 1 << 20
"""Bytes of one message, at most."""


def send_fds(sock: socket.socket, payload: dict, fds: list[int]) -> None:
    """Send ``payload`` as one JSON message carrying ``fds``."""
    data = json.dumps(payload).encode()
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    sock.sendmsg([data], ancillary)


def recv_fds(sock: socket.socket, max_fds: int = 4) -> tuple[dict | None, list[int]]:
    """Receive one message and the descriptors it carries (None at the end of the stream)."""
    fds = array.array("i")
    data, ancillary, _flags, _addr = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(max_fds * fds.itemsize))
    for level, kind, blob in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(blob[:len(blob) - (len(blob) % fds.itemsize)])
    if not data:
        return None, list(fds)
    return json.loads(data), list(fds)
