"""Repairs at start: finish or undo changes a kill interrupted, reconcile folders and records.

An install, update or removal writes a journal into its staging folder before the
``rename`` that commits it. A staging folder left by a process that is gone is
read here:

- install or update, killed after the rename but before the store was written: the
  installed files match the journal's digest, so the records are written (the
  change is finished; the person had approved exactly these files);
- update killed between moving the old folder aside and renaming the new one in:
  the old folder (with its private database) is put back;
- removal killed after the folder was moved aside: its records are deleted;
- anything else (killed before the rename): nothing was changed.

The staging folder is then deleted. Finally the extensions folder and the records
are compared: a record whose folder is gone is forgotten; a valid folder with no
record (put there by hand) is recorded as never approved, so it is listed as held
until the person trusts it.

This module imports nothing of ours but the config, manifest and store packages and
``workbench.ext``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.config.home import Home
from workbench.ext.discovery import extension_folders
from workbench.ext.fingerprint import fingerprint
from workbench.ext.installed import NAME_PATTERN, manifest_json, record_installed
from workbench.ext.plan import DEFAULT_VERSION, read_version
from workbench.ext.staging import StagingArea, move_runtime_files, read_journal
from workbench.manifest.validate import validate_extension
from workbench.store import Store


@dataclass(frozen=True)
class Repair:
    """One thing a start repaired.

    Attributes:
        name: The extension concerned (empty for a bare leftover folder).
        action: ``finished``, ``restored``, ``removed``, ``forgot``, ``recorded``,
            ``cleaned``, or ``failed`` (dropping what was kept elsewhere for a removed
            extension failed).
        message: What was done, for a person.
    """

    name: str
    action: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "action": self.action, "message": self.message}


def _replay(home: Home, store: Store, stage: Path, journal: dict[str, Any]) -> Repair | None:
    action, name = journal.get("action"), journal.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        return None
    target = home.extensions_dir / name
    if action == "remove":
        if not target.exists() and store.get_extension(name) is not None:
            with store.transaction():
                store.remove_extension(name)
                store.audit("workbench", "extension.remove", name, {"recovered": True})
            return Repair(name, "removed", f"finished removing {name}, which an interrupted "
                                           "run had half removed")
        return None
    if action not in ("install", "update"):
        return None
    aside, pkg = stage / "old", stage / "pkg"
    if action == "update" and aside.is_dir() and not target.exists():
        if pkg.is_dir():
            move_runtime_files(pkg, aside)
        os.rename(aside, target)
        previous = journal.get("previous_version") or "the previous version"
        return Repair(name, "restored", f"put back {name} {previous}: an update was "
                                        "interrupted before the new version was in place")
    if not target.is_dir() or not isinstance(journal.get("digest"), str):
        return None
    prints = fingerprint(target)
    if prints.digest != journal["digest"]:
        return None
    row, consent = store.get_extension(name), store.get_consent(name)
    if (row is not None and row.get("digest") == prints.digest and consent is not None
            and consent["digest"] == prints.digest):
        return None
    consent_json = journal.get("consent") if isinstance(journal.get("consent"), dict) else None
    record_installed(store, name=name, version=str(journal.get("version") or DEFAULT_VERSION),
                     source=str(journal.get("source") or target), folder=target, prints=prints,
                     consent=consent_json,
                     manifest=journal.get("manifest") if isinstance(journal.get("manifest"),
                                                                    dict) else None,
                     action=f"extension.{action}")
    verb = "installing" if action == "install" else "updating"
    return Repair(name, "finished", f"finished {verb} {name}: its files were in place when "
                                    "the run was interrupted, its record was not")


def _reconcile(home: Home, store: Store) -> list[Repair]:
    repairs: list[Repair] = []
    folders = {folder.name: folder for folder in extension_folders(home.extensions_dir)}
    for row in store.list_extensions():
        name = row["name"]
        if name not in folders and not (home.extensions_dir / name).exists():
            with store.transaction():
                store.remove_extension(name)
                store.audit("workbench", "extension.forget", name, {"reason": "folder missing"})
            repairs.append(Repair(name, "forgot", f"forgot {name}: its folder "
                                                  f"{home.extensions_dir / name} is gone"))
    recorded = {row["name"] for row in store.list_extensions()}
    for name, folder in folders.items():
        if name in recorded or not NAME_PATTERN.fullmatch(name):
            continue
        manifest = validate_extension(folder).manifest
        if manifest is None or manifest.name != name:
            continue  # listed as broken; nothing to record
        record_installed(store, name=name, version=read_version(folder), source=str(folder),
                         folder=folder, prints=fingerprint(folder), consent=None,
                         manifest=manifest_json(manifest), action="extension.found")
        repairs.append(Repair(name, "recorded",
                              f"found {name} in {home.extensions_dir}, not installed through "
                              f"workbench; it is held until you run `workbench ext trust {name}`"))
    return repairs


def recover(home: Home, store: Store, staging: StagingArea) -> list[Repair]:
    """Repair what interrupted runs left; the caller holds the extensions lock.

    Returns:
        One entry per repair made.
    """
    repairs: list[Repair] = []
    for stage in staging.leftovers():
        journal = read_journal(stage)
        repair = _replay(home, store, stage, journal) if journal else None
        staging.discard(stage)
        repairs.append(repair or Repair("", "cleaned", f"deleted {stage}, left by an "
                                                        "interrupted run"))
    repairs += _reconcile(home, store)
    return repairs
