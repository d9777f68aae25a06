"""The record of tool calls: started as ``running``, finished once with their outcome.

Arguments, results and errors are stored as JSON. A call's id is the id the model
(or caller) gave it, so a message's ``tool_call_id`` finds its record.

This module must not import anything above the store.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import StoreError
from workbench.store.db import StoreBase, dump_json, load_json

FINAL_STATUSES = frozenset({"ok", "error", "cancelled", "denied"})
"""The statuses a finished call may have; a call in progress is ``running``."""

_COLUMNS = ("id, session_id, tool, arguments, caller, status, result, error, "
            "started_at, ended_at")


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for column in ("arguments", "result", "error"):
        row[column] = load_json(row[column])
    return row


class ToolCallsMixin(StoreBase):
    """Queries on ``tool_calls``."""

    def start_tool_call(self, call_id: str, tool: str, arguments: Any, caller: str,
                        session_id: str | None = None) -> None:
        """Record that a tool call started.

        Args:
            call_id: The call's id, unique across the store.
            tool: The tool's full name.
            arguments: The arguments, JSON-serializable.
            caller: Who made the call: ``model``, ``user``, a workflow or extension name.
            session_id: The session it belongs to, if any.

        Raises:
            StoreError: When a call with this id exists, or the session does not.
        """
        with self.transaction():
            if self._one("SELECT 1 AS found FROM tool_calls WHERE id = ?", (call_id,)):
                raise StoreError(f"tool call {call_id!r} was already started")
            if session_id is not None and not self._one(
                    "SELECT 1 AS found FROM sessions WHERE id = ?", (session_id,)):
                raise StoreError(f"no session {session_id!r}")
            self._execute(
                f"INSERT INTO tool_calls ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, 'running', "
                "NULL, NULL, ?, NULL)",
                (call_id, session_id, tool, dump_json(arguments), caller, self.clock()))

    def finish_tool_call(self, call_id: str, status: str, result: Any = None,
                         error: Any = None) -> None:
        """Record how a running tool call ended.

        Args:
            call_id: The call's id.
            status: ``ok``, ``error``, ``cancelled`` or ``denied``.
            result: The result, JSON-serializable.
            error: The error, JSON-serializable (e.g. ``ToolError.to_json()``).

        Raises:
            ValueError: When ``status`` is not a final status.
            StoreError: When no running call has this id.
        """
        if status not in FINAL_STATUSES:
            raise ValueError(f"unknown final status {status!r}; "
                             f"expected one of {sorted(FINAL_STATUSES)}")
        with self.transaction():
            cursor = self._execute(
                "UPDATE tool_calls SET status = ?, result = ?, error = ?, ended_at = ? "
                "WHERE id = ? AND status = 'running'",
                (status, dump_json(result), dump_json(error), self.clock(), call_id))
            if cursor.rowcount == 0:
                found = self._one("SELECT status FROM tool_calls WHERE id = ?", (call_id,))
                if found is None:
                    raise StoreError(f"no tool call {call_id!r}")
                raise StoreError(f"tool call {call_id!r} already ended ({found['status']})")

    def get_tool_call(self, call_id: str) -> dict[str, Any] | None:
        """One tool call with its JSON columns decoded, or None."""
        row = self._one(f"SELECT {_COLUMNS} FROM tool_calls WHERE id = ?", (call_id,))
        return None if row is None else _decode(row)

    def list_tool_calls(self, session_id: str | None = None,
                        limit: int | None = None) -> list[dict[str, Any]]:
        """Tool calls, newest first, with JSON columns decoded.

        Args:
            session_id: Only this session's calls; every call when None.
            limit: At most this many; all when None.
        """
        where, params = ("WHERE session_id = ?", [session_id]) if session_id else ("", [])
        rows = self._all(
            f"SELECT {_COLUMNS} FROM tool_calls {where} "
            "ORDER BY started_at DESC, rowid DESC LIMIT ?",
            (*params, -1 if limit is None else limit))
        return [_decode(row) for row in rows]
