"""Permission grants, per tool: what a tool may do, for how long, or what it may never do.

A grant is ``(tool, kind, value)`` with a scope: ``once`` (used up by one call),
``session`` (for one session), ``always``, or ``deny``. ``always`` and ``deny`` are
one lasting decision per tool, kind and value: recording one replaces the other.
The meaning of ``kind`` and ``value`` belongs to the permissions package; this
module only stores them.

This module must not import anything above the store.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import StoreError
from workbench.store.db import StoreBase, now_ms

SCOPES = frozenset({"once", "session", "always", "deny"})
"""The scopes a grant may have."""

LASTING = ("always", "deny")

_COLUMNS = "id, tool, kind, value, scope, session_id, created_at, resolved, device, inode"


class GrantsMixin(StoreBase):
    """Queries on ``grants``."""

    def add_grant(self, tool: str, kind: str, value: str, scope: str,
                  session_id: str | None = None,
                  pin: tuple[str, int, int] | None = None) -> int:
        """Record a grant (or a denial).

        Recording the same lasting or session grant again returns the existing id
        (with ``pin``, when given, recorded on it).
        An ``always`` replaces a ``deny`` for the same tool, kind and value, and
        the other way round.

        Args:
            tool: The tool's full name.
            kind: What the grant is about, e.g. ``read``, ``net``, ``env``.
            value: What exactly, e.g. a path template or ``host:port``.
            scope: ``once``, ``session``, ``always`` or ``deny``.
            session_id: The session, required for ``session`` grants.
            pin: For a path: ``(resolved, device, inode)`` of what it was when granted.

        Returns:
            The grant's id.

        Raises:
            ValueError: On an unknown scope, or a ``session`` grant without a session.
            StoreError: When the session does not exist.
        """
        if scope not in SCOPES:
            raise ValueError(f"unknown grant scope {scope!r}; expected one of {sorted(SCOPES)}")
        if scope == "session" and session_id is None:
            raise ValueError("a session grant needs a session_id")
        with self.transaction():
            if session_id is not None and not self._one(
                    "SELECT 1 AS found FROM sessions WHERE id = ?", (session_id,)):
                raise StoreError(f"no session {session_id!r}")
            existing = self._existing(tool, kind, value, scope, session_id)
            if existing is not None:
                if pin is not None:
                    self.pin_grant(existing, *pin)
                return existing
            if scope in LASTING:
                self._execute(
                    "DELETE FROM grants WHERE tool = ? AND kind = ? AND value = ? "
                    "AND scope IN ('always', 'deny')", (tool, kind, value))
            resolved, device, inode = pin if pin is not None else (None, None, None)
            cursor = self._execute(
                "INSERT INTO grants (tool, kind, value, scope, session_id, created_at, "
                "resolved, device, inode) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (tool, kind, value, scope, session_id, self.clock(), resolved, device, inode))
            return int(cursor.lastrowid)

    def pin_grant(self, grant_id: int, resolved: str, device: int, inode: int) -> None:
        """Record what a granted path is: the path it resolves to, its device and inode."""
        with self.transaction():
            self._execute("UPDATE grants SET resolved = ?, device = ?, inode = ? WHERE id = ?",
                          (resolved, int(device), int(inode), grant_id))

    def _existing(self, tool: str, kind: str, value: str, scope: str,
                  session_id: str | None) -> int | None:
        if scope == "once":
            return None
        if scope == "session":
            row = self._one("SELECT id FROM grants WHERE tool = ? AND kind = ? AND value = ? "
                            "AND scope = 'session' AND session_id = ?",
                            (tool, kind, value, session_id))
        else:
            row = self._one("SELECT id FROM grants WHERE tool = ? AND kind = ? AND value = ? "
                            "AND scope = ?", (tool, kind, value, scope))
        return None if row is None else int(row["id"])

    def list_grants(self, tool: str | None = None, *,
                    session_id: str | None = None) -> list[dict[str, Any]]:
        """Grants, oldest first.

        Args:
            tool: Only this tool's grants; every tool's when None.
            session_id: When given, ``session`` grants of other sessions are left out
                (grants of every other scope are kept).
        """
        conditions, params = [], []
        if tool is not None:
            conditions.append("tool = ?")
            params.append(tool)
        if session_id is not None:
            conditions.append("(scope <> 'session' OR session_id = ?)")
            params.append(session_id)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        return self._all(f"SELECT {_COLUMNS} FROM grants {where} ORDER BY id", tuple(params))

    def use_grant(self, grant_id: int) -> bool:
        """Use up a ``once`` grant; grants of other scopes stay.

        Returns:
            True when a ``once`` grant was removed.
        """
        with self.transaction():
            cursor = self._execute("DELETE FROM grants WHERE id = ? AND scope = 'once'",
                                   (grant_id,))
        return cursor.rowcount > 0

    def add_declines(self, tool: str, entries: list[tuple[str, str]], session_id: str) -> None:
        """Keep optional entries ``(kind, value)`` of ``tool`` left out in a chat."""
        with self.transaction():
            for kind, value in entries:
                self._execute("INSERT OR REPLACE INTO session_declines "
                              "(session_id, tool, kind, value, created_at) VALUES (?, ?, ?, ?, ?)",
                              (session_id, tool, kind, value, now_ms()))

    def list_declines(self, tool: str) -> set[tuple[str, str, str]]:
        """``(kind, value, session_id)`` of every entry of ``tool`` left out in a chat."""
        return {(row["kind"], row["value"], row["session_id"]) for row in self._all(
            "SELECT kind, value, session_id FROM session_declines WHERE tool = ?", (tool,))}

    def remove_declines(self, tool: str, kind: str | None = None, value: str | None = None) -> int:
        """Drop the chats' declines of ``tool`` (of one kind, of one value)."""
        conditions, params = ["tool = ?"], [tool]
        if kind is not None:
            conditions.append("kind = ?")
            params.append(kind)
        if value is not None:
            conditions.append("value = ?")
            params.append(value)
        with self.transaction():
            cursor = self._execute(
                f"DELETE FROM session_declines WHERE {' AND '.join(conditions)}", tuple(params))
        return cursor.rowcount

    def revoke_grants(self, tool: str, kind: str | None = None, value: str | None = None) -> int:
        """Remove a tool's grants and denials, all of them or only some.

        Args:
            tool: The tool's full name.
            kind: Only grants of this kind, when given.
            value: Only grants with this value, when given.

        Returns:
            How many were removed.
        """
        conditions, params = ["tool = ?"], [tool]
        if kind is not None:
            conditions.append("kind = ?")
            params.append(kind)
        if value is not None:
            conditions.append("value = ?")
            params.append(value)
        with self.transaction():
            cursor = self._execute(f"DELETE FROM grants WHERE {' AND '.join(conditions)}",
                                   tuple(params))
        return cursor.rowcount
