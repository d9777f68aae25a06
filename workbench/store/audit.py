"""The audit log: who did what to what, kept apart from chats so it outlives them.

Entries are only ever added; ``detail`` holds any JSON-serializable context.

This module must not import anything above the store.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from workbench.store.db import StoreBase, dump_json, load_json


def insert_audit(conn: sqlite3.Connection, at: int, actor: str, action: str,
                 subject: str | None, detail: Any) -> int:
    """Insert one entry on ``conn``, inside the caller's transaction; return its id."""
    cursor = conn.execute(
        "INSERT INTO audit_log (at, actor, action, subject, detail) VALUES (?, ?, ?, ?, ?)",
        (at, actor, action, subject, dump_json(detail)))
    return int(cursor.lastrowid)


class AuditMixin(StoreBase):
    """Queries on ``audit_log``."""

    def audit(self, actor: str, action: str, subject: str | None = None,
              detail: Any = None) -> int:
        """Add an entry to the audit log.

        Args:
            actor: Who acted: ``user``, ``model``, ``cli``, an extension's name.
            action: What happened, e.g. ``extension.install`` or ``grant.add``.
            subject: What it happened to, e.g. an extension or tool name.
            detail: More context, JSON-serializable.

        Returns:
            The entry's id.
        """
        with self.transaction():
            return self._add_audit(actor, action, subject, detail)

    def _add_audit(self, actor: str, action: str, subject: str | None, detail: Any) -> int:
        """Insert one entry inside the caller's transaction (see ``audit``)."""
        with self._lock:
            return insert_audit(self._db.conn, self.clock(), actor, action, subject, detail)

    def list_audit(self, limit: int | None = 100) -> list[dict[str, Any]]:
        """Audit entries, newest first, with ``detail`` decoded.

        Args:
            limit: At most this many; all when None.
        """
        rows = self._all("SELECT id, at, actor, action, subject, detail FROM audit_log "
                         "ORDER BY at DESC, id DESC LIMIT ?", (-1 if limit is None else limit,))
        for row in rows:
            row["detail"] = load_json(row["detail"])
        return rows

    def recent_audit(self, action: str, subject: str, limit: int = 10,
                     window: int = 20_000) -> list[dict[str, Any]]:
        """The newest entries of ``action`` about ``subject``, newest first, looked for
        among the last ``window`` entries only: a bounded read (a range of row ids),
        however long the log has grown.
        """
        rows = self._all("SELECT id, at, actor, action, subject, detail FROM audit_log "
                         "WHERE id > (SELECT coalesce(max(id), 0) FROM audit_log) - ? "
                         "AND action = ? AND subject = ? ORDER BY id DESC LIMIT ?",
                         (window, action, subject, limit))
        for row in rows:
            row["detail"] = load_json(row["detail"])
        return rows
