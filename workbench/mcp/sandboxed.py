"""The host's side of a sandboxed stdio server: its policy, and how it is launched.

A server added with ``--sandbox`` runs under the same layers as an extension's worker
(see ``workbench.mcp.launcher``), with a ``Policy`` built from the grants the person
gave when adding it and nothing more, plus what the program itself needs to start:
the right to execute the command and its interpreter (a ``#!`` line is followed), and
to read their installation folders (a virtualenv for its script, pyenv's folder for
its interpreter, the npm package of ``npx``). A program of the system (``/usr/bin/node``)
brings itself and its library folders (``/usr/lib``, ``/lib``), never the rest of
``/usr``. Anything else — the server's own code folder, data, hosts — must be
granted: ``read:PATH``, ``write:PATH``, ``run:BINARY``, ``env:KEY``, ``net:HOST:PORT``.

A granted path is pinned the first time the server starts with it (``sandbox/paths.py``:
the path it resolved to, its device and inode), in ``PINS_DIR`` by the entry's digest;
each later start checks it on the host and again in the sandbox, on the descriptor its
Landlock rule is made from, and refuses to start, naming the path, when it is another
file or folder or has a symbolic link in it.

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
from workbench.sandbox.paths import PathChanged, Pin, check_pinned, pin_path
from workbench.sandbox.policy import (PROGRAM_READ, Limits, NetEndpoint, Policy, resolve_binary,
                                      script_interpreters)

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
SYSTEM_PREFIXES = ("/", "/usr", "/usr/local")
"""Installation folders shared by every program of the system: never read whole."""

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


def _runtime_folders(path: str) -> list[str]:
    """What an executable reads of its installation: its prefix, or for a program of
    the system only its own folders there (``/usr/local/lib/python3.11``); shared
    libraries are in the sandbox's system folders already."""
    prefix = _prefix(path)
    if prefix not in SYSTEM_PREFIXES:
        return [prefix]
    name = os.path.basename(path)
    names = {name, name.rstrip("0123456789.")} - {""}
    return sorted(folder for n in names for folder in (os.path.join(prefix, "lib", n),
                                                       os.path.join(prefix, "share", n))
                  if os.path.isdir(folder))


class GrantChanged(SandboxSetupError):
    """A granted path is not the file or folder it was when first used."""


def _granted_path(kind: str, value: str, policy: Policy, pins: dict[str, Pin]) -> str:
    """Check a granted path against its pin (pinned now when it has none) and put the
    pin in the policy; returns the path the server is given.

    Raises:
        GrantChanged: It is not what it was (a link in it, another folder or file).
    """
    try:
        pin = pins.get(f"{kind}:{value}") or pin_path(value)
        check_pinned(value, pin)
    except PathChanged as exc:
        raise GrantChanged(f"the granted {kind} {value} has changed: {exc}; nothing was run") from None
    pins[f"{kind}:{value}"] = pin
    policy.pins[pin.path] = [pin.device, pin.inode]
    granted = os.path.abspath(value)
    if granted != pin.path:
        policy.aliases[granted] = pin.path
    return pin.path


