"""The ``LoadRecord``: what the ``ExtensionManager`` reported while extensions loaded.

``host.loading.reload`` puts one between ``load_extensions`` and the manager, so the
status report can say what state each load error is in and what each extension ships
without checking every file again. This module imports nothing of ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class LoadRecord:
    """An ``ExtensionManager`` that remembers what it reported while extensions loaded.

    Loading asks the manager for the installed extensions (``list``) and the
    extension folders found (``discover``); the status report needs the same answers
    to say what state each load error is in and what each extension ships, and
    asking again would check every file again. Everything else goes to the manager.
    """

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.installed: list[Any] = []
        """``InstalledExtension``s, as ``list()`` returned them."""
        self.discovered: list[Any] = []
        """``DiscoveredExtension``s, as ``discover()`` returned them."""
        self._folders: dict[Path, tuple[Any, str | None]] | None = None

    def list(self) -> list[Any]:
        self.installed = self.manager.list()
        self._folders = None
        return self.installed

    def discover(self, project_dir: Path | None, **options: Any) -> list[Any]:
        self.discovered = self.manager.discover(project_dir, **options)
        self._folders = None
        return self.discovered

    def __getattr__(self, name: str) -> Any:
        return getattr(self.manager, name)

    def _by_folder(self) -> dict[Path, tuple[Any, str | None]]:
        """``folder -> (manifest, state)``; the state is ``held`` (a project extension
        not consented to as it is), ``broken``, ``untrusted`` (its project is not) or
        ``conflict`` (it takes an installed name) for a folder that may not run, else
        None. Installed entries win."""
        found: dict[Path, tuple[Any, str | None]] = {}
        for entry in self.discovered:
            state = None
            if entry.scope == "project" and not entry.runnable:
                state = ("broken" if not entry.valid else "conflict" if entry.conflict
                         else "untrusted" if not entry.trusted else "held")
            found[Path(entry.folder)] = (entry.manifest, state)
        for entry in self.installed:
            found[Path(entry.path)] = (entry.manifest, None if entry.state == "ok" else str(entry.state))
        return found

    def manifest_at(self, folder: Path) -> Any:
        """The manifest the manager read for ``folder``, or None."""
        return self._index().get(folder, (None, None))[0]

    def state_of(self, folder: Path) -> str | None:
        """``held``, ``broken`` or ``untrusted`` for a folder that may not run; None when
        it may, or the manager said nothing about it."""
        return self._index().get(folder, (None, None))[1]

    def _index(self) -> dict[Path, tuple[Any, str | None]]:
        if self._folders is None:
            self._folders = self._by_folder()
        return self._folders
