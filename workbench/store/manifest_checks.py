"""Manifest texts whose tools' parameters passed their JSON Schema check.

One row per text, by its sha256, with the seal ``workbench.ext.manifest_checks`` made
with the home's key; the store only keeps them (a row it cannot vouch for is the
caller's to refuse).

This module must not import anything above the store.
"""

from __future__ import annotations

from workbench.store.db import StoreBase, now_ms

KEPT_CHECKS = 256
"""The most rows kept; the ones checked longest ago go first."""


class ManifestChecksMixin(StoreBase):
    """Queries on ``manifest_checks``."""

    def manifest_check_seal(self, text_sha256: str) -> str | None:
        """The seal recorded for the manifest text of that sha256, or None."""
        row = self._one("SELECT seal FROM manifest_checks WHERE text_sha256 = ?", (text_sha256,))
        return None if row is None else str(row["seal"])

    def record_manifest_check(self, text_sha256: str, seal: str) -> None:
        """Record (or replace) the seal of a manifest text, keeping the newest
        ``KEPT_CHECKS`` rows."""
        with self.transaction():
            self._execute("INSERT INTO manifest_checks (text_sha256, seal, checked_at) "
                          "VALUES (?, ?, ?) ON CONFLICT (text_sha256) DO UPDATE SET "
                          "seal = excluded.seal, checked_at = excluded.checked_at",
                          (text_sha256, seal, now_ms()))
            self._execute("DELETE FROM manifest_checks WHERE text_sha256 NOT IN (SELECT "
                          "text_sha256 FROM manifest_checks ORDER BY checked_at DESC, "
                          "text_sha256 LIMIT ?)", (KEPT_CHECKS,))
