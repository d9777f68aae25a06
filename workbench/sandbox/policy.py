"""The policy one worker runs under: built on the host from a tool's granted permissions.

A policy is plain data (it crosses to the zygote as JSON). It names the entry module
and function, the paths the worker may read, write and execute, the environment it
sees, whether it may start processes, the network endpoints the host's proxy will
let it reach, and its resource limits. Nothing in a tool's arguments or a model's
request reaches this module: only grants do.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PROXY_PORT = 3128
"""The port the worker's private HTTP(S) proxy listens on, inside its network namespace."""

SYSTEM_READ = ("/usr/lib", "/lib", "/lib64", "/usr/lib64", "/etc/ld.so.cache", "/usr/share/zoneinfo",
               "/etc/localtime", "/etc/ssl/certs", "/usr/share/ca-certificates", "/dev/urandom",
               "/dev/random")
"""Read-only system files every runtime needs: shared libraries, time zones, CA certificates."""

PROGRAM_READ = ("/etc/ssl", "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/passwd",
                "/etc/group", "/etc/gitconfig")
"""World-readable system files the programs a sandbox runs (a granted binary, a
sandboxed server) read at start: OpenSSL's configuration, who the user is, how names
resolve, git's system configuration (git stops when it exists and cannot be read)."""

PYTHON_SITE = "site"
"""The folder, inside an extension's Python dependency folder, its requirements were
installed into (``pip install --target``): put first on the worker's import path."""


@dataclass
class Limits:
    """Resource limits of one worker."""

    cpu_seconds: int = 300
    memory_mb: int = 1024
    file_size_mb: int = 256
    open_files: int = 256
    processes: int = 64
    output_bytes: int = 1 << 20
    """Bytes of stdout and stderr a worker may write before it is stopped."""
    per_process_memory: bool = False
    """Whether a worker that may start processes may run with per-process memory
    bounds alone where no memory cgroup can be made (else it is refused)."""


@dataclass
class NetEndpoint:
    """A host and its ports the proxy lets a tool reach; ``*`` means any host (a port
    ``"*"`` any port). An IPv6 address is written without brackets."""

    host: str
    ports: list[int | str]


@dataclass
class Policy:
    """Everything a worker may reach; see the module docstring."""

    runtime: str
    entry: str
    function: str
    extension_dir: str
    read: list[str] = field(default_factory=list)
    write: list[str] = field(default_factory=list)
    execute: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    net: list[NetEndpoint] = field(default_factory=list)
    ffi: bool = False
    sys: list[str] = field(default_factory=list)
    cwd: str = "/"
    limits: Limits = field(default_factory=Limits)
    runtime_read: list[str] = field(default_factory=list)
    runtime_execute: list[str] = field(default_factory=list)
    runtime_write: list[str] = field(default_factory=list)
    deno: dict[str, Any] = field(default_factory=dict)
    python_path: list[str] = field(default_factory=list)
    """Folders a Python worker puts first on ``sys.path`` before importing the entry
    (the extension's installed requirements); readable through ``runtime_read``."""
    pins: dict[str, list[Any]] = field(default_factory=dict)
    """``[device, inode]`` of each granted path as it was granted (see
    ``sandbox/paths.py``; ``[device, inode, resolved]`` for a granted binary, pinned
    as the policy is built): the worker opens it with no link followed and refuses to
    start when it is something else."""
    aliases: dict[str, str] = field(default_factory=dict)
    """A granted path as the person granted it, by the path it resolved to when the
    policy was built (it held a link): made a link to that path in the worker's root,
    so the tool reaches it by the name it was granted under. Nothing is bound through
    it: the bind and the Landlock rule are the resolved, pinned path's."""

    serve_port: int = 0
    """A long-lived server reached over TCP (a plugin): the one port it may bind, on its
    own loopback, which the host reaches through the sandbox's dialer (see
    ``process.dialer``). 0: it may bind none."""

    shell: dict[str, Any] = field(default_factory=dict)
    """For the ``shell`` runtime: ``project`` (the folder, resolved, mounted as a
    copy-on-write view), ``device`` and ``inode`` (its pin), ``upper_mb`` (the bound
    on what the command may write there), ``tmp_mb`` (its private ``/tmp``) and
    ``programs`` (the host's folders whose programs it runs, read-only)."""

    @property
    def allow_processes(self) -> bool:
        return bool(self.execute) or self.runtime == "shell"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Policy:
        data = dict(data)
        data["limits"] = Limits(**data.get("limits", {}))
        data["net"] = [NetEndpoint(**n) for n in data.get("net", [])]
        return cls(**data)


def dynamic_loaders() -> list[str]:
    """The ELF interpreters on this system (resolved): executing any dynamically linked
    program needs the right to execute its loader, and nothing more of ``/lib``."""
    import glob

    found: set[str] = set()
    for pattern in ("/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*-linux-gnu*/ld-linux*.so*",
                    "/usr/lib/*-linux-gnu*/ld-linux*.so*", "/lib/ld-musl*.so*"):
        found.update(os.path.realpath(p) for p in glob.glob(pattern))
    return sorted(found)


def python_runtime_paths() -> list[str]:
    """What a Python worker must read to import the standard library and its packages."""
    import workbench

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(workbench.__file__).resolve().parent)}
    # The interpreter's own folders only: an entry of the host's sys.path outside them
    # (its working folder with ``python -m``, a PYTHONPATH folder) is the person's, and
    # never readable by every tool.
    # Nor a prefix's ``bin``: a console script (``.venv/bin/workbench``) puts its own
    # folder first on sys.path, and a runtime folder is bound executable.
    prefixes = tuple(sorted(paths))
    programs = {os.path.join(prefix, "bin") for prefix in prefixes}
    paths.update(p for p in sys.path if p and os.path.isdir(p) and p.rstrip("/") not in programs
                 and any(p == prefix or p.startswith(prefix.rstrip("/") + "/") for prefix in prefixes))
    return sorted(paths)


def script_interpreters(path: str, env_path: str | None = None) -> list[str]:
    """The interpreter(s) a script's ``#!`` line names, resolved: ``["/bin/sh"]``, or
    ``["/usr/bin/env", "/usr/bin/python3"]`` for ``#!/usr/bin/env python3`` (the name
    looked up in ``env_path``); empty for a program that is no script."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    parts = first[2:].decode("utf-8", "replace").split()
    if not parts:
        return []
    found = [parts[0]]
    if os.path.basename(parts[0]) == "env" and len(parts) > 1:
        name = next((p for p in parts[1:] if not p.startswith("-")), None)
        resolved = resolve_binary(name, env_path) if name else None
        if resolved:
            found.append(resolved)
    return found


def resolve_binary(binary: str, env_path: str | None = None) -> str | None:
    """The absolute path a ``run`` grant's binary names, or None when it is not found."""
    if os.path.isabs(binary):
        return binary if os.path.exists(binary) else None
    return shutil.which(binary, path=env_path or os.environ.get("PATH"))
