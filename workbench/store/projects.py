"""Project extensions' consents: what a person approved for an extension a project
keeps in ``.workbench/extensions``, bound to the digest of its files.

Rows are keyed by the extension's identity (``project:FOLDER``), never by its
manifest name. This module must not import anything above the store.
"""

from __future__ import annotations

from typing import Any

from workbench.store.db import StoreBase, dump_json, load_json


class ProjectExtensionsMixin(StoreBase):
    """Queries on ``project_extensions``."""

    def record_project_consent(self, identity: str, *, folder: str, name: str, digest: str,
                               files: dict[str, str], consent: Any) -> None:
        """Record (or replace) the consent to a project extension's current files."""
        with self.transaction():
            self._execute(
                "INSERT INTO project_extensions (identity, folder, name, digest, files, consent, "
                "approved_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (identity) DO UPDATE SET "
                "folder = excluded.folder, name = excluded.name, digest = excluded.digest, "
                "files = excluded.files, consent = excluded.consent, "
                "approved_at = excluded.approved_at",
                (identity, folder, name, digest, dump_json(files), dump_json(consent),
                 self.clock()))

    def get_project_consent(self, identity: str) -> dict[str, Any] | None:
        """The consent to a project extension (``files`` and ``consent`` decoded), or None."""
        row = self._one("SELECT identity, folder, name, digest, files, consent, approved_at "
                        "FROM project_extensions WHERE identity = ?", (identity,))
        if row is not None:
            row["files"] = load_json(row["files"]) or {}
            row["consent"] = load_json(row["consent"]) or {}
        return row

    def remove_project_consent(self, identity: str) -> bool:
        """Forget the consent to a project extension; True when there was one."""
        with self.transaction():
            cursor = self._execute("DELETE FROM project_extensions WHERE identity = ?",
                                   (identity,))
        return cursor.rowcount > 0

    def count_grants(self, holder: str) -> int:
        """How many grants and denials are kept under ``holder`` (a tool's key)."""
        row = self._one("SELECT COUNT(*) AS n FROM grants WHERE tool = ?", (holder,))
        return int(row["n"]) if row else 0

    def move_grants(self, old: str, new: str) -> int:
        """Keep ``old``'s grants, denials and per-chat declines under ``new`` instead
        (when an extension's data moves to its identity); returns how many grants moved."""
        with self.transaction():
            moved = self._execute("UPDATE grants SET tool = ? WHERE tool = ?",
                                  (new, old)).rowcount
            self._execute("UPDATE session_declines SET tool = ? WHERE tool = ?", (new, old))
        return moved

