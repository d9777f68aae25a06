"""Per-chat switches: a chat (its Tools menu) turns extensions, and single tools, off and on.

An extension with no row in a session follows its global setting (the ``enabled``
column of ``extensions``); a tool with no row follows its extension's switch in that
session. A row says what the chat chose; switching an extension clears the chat's
rows for that extension's tools, so they follow it again. Rows go with their session.
This module must not import anything above the store.
"""

from __future__ import annotations

from workbench.store.db import StoreBase


class SwitchesMixin(StoreBase):
    """Queries on ``session_extensions`` and ``session_tools``."""

    def set_session_extension(self, session_id: str, extension: str, enabled: bool) -> None:
        """Switch ``extension`` on or off in the session ``session_id`` (its full id); its
        tools' own switches in that session are cleared.

        Raises:
            sqlite3.IntegrityError: No session has that id.
        """
        with self.transaction():
            self._execute(
                "INSERT INTO session_extensions (session_id, extension, enabled, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id, extension) DO UPDATE SET "
                "enabled = excluded.enabled, updated_at = excluded.updated_at",
                (session_id, extension, int(enabled), self.clock()))
            self._execute("DELETE FROM session_tools WHERE session_id = ? AND extension = ?",
                          (session_id, extension))

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

    def set_session_tool(self, session_id: str, extension: str, tool: str, enabled: bool) -> None:
        """Switch the tool ``tool`` of ``extension`` on or off in the session ``session_id``
        (its full id), whatever its extension's switch there.

        Raises:
            sqlite3.IntegrityError: No session has that id.
        """
        with self.transaction():
            self._execute(
                "INSERT INTO session_tools (session_id, extension, tool, enabled, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, extension, tool) DO UPDATE SET "
                "enabled = excluded.enabled, updated_at = excluded.updated_at",
                (session_id, extension, tool, int(enabled), self.clock()))

    def session_switches(self, session_id: str) -> tuple[dict[str, bool], dict[tuple[str, str], bool]]:
        """Everything the session chose, read at once: by extension name, and by
        ``(extension, tool)``; True on, False off."""
        rows = self._all(
            "SELECT extension, NULL AS tool, enabled FROM session_extensions WHERE session_id = ? "
            "UNION ALL SELECT extension, tool, enabled FROM session_tools WHERE session_id = ? "
            "ORDER BY 1, 2", (session_id, session_id))
        extensions = {row["extension"]: bool(row["enabled"]) for row in rows if row["tool"] is None}
        tools = {(row["extension"], row["tool"]): bool(row["enabled"])
                 for row in rows if row["tool"] is not None}
        return extensions, tools
