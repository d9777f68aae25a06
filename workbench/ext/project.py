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

This module imports nothing of ours but the store package and ``workbench.ext``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.ext.fingerprint import FingerprintCheck, compare, fingerprint
from workbench.store import Store

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