def build_policy(server: ServerConfig, *, cwd: Path, env: Mapping[str, str],
                 limits: Limits, pins: dict[str, Pin] | None = None) -> tuple[list[str], Policy]:
    """The argv and policy of a sandboxed stdio server.

    ``pins`` (``kind:path`` → pin) holds what each granted path was when the server
    first started with it; a grant it lacks is pinned now and added to it.

    Raises:
        SandboxSetupError: The command (or a granted binary) is not found.
        GrantChanged: A granted path is not what it was pinned as.
    """
    pins = {} if pins is None else pins
    command = resolve_binary(server.command or "", SYSTEM_PATH + ":" + env.get("PATH", ""))
    if command is None:
        raise SandboxSetupError(f"the command {server.command!r} was not found")
    executables = [command, *script_interpreters(command, env.get("PATH", SYSTEM_PATH))]
    folder = server.cwd or str(cwd)
    runtime_read: list[str] = []
    runtime_execute: list[str] = []
    for path in executables:
        real = os.path.realpath(path)
        runtime_execute += sorted({path, real})
        runtime_read += sorted({*_runtime_folders(path), *_runtime_folders(real)})
    policy = Policy(runtime="mcp", entry=command, function="",
                    extension_dir=runtime_read[0] if runtime_read else os.path.realpath(command),
                    cwd=folder, limits=limits, runtime_read=runtime_read,
                    runtime_execute=runtime_execute)
    policy.runtime_read += list(PROGRAM_READ)
    policy.env = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "HOME": folder}
    for grant in server.grants:
        kind, value = parse_grant(grant)
        if kind in ("read", "write"):
            path = os.path.abspath(os.path.expanduser(value))
            (policy.read if kind == "read" else policy.write).append(
                _granted_path(kind, path, policy, pins))
        elif kind == "run":
            binary = resolve_binary(value, env.get("PATH"))
            if binary is None:
                raise SandboxSetupError(f"the granted binary {value!r} was not found")
            policy.execute.append(binary)
            try:
                pin = pin_path(binary)
                first = pins.setdefault(f"run:{binary}", pin)
                if pin.path != first.path:
                    raise PathChanged(binary, f"now leads to {pin.path}, not to {first.path} "
                                      "as when it was first run")
            except PathChanged as exc:
                raise GrantChanged(f"the granted run {value} has changed: {exc}; nothing was run") from None
            policy.pins[binary] = [pin.device, pin.inode, pin.path]
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


def read_pins(path: Path) -> dict[str, Pin]:
    """The pins of a server's grants (``kind:path`` → pin); empty when none were kept
    or the file is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {key: Pin(str(v["resolved"]), int(v["device"]), int(v["inode"]))
                for key, v in data.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def write_pins(path: Path, pins: Mapping[str, Pin]) -> None:
    """Keep a server's pins (atomically; a failure leaves the old ones)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps({k: p.to_json() for k, p in pins.items()}), encoding="utf-8")
        temp.replace(path)
    except OSError:
        pass


def prepare(server: ServerConfig, *, cwd: Path, env: Mapping[str, str], limits: Limits,
            pins_file: Path | None = None, inherit_fds: tuple[int, ...] = (), serve_port: int = 0) -> Launch:
    """Build the launch of a sandboxed server: the spec goes to the launcher through a
    pipe (it may hold secrets, which never appear on a command line). ``pins_file``
    keeps the pins of its granted paths from one start to the next; ``inherit_fds``
    are handed on to the server itself at the same numbers; ``serve_port`` is the one
    port a server reached over TCP may bind on its own loopback (a plugin), reached
    through the dialer the control socket brings after the proxy's socket.

    Raises:
        SandboxSetupError: As ``build_policy``.
    """
    pins = read_pins(pins_file) if pins_file is not None else {}
    known = dict(pins)
    try:
        argv, policy = build_policy(server, cwd=cwd, env=env, limits=limits, pins=pins)
    except GrantChanged as exc:
        where = f" If you changed it yourself, delete {pins_file} and start the server again." if pins_file else ""
        raise GrantChanged(f"{exc}.{where}") from None
    if pins_file is not None and pins != known:
        write_pins(pins_file, pins)
    policy.serve_port = serve_port
    host_end = child_end = None
    if policy.net or serve_port:
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    spec = {"argv": argv, "policy": policy.to_json(),
            "control_fd": child_end.fileno() if child_end is not None else None,
            "inherit_fds": list(inherit_fds)}
    read_fd, write_fd = os.pipe()
    data = json.dumps(spec).encode()
    if len(data) > 60_000:
        os.close(read_fd)
        os.close(write_fd)
        raise SandboxSetupError("the server's configuration is too large to hand to the sandbox")
    os.write(write_fd, data)  # fits in the pipe's buffer
    os.close(write_fd)
    fds = [read_fd] + ([child_end.detach()] if child_end is not None else [])
    pass_fds = tuple(fds) + tuple(inherit_fds)
    launcher = [sys.executable, "-I", "-m", "workbench.mcp.launcher", str(read_fd)]
    return Launch(argv=launcher, pass_fds=pass_fds, control=host_end, policy=policy,
                  _close_after_start=list(fds))
