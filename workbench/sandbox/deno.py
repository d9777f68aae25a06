"""Running a TypeScript or JavaScript tool under Deno: the binary, its flags, its cache.

Deno's own permission flags are built from the same grants as the Landlock rules
underneath, so a tool meets two walls. ``--no-prompt`` makes an ungranted access an
error (``NotCapable``), never a question on a terminal the tool does not own.

An extension's dependencies were cached at install into its dependency folder
(``<home>/cache/deno/<name>``: ``npm/``, ``remote/``, ``deno.lock``, see
``workbench.ext.dependencies``). A worker reads them and never writes them: its
``DENO_DIR`` is a scratch folder of its own tool (``run/<tool>`` inside that folder,
where Deno keeps what it compiles) whose ``npm`` and ``remote`` entries link to the
dependency folder, so one tool cannot change the code a sibling tool imports. Runs
are ``--cached-only`` against the lock written at install (``--frozen``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

from workbench.sandbox.policy import Policy

SHIM = Path(__file__).with_name("deno_worker.ts")

LOCK_NAME = "deno.lock"
"""The lock file in an extension's dependency folder, written at install."""

GENERATED_CONFIG = "deno.json"
"""The config written into the dependency folder for an extension whose only
declaration is a ``package.json`` (its dependencies as an import map)."""

RECORD_NAME = "dependencies.json"
"""What was resolved at install, in each dependency folder (see ``workbench.ext.dependencies``)."""

CACHED_DIRS = ("npm", "remote")
"""The folders of ``DENO_DIR`` that hold dependencies (npm packages; jsr and https modules)."""

SCRATCH_DIR = "run"
"""The folder, inside an extension's dependency folder, of each tool's own ``DENO_DIR``."""

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


_FOUND: list[str] = []
"""The binary found last (looked up again once it is gone)."""


def deno_binary() -> str | None:
    """The Deno binary the ``deno`` package installed, or one on PATH.

    Found once per process (the lookup costs about half a millisecond, on every call's
    path), and again when the file found is gone."""
    if _FOUND and os.path.exists(_FOUND[0]):
        return _FOUND[0]
    _FOUND.clear()
    found = _find_deno()
    if found:
        _FOUND.append(found)
    return found


def _find_deno() -> str | None:
    try:
        import deno  # the PyPI wheel that carries the binary

        path = deno.find_deno_bin()
        if path and os.path.exists(path):
            return str(path)
    except (ImportError, FileNotFoundError, RuntimeError):
        pass
    from shutil import which

    return which("deno")


def _scratch_name(tool: str) -> str:
    if _SAFE_NAME.match(tool):
        return tool
    return "tool-" + hashlib.sha256(tool.encode()).hexdigest()[:16]


def prepare_scratch(deno_dir: Path, tool: str) -> Path:
    """Make the tool's own ``DENO_DIR`` inside ``deno_dir`` and link the cached
    dependencies into it, replacing whatever a run of the tool left in their place.

    Returns:
        The scratch folder.
    """
    scratch = deno_dir / SCRATCH_DIR / _scratch_name(tool)
    scratch.mkdir(parents=True, exist_ok=True)
    for name in CACHED_DIRS:
        link = scratch / name
        target = os.path.join("..", "..", name)
        wanted = (deno_dir / name).is_dir()
        if os.path.islink(link):
            if wanted and os.readlink(link) == target:
                continue
            link.unlink()
        elif link.is_dir():
            if not wanted and _empty(link):
                continue  # the empty folder Deno makes at each start: nothing to replace
            shutil.rmtree(link)
        elif link.exists():
            link.unlink()
        if wanted:
            with contextlib.suppress(FileExistsError):  # a call of the same tool raced us
                os.symlink(target, link)
    return scratch


def _empty(folder: Path) -> bool:
    with os.scandir(folder) as entries:
        return next(entries, None) is None


def installed_registry(deno_dir: Path) -> str | None:
    """The npm registry the dependencies were fetched from, when it was not the default."""
    try:
        data = json.loads((deno_dir / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    registry = data.get("registry") if isinstance(data, dict) else None
    return registry if isinstance(registry, str) and registry else None


def config_file(extension: Path, deno_dir: Path) -> Path | None:
    """The Deno config a tool runs with: the extension's ``deno.json`` (or ``.jsonc``),
    else the one written at install from its ``package.json``, else none."""
    for name in ("deno.json", "deno.jsonc"):
        if (extension / name).is_file():
            return extension / name
    generated = deno_dir / GENERATED_CONFIG
    return generated if generated.is_file() else None


def configure(policy: Policy, *, binary: str, deno_dir: str, tool: str = "") -> None:
    """Fill in ``policy.deno`` (argv and environment) and the paths Deno itself needs.

    Args:
        policy: The policy built from the grants.
        binary: The Deno binary.
        deno_dir: The extension's dependency folder (read-only to the worker).
        tool: The tool's name, which names its scratch folder (the function's name
            when empty).
    """
    extension = Path(policy.extension_dir)
    deps = Path(deno_dir)
    scratch = prepare_scratch(deps, tool or policy.function)
    reads = [policy.extension_dir, str(SHIM.parent), *policy.read]
    lock = deps / LOCK_NAME
    lock_flags = [f"--lock={lock}", "--frozen"] if lock.is_file() else ["--no-lock"]
    flags = ["--no-prompt", "--cached-only", *lock_flags, "--node-modules-dir=none",
             "--vendor=false", "--quiet", f"--allow-read={','.join(reads)}"]
    if policy.write:
        flags.append(f"--allow-write={','.join(policy.write)}")
    if policy.net:
        if any(e.host == "*" for e in policy.net):
            flags.append("--allow-net")
        else:
            targets = [_deno_host(e.host) if "*" in e.ports else f"{_deno_host(e.host)}:{p}"
                       for e in policy.net for p in e.ports]
            flags.append(f"--allow-net={','.join(dict.fromkeys(targets))}")
    if policy.env:
        flags.append(f"--allow-env={','.join(sorted(policy.env))}")
    if policy.execute:
        flags.append(f"--allow-run={','.join(policy.execute)}")
    if policy.ffi:
        flags.append("--allow-ffi")
    if policy.sys:
        flags.append(f"--allow-sys={','.join(policy.sys)}")
    flags.append(f"--v8-flags=--max-old-space-size={policy.limits.memory_mb}")
    config = config_file(extension, deps)
    flags.append(f"--config={config}" if config else "--no-config")
    entry_url = Path(policy.entry).resolve().as_uri()
    env = {"DENO_DIR": str(scratch), "DENO_NO_UPDATE_CHECK": "1", "NO_COLOR": "1",
           "DENO_NO_PROMPT": "1"}
    registry = installed_registry(deps)
    if registry:
        env["NPM_CONFIG_REGISTRY"] = registry  # where the npm cache's folder is named after
    policy.deno = {
        "argv": [binary, "run", *flags, str(SHIM), entry_url, policy.function],
        "env": env,
    }
    policy.runtime_execute = [*policy.runtime_execute, binary]
    policy.runtime_read = [*policy.runtime_read, str(SHIM.parent), str(deps)]
    policy.runtime_write = [*policy.runtime_write, str(scratch)]


def _deno_host(host: str) -> str:
    """A host as ``--allow-net`` takes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host
