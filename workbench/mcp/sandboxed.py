"""The host's side of a sandboxed stdio server: its policy, and how it is launched.

A server added with ``--sandbox`` runs under the same layers as an extension's worker
(see ``workbench.mcp.launcher``), with a ``Policy`` built from the grants the person
gave when adding it and nothing more, plus what the program itself needs to start:
the right to execute the command and its interpreter (a ``#!`` line is followed), and
to read their installation folders (``/usr`` for ``/usr/bin/node``, a virtualenv for
its script). Anything else — the server's own code folder, data, hosts — must be
granted: ``read:PATH``, ``write:PATH``, ``run:BINARY``, ``env:KEY``, ``net:HOST:PORT``.

World-readable system files programs read at start (``sandbox.policy.PROGRAM_READ``) are
readable too.
The environment holds ``PATH``, ``LANG``, ``HOME`` (the server's folder), the entry's
own ``env`` and the granted keys of the host's environment. Network access goes
through the host's allowlisting proxy (``workbench.sandbox.proxy``); without a
``net`` grant the server's network namespace holds loopback alone.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from workbench.mcp.config import ServerConfig, parse_grant
from workbench.sandbox.policy import (PROGRAM_READ, Limits, NetEndpoint, Policy, resolve_binary,
                                      script_interpreters)

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

class SandboxSetupError(RuntimeError):
    """The server cannot be sandboxed as configured (e.g. its command is not found)."""


@dataclass
class Launch:
    """What to exec for a sandboxed server, and the descriptors to hand it."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    control: socket.socket | None
    """The host's end of the socket the server's proxy listener arrives on (net grants)."""
    policy: Policy
    _close_after_start: list[int] = field(default_factory=list)

    def started(self) -> None:
        """Close the launcher's ends in the host once the launcher has them."""
        for fd in self._close_after_start:
            try:
                os.close(fd)
            except OSError:
                pass
        self._close_after_start.clear()


def _prefix(path: str) -> str:
    """The installation folder of an executable: the parent of its ``bin``."""
    folder = os.path.dirname(path)
    return os.path.dirname(folder) if os.path.basename(folder) in ("bin", "sbin") else folder


def build_policy(server: ServerConfig, *, cwd: Path, env: Mapping[str, str],
                 limits: Limits) -> tuple[list[str], Policy]:
    """The argv and policy of a sandboxed stdio server.

    Raises:
        SandboxSetupError: The command (or a granted binary) is not found.
    """
    command = resolve_binary(server.command or "", SYSTEM_PATH + ":" + env.get("PATH", ""))
    if command is None:
        raise SandboxSetupError(f"the command {server.command!r} was not found")
    executables = [command, *script_interpreters(command, env.get("PATH", SYSTEM_PATH))]
    folder = server.cwd or str(cwd)
    policy = Policy(runtime="mcp", entry=command, function="", extension_dir=_prefix(command),
                    cwd=folder, limits=limits)
    for path in executables:
        real = os.path.realpath(path)
        policy.runtime_execute += sorted({path, real})
        policy.runtime_read += sorted({_prefix(path), _prefix(real)})
    policy.runtime_read += list(PROGRAM_READ)
    policy.env = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "HOME": folder}
    for grant in server.grants:
        kind, value = parse_grant(grant)
        if kind == "read":
            policy.read.append(os.path.expanduser(value))
        elif kind == "write":
            policy.write.append(os.path.expanduser(value))
        elif kind == "run":
            binary = resolve_binary(value, env.get("PATH"))
            if binary is None:
                raise SandboxSetupError(f"the granted binary {value!r} was not found")
            policy.execute.append(binary)
        elif kind == "env":
            if value in env:
                policy.env[value] = env[value]
        elif kind == "net":
            host, _, ports = value.rpartition(":")
            if not host or not all(p.isdigit() for p in ports.split(",")):
                raise SandboxSetupError(f"grant net:{value} must be net:HOST:PORT[,PORT]")
            policy.net.append(NetEndpoint(host, [int(p) for p in ports.split(",")]))
    policy.env.update(server.env)
    return [command, *server.args], policy


def prepare(server: ServerConfig, *, cwd: Path, env: Mapping[str, str], limits: Limits) -> Launch:
    """Build the launch of a sandboxed server: the spec goes to the launcher through a
    pipe (it may hold secrets, which never appear on a command line).

    Raises:
        SandboxSetupError: As ``build_policy``.
    """
    argv, policy = build_policy(server, cwd=cwd, env=env, limits=limits)
    host_end = child_end = None
    if policy.net:
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    spec = {"argv": argv, "policy": policy.to_json(),
            "control_fd": child_end.fileno() if child_end is not None else None}
    read_fd, write_fd = os.pipe()
    data = json.dumps(spec).encode()
    if len(data) > 60_000:
        os.close(read_fd)
        os.close(write_fd)
        raise SandboxSetupError("the server's configuration is too large to hand to the sandbox")
    os.write(write_fd, data)  # fits in the pipe's buffer
    os.close(write_fd)
    fds = [read_fd] + ([child_end.detach()] if child_end is not None else [])
    launcher = [sys.executable, "-I", "-m", "workbench.mcp.launcher", str(read_fd)]
    return Launch(argv=launcher, pass_fds=tuple(fds), control=host_end, policy=policy,
                  _close_after_start=list(fds))
