"""A project's own extensions (``.workbench/extensions/NAME``): their identity and
whether a person consented to the files as they are now.

Trusting a project (``workbench trust``) covers its ``.workbench/config.toml`` alone.
Each extension the project keeps is code of its own: it runs only once a person
consented to it (``workbench ext trust PATH``, the TUI's Extensions screen), for
its tools, their permissions with reasons and its hooks, bound to the digest of its
files, like an installed extension; when its files change it is held until
consented again.

Everything a project extension reaches through the host — its grants, its private
database, its dependency caches, the knowledge it ships — is kept under its
*identity*, ``project:FOLDER``, never under its manifest name, which the project's
author chooses. An installed extension's identity is its name: that namespace is
the home's, and a name enters it only through an install a person approved. A
project extension that takes the name of an installed one is not loaded (the
conflict is reported); it could not reach the installed one's data anyway.

What a project extension had under its bare name before (a private database
``databases/NAME.db``, grants kept under ``NAME.TOOL``) is carried over to its
identity when a person consents to it, the review saying so (:func:`kept_under_name`).

This module imports nothing of ours but the config, manifest and store packages and
``workbench.ext``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.config.home import Home, storage_name
from workbench.ext.fingerprint import FingerprintCheck, compare, fingerprint
from workbench.store import Store

if TYPE_CHECKING:
    from workbench.manifest.models import Manifest  # annotations only: the models load with a validation

PROJECT_PREFIX = "project:"
"""How a project extension's identity begins; no installed name can contain ``:``."""


def project_identity(folder: Path) -> str:
    """The identity of the project extension in ``folder`` (an absolute path)."""
    return f"{PROJECT_PREFIX}{folder}"


def is_project_identity(identity: str) -> bool:
    return identity.startswith(PROJECT_PREFIX)


def trust_command(folder: Path, project_dir: Path | None = None) -> str:
    """The command that consents to the project extension in ``folder``."""
    shown: Path | str = folder
    if project_dir is not None:
        try:
            shown = folder.relative_to(project_dir)
        except ValueError:
            shown = folder
    return f"workbench ext trust {shown}"


@dataclass(frozen=True)
class ProjectConsent:
    """How a project extension's files compare with what a person consented to.

    Attributes:
        identity: ``project:FOLDER``.
        consented: Whether its current files are the ones consented to.
        reason: Why it is held, for a person (empty when consented).
        check: Its files against the consented ones (None when never consented).
        consent: The consent JSON recorded, if any.
    """

    identity: str
    consented: bool
    reason: str
    check: FingerprintCheck | None
    consent: dict[str, Any] | None


def project_consent(store: Store, folder: Path, project_dir: Path | None = None) -> ProjectConsent:
    """Whether the person consented to the project extension in ``folder`` as it is now."""
    identity = project_identity(folder)
    row = store.get_project_consent(identity)
    hint = f"(run `{trust_command(folder, project_dir)}`)"
    if row is None:
        return ProjectConsent(identity, False, "a project extension you never consented to: "
                              f"its code does not run until you review it {hint}", None, None)
    check = compare(row["files"], fingerprint(folder))
    if check.digest != row["digest"]:
        changed = check.paths()
        what = (f"files changed since you consented to it: {', '.join(changed)}" if changed
                else "its files differ from what you consented to")
        return ProjectConsent(identity, False, f"{what} {hint}", check, row["consent"])
    return ProjectConsent(identity, True, "", check, row["consent"])


@dataclass(frozen=True)
class KeptUnderName:
    """What the home kept for a project extension under its bare name, before project
    extensions were kept by identity: carried over to its identity when a person
    consents to it (the review says so), so that nothing they had is lost.

    Attributes:
        database: Its private database files under the old name, and where each goes.
        grants: ``(old key, new key, how many)`` per holder with grants to move.
    """

    database: tuple[tuple[Path, Path], ...] = ()
    grants: tuple[tuple[str, str, int], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.database or self.grants)

    def describe(self, name: str) -> list[str]:
        """What moves, for the review."""
        lines = []
        if self.database:
            lines.append(f"its private database kept under the name {name!r} "
                         f"({self.database[0][0].name})")
        count = sum(n for _, _, n in self.grants)
        if count:
            lines.append(f"{count} grant{'s' if count != 1 else ''} kept under the name "
                         f"{name!r} ({', '.join(old for old, _, _ in self.grants)})")
        return lines


def kept_under_name(home: Home, store: Store, identity: str, manifest: Manifest) -> KeptUnderName:
    """What the home keeps under ``manifest.name`` that a project extension of that name
    had before (the caller has made sure no installed extension has the name), and that
    its identity does not hold yet."""
    name = manifest.name
    databases = home.root / "databases"
    moves = []
    old_db, new_db = databases / f"{name}.db", databases / f"{storage_name(identity, name)}.db"
    if old_db.is_file() and not old_db.is_symlink() and not new_db.exists():
        for suffix in ("", "-wal", "-shm", "-journal"):
            source = Path(f"{old_db}{suffix}")
            if source.is_file() and not source.is_symlink():
                moves.append((source, Path(f"{new_db}{suffix}")))
    holders = [(f"{name}.{tool.name}", f"{identity}.{tool.name}") for tool in manifest.tools]
    holders += [(f"hook:{name}", f"hook:{identity}")] if manifest.hooks else []
    holders += [(f"{p.type}:{name}/{p.name}", f"{p.type}:{identity}/{p.name}")
                for p in manifest.providers]
    grants = tuple((old, new, count) for old, new in holders
                   if (count := store.count_grants(old)) and not store.count_grants(new))
    return KeptUnderName(tuple(moves), grants)


def carry_over(store: Store, kept: KeptUnderName) -> None:
    """Move what was kept under the bare name to the identity (files first; they go back
    when the store refuses)."""
    done: list[tuple[Path, Path]] = []
    try:
        for source, target in kept.database:
            os.rename(source, target)
            done.append((source, target))
        with store.transaction():
            for old, new, _ in kept.grants:
                store.move_grants(old, new)
    except BaseException:
        for source, target in reversed(done):
            os.rename(target, source)
        raise
