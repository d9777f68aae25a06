"""From a tool and what was granted to it, the sandbox policy its worker runs under.

Only granted requirements reach the policy: an optional entry nobody granted, a
tool argument or a model's request cannot widen it.

A granted path reaches the policy as the path it resolved to when it was granted,
with the device and inode found there (its pin): checked here, on the host, for a
refusal that names the path, and again by the worker on the descriptor its
Landlock rule is made from. Deno's ``--allow-read``/``--allow-write`` name the same
resolved paths, so neither layer goes through a link.

A ``run`` grant is resolved on the host's ``PATH``. One whose binary is not on this
system is left out: a tool lists the alternatives of several systems (``open``,
``xdg-open``, ``rundll32``) and runs the one that is here. A granted binary that is a
script (``#!``) may also execute its interpreter — the kernel needs that to start it —
but the interpreter is not a ``run`` grant: Deno's ``--allow-run`` still names the
granted binaries alone. The worker's ``PATH`` is the granted binaries' folders (and
their interpreters', for ``#!/usr/bin/env NAME``), so a tool calls one by its name, and
the world-readable files programs read at start (``PROGRAM_READ``) are readable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from workbench.permissions.requirements import Requirement
from workbench.sandbox import deno
from workbench.sandbox.paths import PathChanged, check_pinned, pin_path
from workbench.sandbox.policy import (PROGRAM_READ, PYTHON_SITE, Limits, NetEndpoint, Policy,
                                      python_runtime_paths, resolve_binary, script_interpreters)


class PolicyError(ValueError):
    """A grant cannot be turned into a policy (e.g. Deno is not installed)."""


class GrantChanged(PolicyError):
    """A granted path is not the file or folder that was granted any more."""

    def __init__(self, req: Requirement, exc: PathChanged) -> None:
        super().__init__(f"the granted {req.kind} {req.value} has changed: {exc}; "
                         "nothing was run. If you changed it yourself, take the grant back "
                         f"(`workbench grants revoke TOOL {req.kind} {req.value}`) and grant it again")
        self.requirement = req
        self.path = exc.path


def _granted_path(req: Requirement, policy: Policy) -> str:
    """Check a granted path against its pin (pinned now when it has none) and put the
    pin in the policy; returns the path the worker is given.

    Raises:
        GrantChanged: It is not what was granted.
    """
    try:
        pin = req.pin if req.pin is not None else pin_path(req.value)
        check_pinned(req.value, pin)
    except PathChanged as exc:
        raise GrantChanged(req, exc) from None
    policy.pins[pin.path] = [pin.device, pin.inode]
    granted = os.path.abspath(req.value)
    if granted != pin.path:
        policy.aliases[granted] = pin.path
    return pin.path


def _net(value: str) -> NetEndpoint:
    """``host:443,8080``, ``host:*`` (any port) or ``[::1]:8080`` as an endpoint."""
    host, _, ports = value.rpartition(":")
    if not host:
        return NetEndpoint(value, [])
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return NetEndpoint(host, [p if p == "*" else int(p) for p in ports.split(",") if p])


def build_policy(*, runtime: str, entry: Path, function: str, extension_dir: Path,
                 granted: Iterable[Requirement], cwd: Path, limits: Limits, deno_dir: Path,
                 python_dir: Path | None = None, tool: str = "",
                 env: Mapping[str, str] | None = None) -> Policy:
    """The policy for one call of a tool.

    Args:
        runtime: ``python`` or ``deno``.
        entry: The entry module.
        function: The function to call.
        extension_dir: The extension's folder (readable by its tools).
        granted: The requirements granted for this call, templates expanded.
        cwd: The working directory the tool starts in.
        limits: Resource limits.
        deno_dir: The extension's Deno dependency folder (its tools' caches inside).
        python_dir: The extension's Python dependency folder; its ``site`` folder,
            when there is one, goes first on the worker's import path, read-only.
        tool: The tool's name (it names the tool's own Deno cache).
        env: The host environment granted ``env`` keys are read from.

    Raises:
        GrantChanged: A granted path is not what was granted (see the module docstring).
        PolicyError: The runtime cannot run here.
    """
    env = os.environ if env is None else env
    policy = Policy(runtime=runtime, entry=str(entry), function=function,
                    extension_dir=str(extension_dir), cwd=str(cwd), limits=limits)
    interpreters: list[str] = []
    looked_up: list[str] = []  # the interpreters of `#!/usr/bin/env NAME`, found on PATH
    for req in granted:
        if req.kind == "read":
            policy.read.append(_granted_path(req, policy))
        elif req.kind == "write":
            policy.write.append(_granted_path(req, policy))
        elif req.kind == "run":
            binary = resolve_binary(req.value, env.get("PATH"))
            if binary is not None:  # else an alternative for another system
                policy.execute.append(binary)
                found = script_interpreters(binary, env.get("PATH"))
                interpreters += found
                looked_up += found[1:]
                # Deno's --allow-run names the binary as found; its Landlock rule is made
                # on the file it resolves to now, opened with no link and checked. It must
                # resolve to the file it resolved to when granted (a package upgrade that
                # replaces that file keeps it granted; a link pointed elsewhere does not).
                try:
                    pin = pin_path(binary)
                    if req.pin is not None and pin.path != req.pin.path:
                        raise PathChanged(binary, f"now leads to {pin.path}, not to {req.pin.path} "
                                          "as when it was granted")
                except PathChanged as exc:
                    raise GrantChanged(req, exc) from None
                policy.pins[binary] = [pin.device, pin.inode, pin.path]
        elif req.kind == "env":
            if req.value in env:
                policy.env[req.value] = env[req.value]
        elif req.kind == "net":
            policy.net.append(_net(req.value))
        elif req.kind == "ffi":
            policy.ffi = True
        elif req.kind == "sys":
            policy.sys.append(req.value)
    if runtime == "python":
        policy.runtime_read = python_runtime_paths()
        site = python_dir / PYTHON_SITE if python_dir is not None else None
        if site is not None and site.is_dir():
            policy.python_path = [str(site)]
            policy.runtime_read.append(str(site))
    elif runtime == "deno":
        binary = deno.deno_binary()
        if binary is None:
            raise PolicyError("Deno is not installed (the `deno` package provides it)")
        deno_dir.mkdir(parents=True, exist_ok=True)
        deno.configure(policy, binary=binary, deno_dir=str(deno_dir), tool=tool)
    else:
        raise PolicyError(f"unknown runtime {runtime!r}")
    _run_paths(policy, interpreters, looked_up)
    return policy


def _run_paths(policy: Policy, interpreters: list[str], looked_up: list[str]) -> None:
    """Let the granted scripts' interpreters execute, the granted programs read the
    system files they read at start, and give the worker a ``PATH`` of the granted
    binaries' folders, and those of interpreters ``env`` finds by name (unless the host's
    ``PATH`` itself was granted)."""
    for interpreter in dict.fromkeys(interpreters):
        if interpreter not in policy.execute:
            policy.runtime_execute.append(interpreter)
    if not policy.execute:
        return
    policy.runtime_read.extend(PROGRAM_READ)
    if "PATH" not in policy.env:
        folders = [os.path.dirname(path) for path in [*policy.execute, *looked_up]]
        policy.env["PATH"] = os.pathsep.join(dict.fromkeys(folders))
