"""Per-chat extension switches: a chat (its Tools menu) turns extensions off and on.

An extension with no row in a session follows its global setting (the ``enabled``
column of ``extensions``); a row says what the chat chose. Rows go with their
session. This module must not import anything above the store.
"""

from __future__ import annotations

from workbench.store.db import StoreBase


class SwitchesMixin(StoreBase):
    """Queries on ``session_extensions``."""

    def set_session_extension(self, session_id: str, extension: str, enabled: bool) -> None:
        """Switch ``extension`` on or off in the session ``session_id`` (its full id).

        Raises:
            sqlite3.IntegrityError: No session has that id.
        """
        with self.transaction():
            self._execute(
                "INSERT INTO session_extensions (session_id, extension, enabled, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id, extension) DO UPDATE SET "
                "enabled = excluded.enabled, updated_at = excluded.updated_at",
                (session_id, extension, int(enabled), self.clock()))

    def session_extensions(self, session_id: str) -> dict[str, bool]:
        """What the session chose, by extension name: True on, False off."""
        rows = self._all("SELECT extension, enabled FROM session_extensions "
                         "WHERE session_id = ? ORDER BY extension", (session_id,))
        return {row["extension"]: bool(row["enabled"]) for row in rows}

    def switched_off_extensions(self, session_id: str) -> set[str]:
        """The extensions the session switched off."""
        rows = self._all("SELECT extension FROM session_extensions "
                         "WHERE session_id = ? AND enabled = 0", (session_id,))
        return {row["extension"] for row in rows}
