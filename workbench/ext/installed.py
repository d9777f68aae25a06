"""What is installed and in what state: records, fingerprints and consent compared.

An installed extension is ``ok`` when its manifest is valid and its files are the
ones the person approved; ``held`` when it was never approved or its files changed
since (its tools must not be offered until ``workbench ext trust NAME``); ``broken``
when its folder is missing or its manifest is invalid. :func:`record_installed`
writes an extension's row, files and consent in one transaction.

This module imports nothing of ours but the manifest and store packages and
``workbench.ext``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.ext.errors import ExtensionError
from workbench.ext.fingerprint import Fingerprint, FingerprintCheck, compare, fingerprint
from workbench.ext.plan import read_version
from workbench.manifest.models import EXTENSION_NAME_PATTERN, Manifest
from workbench.manifest.problems import ValidationReport
from workbench.manifest.validate import CheckedTexts, validate_extension
from workbench.store import Store

BUILTIN_NAME = "builtin"
"""The name of the built-in extension shipped with workbench."""

NAME_PATTERN = re.compile(EXTENSION_NAME_PATTERN)
"""An extension's name (the manifest's rule); match it with ``fullmatch``: ``$`` alone
would let a trailing newline through."""
"""What an extension's name must match to be its folder's name."""

State = Literal["ok", "held", "broken", "conflict"]


@dataclass(frozen=True)
class InstalledExtension:
    """An installed extension as ``ext list`` shows it.

    Attributes:
        name: Its name and folder name.
        display_name: The name shown to people (the folder name when unreadable).
        version: Its version.
        source: Where it was installed from.
        path: Its folder.
        digest: The digest of its files now (empty when its folder is missing).
        state: ``ok``, ``held`` or ``broken``.
        reason: Why it is not ``ok``, for a person; empty when it is.
        enabled: Whether the person has it switched on.
        builtin: Whether it is the built-in extension.
        tools: Its tools' names.
        manifest: Its manifest, when valid.
        check: How its files compare with the approved ones.
    """

    name: str
    display_name: str
    version: str
    source: str
    path: Path
    digest: str
    state: State
    reason: str
    enabled: bool
    builtin: bool
    tools: tuple[str, ...]
    manifest: Manifest | None = None
    check: FingerprintCheck | None = None
    origin: str = "installed"
    """``installed`` (the home's extensions folder), or ``project PATH`` for one a
    project keeps in ``.workbench/extensions``."""
    identity: str = ""
    """What its grants, database and caches are kept under; its name when installed."""

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "display_name": self.display_name, "version": self.version,
                "source": self.source, "path": str(self.path), "digest": self.digest,
                "state": self.state, "reason": self.reason, "enabled": self.enabled,
                "builtin": self.builtin, "tools": list(self.tools),
                "changed_files": self.check.paths() if self.check else [],
                "origin": self.origin, "identity": self.identity or self.name}


def check_name(name: str, where: str) -> None:
    """Refuse a manifest name that cannot be a folder name.

    Raises:
        ExtensionError: The name is not 1 to 128 letters, digits, ``.``, ``_`` or
            ``-`` starting with a letter or digit.
    """
    if not NAME_PATTERN.fullmatch(name):
        raise ExtensionError(f"/name: {name!r} cannot be installed: an extension's name "
                             "must be 1 to 128 letters, digits, '.', '_' or '-', starting "
                             "with a letter or digit", where=where)


def invalid_message(report: ValidationReport) -> str:
    """The errors of an invalid extension, one per line, with their pointers."""
    lines = [problem.describe() for problem in report.errors]
    return "the extension is not valid:\n  " + "\n  ".join(lines)


def manifest_json(manifest: Manifest) -> dict[str, Any]:
    """A manifest as stored in the ``extensions`` row."""
    return manifest.model_dump(mode="json", by_alias=True, exclude_none=True)


def record_installed(store: Store, *, name: str, version: str, source: str, folder: Path,
                     prints: Fingerprint, consent: dict[str, Any] | None,
                     manifest: dict[str, Any] | None, action: str) -> None:
    """Write an extension's row, its files and its consent in one transaction.

    Args:
        store: The store.
        name: The extension.
        version: Its version.
        source: Where it came from.
        folder: Its installed folder.
        prints: The fingerprint of the installed files.
        consent: What the person approved, bound to ``prints.digest``; None records
            the extension as never approved.
        manifest: The manifest JSON for the row.
        action: What happened, for the audit log (``extension.install``…).
    """
    with store.transaction():
        store.upsert_extension(name, version=version, source=source, path=str(folder),
                               digest=prints.digest, manifest=manifest)
        store.set_extension_files(name, ((f.path, f.sha256, f.size) for f in prints.files))
        if consent is None:
            store.remove_consent(name)
        else:
            store.record_consent(name, prints.digest, consent)
        store.audit("user", action, name, {"version": version, "source": source,
                                           "digest": prints.digest})


def _first_error(report: ValidationReport) -> str:
    first = report.errors[0].describe()
    more = len(report.errors) - 1
    return f"invalid manifest: {first}" + (f" (and {more} more)" if more else "")


def inspect_installed(name: str, folder: Path, row: dict[str, Any] | None,
                      consent: dict[str, Any] | None, recorded: dict[str, str],
                      checked: CheckedTexts | None = None) -> InstalledExtension:
    """Work out an installed extension's state from its folder and its records.

    Args:
        name: The extension (its folder's name).
        folder: Its folder under the extensions folder.
        row: Its ``extensions`` row, if recorded.
        consent: Its consent, if any.
        recorded: Its approved files (sha256 by path).
        checked: The manifest texts checked already (``ext/manifest_checks.py``).
    """
    row = row or {}
    source = str(row.get("source") or folder)
    enabled = bool(row.get("enabled", True))
    base = dict(name=name, source=source, path=folder, enabled=enabled,
                builtin=name == BUILTIN_NAME)
    stored_manifest = row.get("manifest") if isinstance(row.get("manifest"), dict) else {}
    display = str(stored_manifest.get("displayName") or name)
    version = str(row.get("version") or "")
    if not folder.is_dir():
        return InstalledExtension(**base, display_name=display, version=version, digest="",
                                  state="broken", reason="its folder is missing", tools=())
    report = validate_extension(folder, checked=checked)
    manifest = report.manifest
    prints = fingerprint(folder)
    check = compare(recorded, prints)
    version = version or read_version(folder)
    if manifest is None:
        return InstalledExtension(**base, display_name=display, version=version,
                                  digest=prints.digest, state="broken",
                                  reason=_first_error(report), tools=(), check=check)
    common = dict(base, display_name=manifest.display_name, version=version,
                  digest=prints.digest, tools=tuple(tool.name for tool in manifest.tools),
                  manifest=manifest, check=check)
    if manifest.name != name:
        return InstalledExtension(**common, state="broken",
                                  reason=f"its manifest names it {manifest.name!r}, but it is "
                                         f"installed as {name!r}")
    trust_hint = ("(workbench restores it from its signed copy at the next start)"
                  if name == BUILTIN_NAME else f"(run `workbench ext trust {name}`)")
    if consent is None:
        return InstalledExtension(**common, state="held",
                                  reason=f"never approved: it was not installed through "
                                         f"workbench {trust_hint}")
    if consent["digest"] != prints.digest:
        changed = check.paths()
        what = (f"files changed since you approved it: {', '.join(changed)}" if changed
                else "its files differ from what you approved")
        return InstalledExtension(**common, state="held", reason=f"{what} {trust_hint}")
    return InstalledExtension(**common, state="ok", reason="")
