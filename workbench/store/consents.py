"""Installed extensions' files and consents: what was approved, bound to a digest.

``extension_files`` holds every file of an extension with its sha256 and size as
they were when the person last approved it; ``extension_consents`` holds what they
approved (each tool's permissions, hooks, the private database) and the digest of
the files it was approved for. Both go when the extension's row in ``extensions``
is deleted (``ON DELETE CASCADE``).

This module must not import anything above the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.store.db import StoreBase, dump_json, load_json


class ConsentsMixin(StoreBase):
    """Queries on ``extension_files`` and ``extension_consents``."""

    def set_extension_files(self, name: str, files: Iterable[tuple[str, str, int]]) -> int:
        """Replace the recorded files of an installed extension.

        Args:
            name: The extension; it must have a row in ``extensions``.
            files: ``(path, sha256, size)`` for every file.

        Returns:
            How many files were recorded.
        """
        rows = [(name, path, sha256, int(size)) for path, sha256, size in files]
        with self.transaction():
            self._execute("DELETE FROM extension_files WHERE extension = ?", (name,))
            with self._lock:
                self._db.conn.executemany(
                    "INSERT INTO extension_files (extension, path, sha256, size) "
                    "VALUES (?, ?, ?, ?)", rows)
        return len(rows)

    def extension_files(self, name: str) -> dict[str, str]:
        """The recorded files of an extension: sha256 by relative path."""
        return {row["path"]: row["sha256"] for row in self._all(
            "SELECT path, sha256 FROM extension_files WHERE extension = ? ORDER BY path",
            (name,))}

    def extension_file_rows(self, name: str) -> list[dict[str, Any]]:
        """The recorded files of an extension: ``path``, ``sha256``, ``size``, by path."""
        return self._all("SELECT path, sha256, size FROM extension_files "
                         "WHERE extension = ? ORDER BY path", (name,))

    def record_consent(self, name: str, digest: str, approved: Any) -> dict[str, Any]:
        """Record what the person approved for an extension, replacing earlier consent.

        Args:
            name: The extension; it must have a row in ``extensions``.
            digest: The digest of the files approved (``sha256:...``).
            approved: What was approved, JSON-serializable.

        Returns:
            The consent as stored.
        """
        with self.transaction():
            self._execute(
                "INSERT INTO extension_consents (extension, digest, approved, approved_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (extension) DO UPDATE SET "
                "digest = excluded.digest, approved = excluded.approved, "
                "approved_at = excluded.approved_at",
                (name, digest, dump_json(approved), self.clock()))
            consent = self.get_consent(name)
        assert consent is not None
        return consent

    def get_consent(self, name: str) -> dict[str, Any] | None:
        """The consent recorded for an extension (``approved`` decoded), or None."""
        row = self._one("SELECT extension, digest, approved, approved_at "
                        "FROM extension_consents WHERE extension = ?", (name,))
        if row is None:
            return None
        row["approved"] = load_json(row["approved"])
        return row

    def list_consents(self) -> dict[str, dict[str, Any]]:
        """Every recorded consent by extension name."""
        rows = self._all("SELECT extension, digest, approved, approved_at "
                         "FROM extension_consents")
        for row in rows:
            row["approved"] = load_json(row["approved"])
        return {row["extension"]: row for row in rows}

    def remove_consent(self, name: str) -> bool:
        """Withdraw an extension's consent (its files stay recorded).

        Returns:
            True when there was one.
        """
        with self.transaction():
            cursor = self._execute("DELETE FROM extension_consents WHERE extension = ?",
                                   (name,))
        return cursor.rowcount > 0
