"""Running a TypeScript or JavaScript tool under Deno: the binary, its flags, its cache.

Deno's own permission flags are built from the same grants as the Landlock rules
underneath, so a tool meets two walls. ``--no-prompt`` makes an ungranted access an
error (``NotCapable``), never a question on a terminal the tool does not own.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.sandbox.policy import Policy

SHIM = Path(__file__).with_name("deno_worker.ts")


def deno_binary() -> str | None:
    """The Deno binary the ``deno`` package installed, or one on PATH."""
    try:
        import deno  # the PyPI wheel that carries the binary

        path = deno.find_deno_bin()
        if path and os.path.exists(path):
            return str(path)
    except (ImportError, FileNotFoundError, RuntimeError):
        pass
    from shutil import which

    return which("deno")


def configure(policy: Policy, *, binary: str, deno_dir: str) -> None:
    """Fill in ``policy.deno`` (argv and environment) and the paths Deno itself needs."""
    extension = Path(policy.extension_dir)
    reads = [policy.extension_dir, str(SHIM.parent), *policy.read]
    flags = ["--no-prompt", "--cached-only", "--no-lock", "--quiet",
             f"--allow-read={','.join(reads)}"]
    if policy.write:
        flags.append(f"--allow-write={','.join(policy.write)}")
    if policy.net:
        if any(e.host == "*" for e in policy.net):
            flags.append("--allow-net")
        else:
            targets = [f"{e.host}:{p}" for e in policy.net for p in e.ports]
            flags.append(f"--allow-net={','.join(targets)}")
    if policy.env:
        flags.append(f"--allow-env={','.join(sorted(policy.env))}")
    if policy.execute:
        flags.append(f"--allow-run={','.join(policy.execute)}")
    if policy.ffi:
        flags.append("--allow-ffi")
    if policy.sys:
        flags.append(f"--allow-sys={','.join(policy.sys)}")
    flags.append(f"--v8-flags=--max-old-space-size={policy.limits.memory_mb}")
    config = next((extension / n for n in ("deno.json", "deno.jsonc") if (extension / n).exists()), None)
    flags.append(f"--config={config}" if config else "--no-config")
    entry_url = Path(policy.entry).resolve().as_uri()
    policy.deno = {
        "argv": [binary, "run", *flags, str(SHIM), entry_url, policy.function],
        "env": {"DENO_DIR": deno_dir, "DENO_NO_UPDATE_CHECK": "1", "NO_COLOR": "1",
                "DENO_NO_PROMPT": "1"},
    }
    policy.runtime_execute = [*policy.runtime_execute, binary]
    policy.runtime_read = [*policy.runtime_read, str(SHIM.parent)]
    policy.runtime_write = [*policy.runtime_write, deno_dir]
