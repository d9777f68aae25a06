"""Committing a staged change to the extensions folder and the store, or undoing it.

A change is committed by one ``rename`` (the commit point), after a journal saying
what is being done has been written durably into the staging folder; the store
records the extension, its files and its consent in one transaction right after.
Any failure in this process undoes the rename; a kill is finished or undone at the
next start by :mod:`workbench.ext.recovery`, which reads the journal. Updates keep
the old folder aside until the new one is recorded, and carry the extension's
private database over.

The extension's dependency folders (resolved into the staging folder, see
:mod:`workbench.ext.dependencies`) are moved into ``<home>/cache`` just before the
rename, and back with it on failure; the journal names them (``deps``) so a start
can put back the ones a kill left half swapped. A removal moves them out with the
extension's folder.

This module imports nothing of ours but the config and store packages and
``workbench.ext``.
"""

from __future__ import annotations

import os
import signal
from contextlib import AbstractContextManager
from pathlib import Path

from workbench.config.home import Home
from workbench.ext.dependencies import CacheSwap
from workbench.ext.errors import ExtensionError
from workbench.ext.fingerprint import fingerprint
from workbench.ext.installed import manifest_json, record_installed
from workbench.ext.plan import InstallPlan
from workbench.ext.staging import (
    StagingArea,
    exclusive_lock,
    fsync_dir,
    move_runtime_files,
    write_journal,
)
from workbench.store import Store

CRASH_ENV = "WORKBENCH_TEST_CRASH_AT"
"""Tests only: the name of a commit step at which the process kills itself with
SIGKILL, to prove that a kill at that moment leaves no half-installed extension.
The steps are ``before-commit``, ``after-deps`` (the dependency folders are in
place, the extension's folder not yet), ``after-rename``, ``after-store``,
``update-aside`` and ``remove-aside``."""


def crash_point(step: str) -> None:
    """Kill this process at ``step`` when the tests ask for it (see :data:`CRASH_ENV`)."""
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


class Committer:
    """Puts staged extensions in place and records them, holding the extensions lock.

    Args:
        home: The workbench home.
        store: Its store.
        staging: Its staging area.
    """

    def __init__(self, home: Home, store: Store, staging: StagingArea) -> None:
        self.home = home
        self.store = store
        self.staging = staging
        self.lock_path = home.root / "extensions.lock"

    def lock(self) -> AbstractContextManager[None]:
        """The lock that serializes changes to the extensions folder between processes."""
        return exclusive_lock(self.lock_path)

    def folder_of(self, name: str) -> Path:
        return self.home.extensions_dir / name

    def refuse_existing(self, name: str) -> None:
        """Refuse to install over an extension of the same name."""
        if self.store.get_extension(name) is not None or self.folder_of(name).exists():
            raise ExtensionError(f"{name} is already installed; run `workbench ext update "
                                 f"{name}` to install a new version")

    def _journal(self, stage: Path, action: str, plan: InstallPlan, **extra: object) -> None:
        write_journal(stage, {
            "action": action, "name": plan.name, "version": plan.version,
            "source": plan.source, "digest": plan.digest, "consent": plan.consent,
            "manifest": manifest_json(plan.manifest) if plan.manifest else None, **extra})

    def _record(self, plan: InstallPlan, target: Path, action: str) -> None:
        prints = fingerprint(target)
        if prints.digest != plan.digest:
            raise ExtensionError("its files changed between approval and installation; "
                                 "nothing was changed", where=str(target))
        record_installed(self.store, name=plan.name, version=plan.version, source=plan.source,
                         folder=target, prints=prints, consent=plan.consent,
                         manifest=manifest_json(plan.manifest) if plan.manifest else None,
                         action=action)

    def install(self, plan: InstallPlan, stage: Path, action: str) -> None:
        """Rename a staged extension into place and record it.

        Raises:
            ExtensionError: The name got installed meanwhile, or the files changed
                since the plan; nothing was changed.
        """
        target = self.folder_of(plan.name)
        with self.lock():
            self.refuse_existing(plan.name)
            caches = CacheSwap(self.home.cache_dir, plan.name, stage)
            self._journal(stage, "install", plan, deps=caches.staged())
            crash_point("before-commit")
            caches.apply()
            crash_point("after-deps")
            try:
                os.rename(plan.folder, target)
            except BaseException:
                caches.undo()
                raise
            fsync_dir(target.parent)
            crash_point("after-rename")
            try:
                self._record(plan, target, action)
            except BaseException:
                os.rename(target, plan.folder)
                caches.undo()
                raise
            caches.finish()
            crash_point("after-store")

    def swap(self, plan: InstallPlan, stage: Path, action: str,
             previous_version: str | None) -> None:
        """Put a staged version in place of the installed one, keeping its private
        database; on any failure the old folder is put back."""
        target = self.folder_of(plan.name)
        aside = stage / "old"
        with self.lock():
            caches = CacheSwap(self.home.cache_dir, plan.name, stage)
            self._journal(stage, "update", plan, previous_version=previous_version,
                          deps=caches.staged())
            crash_point("before-commit")
            had_old = target.is_dir()
            if had_old:
                os.rename(target, aside)
                crash_point("update-aside")
                move_runtime_files(aside, plan.folder)

            def restore() -> None:
                if had_old:
                    move_runtime_files(plan.folder, aside)
                    os.rename(aside, target)

            try:
                caches.apply()
            except BaseException:
                restore()
                raise
            crash_point("after-deps")
            try:
                os.rename(plan.folder, target)
            except BaseException:
                caches.undo()
                restore()
                raise
            fsync_dir(target.parent)
            crash_point("after-rename")
            try:
                self._record(plan, target, action)
            except BaseException:
                os.rename(target, plan.folder)
                caches.undo()
                restore()
                raise
            caches.finish()
            crash_point("after-store")

    def remove(self, name: str) -> None:
        """Move an extension's folder out (the commit point), then its dependency
        folders, and delete its records.

        Raises:
            ExtensionError: It is not installed.
        """
        target = self.folder_of(name)
        with self.lock():
            if self.store.get_extension(name) is None and not target.exists():
                raise ExtensionError(f"{name} is not installed")
            stage = self.staging.new()
            moved = False
            caches = CacheSwap(self.home.cache_dir, name, stage)
            try:
                write_journal(stage, {"action": "remove", "name": name})
                if target.exists():
                    os.rename(target, stage / "old")
                    moved = True
                    fsync_dir(target.parent)
                caches.apply()
                crash_point("remove-aside")
                with self.store.transaction():
                    self.store.remove_extension(name)
                    self.store.audit("user", "extension.remove", name)
            except BaseException:
                caches.undo()
                if moved:
                    os.rename(stage / "old", target)
                raise
            finally:
                self.staging.discard(stage)
            caches.finish()
