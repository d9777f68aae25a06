"""Installed extensions: one row per extension name, with its manifest as JSON.

The files of an extension live under ``Home.extensions_dir``; this table says
which version is installed, from where, with which digest, and whether it is
enabled. Installing again updates the row and keeps ``installed_at``.

This module must not import anything above the store.
"""

from __future__ import annotations

from typing import Any

from workbench.store.db import StoreBase, dump_json, load_json

_COLUMNS = ("name, version, source, path, digest, enabled, installed_at, updated_at, "
            "manifest")


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    row["enabled"] = bool(row["enabled"])
    row["manifest"] = load_json(row["manifest"])
    return row


class ExtensionsMixin(StoreBase):
    """Queries on ``extensions``."""

    def upsert_extension(self, name: str, *, version: str | None = None,
                         source: str | None = None, path: str | None = None,
                         digest: str | None = None, enabled: bool | None = None,
                         manifest: Any = None) -> dict[str, Any]:
        """Record an installed extension, or update its record.

        Every field is replaced, except ``installed_at`` (kept from the first
        install) and ``enabled`` (kept when None; new records are enabled).

        Args:
            name: The extension's unique name.
            version: Its version string.
            source: Where it came from (a registry reference, a URL, ``builtin``, a path).
            path: The folder its files are in.
            digest: The digest of its files, e.g. ``sha256:...``.
            enabled: Whether it loads; None keeps the current setting.
            manifest: The parsed manifest, JSON-serializable.

        Returns:
            The extension's record as stored.
        """
        now = self.clock()
        with self.transaction():
            current = self._one("SELECT enabled, installed_at FROM extensions WHERE name = ?",
                                (name,))
            if current is None:
                on = True if enabled is None else enabled
                self._execute(
                    f"INSERT INTO extensions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (name, version, source, path, digest, int(on), now, now,
                     dump_json(manifest)))
            else:
                on = bool(current["enabled"]) if enabled is None else enabled
                self._execute(
                    "UPDATE extensions SET version = ?, source = ?, path = ?, digest = ?, "
                    "enabled = ?, updated_at = ?, manifest = ? WHERE name = ?",
                    (version, source, path, digest, int(on), now, dump_json(manifest), name))
            record = self.get_extension(name)
        assert record is not None
        return record

    def set_extension_enabled(self, name: str, enabled: bool) -> bool:
        """Turn an installed extension on or off.

        Returns:
            True when the extension is installed.
        """
        with self.transaction():
            cursor = self._execute(
                "UPDATE extensions SET enabled = ?, updated_at = ? WHERE name = ?",
                (int(enabled), self.clock(), name))
        return cursor.rowcount > 0

    def get_extension(self, name: str) -> dict[str, Any] | None:
        """One extension's record, with ``manifest`` decoded and ``enabled`` a bool."""
        row = self._one(f"SELECT {_COLUMNS} FROM extensions WHERE name = ?", (name,))
        return None if row is None else _decode(row)

    def list_extensions(self) -> list[dict[str, Any]]:
        """Every installed extension, by name."""
        return [_decode(row) for row in
                self._all(f"SELECT {_COLUMNS} FROM extensions ORDER BY name")]

    def remove_extension(self, name: str) -> bool:
        """Forget an extension (its files are the caller's to remove).

        Returns:
            True when it was recorded.
        """
        with self.transaction():
            cursor = self._execute("DELETE FROM extensions WHERE name = ?", (name,))
        return cursor.rowcount > 0
