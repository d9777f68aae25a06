"""The seed's gate for the process runtime: what a plugin's process may do with files,
programs and unix sockets, enforced by the sandbox it runs in (``launch.py``), and an
audit log of what was decided.

The baseline, as the sandbox makes it (narrower than the seed's, never wider):

- every file operation in its data folder (``/data`` in the seed's paths), reads of its
  installed folder, the project and the SDK, nothing else of the file system (Landlock);
- no program run at all (the seccomp filter of a server not granted ``run``; the seed
  allows running what the image ships), so nothing from the writable folders either;
- no unix-socket connect (the network namespace and seccomp).

The manifest's ``gate`` rules (``allow`` or ``deny``; ``approve`` is refused at install)
come on top, as far as the sandbox can express them:

- a ``deny`` of ``write``/``create``/``delete`` on the whole data folder (``/data/**``)
  makes it read-only; a ``deny`` of ``read`` on the whole project (``/project/**``, the
  seed's channel dir) leaves the project out. A ``deny`` of part of a folder cannot be
  drawn by Landlock, whose rules grant whole trees: it is logged as not enforced.
- ``commands`` denies are enforced already (no program runs).
- an ``allow`` beyond the baseline is not granted (the owner approved the capabilities,
  not extra paths): logged as refused.

Each start writes one line to ``<plugin>/audit/<project>/<day>.jsonl``: the grants and
every rule with its decision and how it was enforced. Denials by the sandbox itself
(``EACCES``) are not seen one by one: Landlock and seccomp refuse without telling.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WRITES = {"write", "create", "delete"}


@dataclass
class GateResult:
    """The grants after the gate, and what was decided for each rule."""

    data_writable: bool = True
    project_readable: bool = True
    decisions: list[dict[str, Any]] = field(default_factory=list)


def _whole(paths: list[str], root: str) -> bool:
    return any(p.rstrip("/") in (root, f"{root}/**", f"{root}/*") for p in paths)


def apply(gate: Any) -> GateResult:
    """What the manifest's ``gate`` (already checked) does to the baseline."""
    result = GateResult()
    if not isinstance(gate, dict):
        return result
    for rule in gate.get("files") or []:
        paths = [str(p) for p in rule.get("paths") or []]
        ops = set(rule.get("operations") or ["read", "write", "create", "delete", "exec", "stat"])
        decision = rule.get("decision")
        record = {"kind": "files", "paths": paths, "operations": sorted(ops), "decision": decision}
        if decision == "deny" and ops & WRITES and _whole(paths, "/data"):
            result.data_writable = False
            record["enforced"] = "the data folder is read-only"
        elif decision == "deny" and "read" in ops and _whole(paths, "/project"):
            result.project_readable = False
            record["enforced"] = "the project is not readable"
        elif decision == "deny" and ops <= {"exec"}:
            record["enforced"] = "no program runs in the sandbox at all"
        elif decision == "deny":
            record["enforced"] = "not enforced: the sandbox grants whole folders (Landlock), not parts of them"
        else:
            record["enforced"] = "not granted: an allow beyond the sandbox's grants is refused"
        result.decisions.append(record)
    for rule in gate.get("commands") or []:
        decision = rule.get("decision")
        result.decisions.append({"kind": "commands", "commands": [str(c) for c in rule.get("commands") or []],
                                 "decision": decision,
                                 "enforced": "no program runs in the sandbox at all" if decision == "deny"
                                 else "not granted: no program runs in the sandbox at all"})
    return result


def audit(folder: Path, plugin: str, grants: list[str], result: GateResult, *,
          memory_mb: int | None) -> Path:
    """Append the start's decisions to the day's audit log; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    path = folder / f"{now:%Y-%m-%d}.jsonl"
    line = {"at": now.isoformat(timespec="seconds"), "event": "start", "plugin": plugin, "grants": grants,
            "memory_mb": memory_mb, "baseline": ["no program runs", "no unix-socket connect",
                                                 "files: only the grants"],
            "rules": result.decisions}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    return path
