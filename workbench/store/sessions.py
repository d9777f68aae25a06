"""Chat sessions and their messages.

A session is found by its full id or by a unique prefix of at least
``MIN_PREFIX`` characters, so people can type the short form the CLI shows.
Messages are numbered per session (``seq`` from 1); adding one touches its
session in the same transaction.

This module must not import anything above the store.
"""

from __future__ import annotations

import uuid
from typing import Any

from workbench.errors import StoreError
from workbench.store.db import StoreBase, dump_json, load_json

MIN_PREFIX = 6
"""The shortest session id prefix accepted in place of the full id."""

ROLES = frozenset({"user", "assistant", "tool", "system"})
"""The roles a message may have."""

_SESSION_COLUMNS = """
    s.id, s.title, s.model, s.folder, s.created_at, s.updated_at,
    (SELECT coalesce(max(seq), 0) FROM messages m WHERE m.session_id = s.id) AS message_count
"""
"""A session's row; its ``message_count`` is its last ``seq`` (messages are only
appended, numbered from 1, and deleted only with their session), read from the
``(session_id, seq)`` index in the same time however long the chat."""


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


class SessionsMixin(StoreBase):
    """Queries on ``sessions`` and ``messages``."""

    def create_session(self, title: str | None = None, model: str | None = None,
                       folder: str | None = None) -> dict[str, Any]:
        """Start a new session.

        Args:
            title: A title to show; None until one is chosen.
            model: The model spec the session talks to.
            folder: The project folder the session works in.

        Returns:
            The session: ``id`` (32 hex characters), ``title``, ``model``, ``folder``,
            ``created_at``, ``updated_at`` and ``message_count``.
        """
        session_id = uuid.uuid4().hex
        now = self.clock()
        with self.transaction():
            self._execute(
                "INSERT INTO sessions (id, title, model, folder, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (session_id, title, model, folder, now, now))
        return {"id": session_id, "title": title, "model": model, "folder": folder,
                "created_at": now, "updated_at": now, "message_count": 0}

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """A session by its id or by a unique prefix of at least six characters.

        Args:
            session_id: The full id or a prefix of it.

        Returns:
            The session with its ``message_count``, or None when nothing matches.

        Raises:
            StoreError: When the prefix matches more than one session.
        """
        with self._lock:
            row = self._one(f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?",
                            (session_id,))
            if row is not None or len(session_id) < MIN_PREFIX:
                return row
            rows = self._all(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id LIKE ? ESCAPE '\\' "
                "LIMIT 2", (_like_prefix(session_id),))
        if len(rows) > 1:
            raise StoreError(f"session id prefix {session_id!r} matches more than one "
                             "session; type more of it")
        return rows[0] if rows else None

    def require_session(self, session_id: str) -> dict[str, Any]:
        """Like ``get_session``, but a missing session is an error.

        Raises:
            StoreError: When no session (or more than one) matches.
        """
        session = self.get_session(session_id)
        if session is None:
            raise StoreError(f"no session {session_id!r}")
        return session

    def list_sessions(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Sessions, most recently active first, each with its ``message_count`` (the
        hidden sessions of plugins' agent runs left out).

        Args:
            limit: At most this many; all when None.
        """
        return self._all(
            f"SELECT {_SESSION_COLUMNS} FROM sessions s "
            "WHERE NOT EXISTS (SELECT 1 FROM plugin_runs r WHERE r.session_id = s.id) "
            "ORDER BY s.updated_at DESC, s.created_at DESC, s.rowid DESC LIMIT ?",
            (-1 if limit is None else limit,))

    def touch_session(self, session_id: str) -> bool:
        """Mark a session as active now.

        Returns:
            True when the session exists.
        """
        with self.transaction():
            cursor = self._execute("UPDATE sessions SET updated_at = ? WHERE id = ?",
                                   (self.clock(), session_id))
        return cursor.rowcount > 0

    def rename_session(self, session_id: str, title: str | None) -> bool:
        """Give a session a new title (None clears it).

        Returns:
            True when the session exists.
        """
        with self.transaction():
            cursor = self._execute(
                "UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?",
                (title, self.clock(), session_id))
        return cursor.rowcount > 0

    def set_session_model(self, session_id: str, model: str | None) -> bool:
        """Keep ``model`` as the model spec of the session ``session_id`` (its full id);
        None: the session follows the default model.

        Returns:
            True when the session exists.
        """
        with self.transaction():
            cursor = self._execute("UPDATE sessions SET model = ? WHERE id = ?",
                                   (model, session_id))
        return cursor.rowcount > 0

    def set_session_folder(self, session_id: str, folder: str) -> bool:
        """Keep ``folder`` as the project folder of the session ``session_id`` (its full id).

        Returns:
            True when the session exists.
        """
        with self.transaction():
            cursor = self._execute("UPDATE sessions SET folder = ? WHERE id = ?",
                                   (folder, session_id))
        return cursor.rowcount > 0

    def delete_session(self, session_id: str) -> bool:
        """Delete a session with its messages, tool calls and session grants.

        Returns:
            True when the session existed.
        """
        with self.transaction():
            cursor = self._execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return cursor.rowcount > 0

    def add_message(self, session_id: str, role: str, content: str | None = None,
                    tool_calls: list[dict[str, Any]] | None = None,
                    tool_call_id: str | None = None, name: str | None = None,
                    call_id: str | None = None) -> int:
        """Append a message to a session and mark the session active.

        Args:
            session_id: The session's full id.
            role: ``user``, ``assistant``, ``tool`` or ``system``.
            content: The text.
            tool_calls: The tool calls an assistant message asks for (stored as JSON).
            tool_call_id: For a ``tool`` message, the model's id of the call it answers.
            name: For a ``tool`` message, the tool's name.
            call_id: For a ``tool`` message, our id of the call it answers (the key of
                its ``tool_calls`` record).

        Returns:
            The new message's id. Its ``seq`` is one more than the session's last.

        Raises:
            ValueError: When ``role`` is not one of the four.
            StoreError: When the session does not exist.
        """
        if role not in ROLES:
            raise ValueError(f"unknown message role {role!r}; expected one of {sorted(ROLES)}")
        now = self.clock()
        with self.transaction():
            touched = self._execute("UPDATE sessions SET updated_at = ? WHERE id = ?",
                                    (now, session_id))
            if touched.rowcount == 0:
                raise StoreError(f"no session {session_id!r}")
            cursor = self._execute(
                "INSERT INTO messages "
                "(session_id, seq, role, content, tool_calls, tool_call_id, name, call_id, "
                "created_at) "
                "VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?),"
                " ?, ?, ?, ?, ?, ?, ?)",
                (session_id, session_id, role, content, dump_json(tool_calls), tool_call_id,
                 name, call_id, now))
            return int(cursor.lastrowid)

    def list_messages(self, session_id: str) -> list[dict[str, Any]]:
        """A session's messages in order, with ``tool_calls`` decoded from JSON."""
        rows = self._all(
            "SELECT id, session_id, seq, role, content, tool_calls, tool_call_id, name, call_id, "
            "created_at FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
        for row in rows:
            row["tool_calls"] = load_json(row["tool_calls"])
        return rows

    def history_rows(self, session_id: str) -> list[tuple[str, str | None, str | None, str | None,
                                                          str | None, str | None]]:
        """A session's messages in order as ``(role, content, tool_calls, tool_call_id,
        name, call_id)`` tuples, ``tool_calls`` still JSON text.

        The turn loop rebuilds a session's history before every model step, so this
        reads only what a provider sees and builds no dict per row: about half the
        time of ``list_messages`` on a long session (``bench/agent.py``).
        """
        with self._lock:
            return self._db.conn.execute(
                "SELECT role, content, tool_calls, tool_call_id, name, call_id FROM messages "
                "WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()

    def history_rows_after(self, session_id: str, after_seq: int) -> list[tuple[Any, ...]]:
        """The messages of a session after its message ``after_seq``, in order, as
        ``(seq, id, role, content, tool_calls, tool_call_id, name, call_id)`` tuples:
        what a kept history lacks (messages are only ever appended; ``seq`` grows)."""
        with self._lock:
            return self._db.conn.execute(
                "SELECT seq, id, role, content, tool_calls, tool_call_id, name, call_id "
                "FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, after_seq)).fetchall()

    def message_id_at(self, session_id: str, seq: int) -> int | None:
        """The id of the session's message ``seq``; None when it has none (the session
        was deleted, or the message never saved)."""
        with self._lock:
            row = self._db.conn.execute("SELECT id FROM messages WHERE session_id = ? AND seq = ?",
                                        (session_id, seq)).fetchone()
        return None if row is None else int(row[0])

    def recent_messages(self, session_id: str, count: int) -> list[dict[str, Any]]:
        """The session's last ``count`` messages, oldest first, as ``list_messages``
        gives them (a read that does not grow with the session)."""
        rows = self._all(
            "SELECT id, session_id, seq, role, content, tool_calls, tool_call_id, name, call_id, "
            "created_at FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
            (session_id, count))
        for row in rows:
            row["tool_calls"] = load_json(row["tool_calls"])
        return rows[::-1]

    def last_user_message(self, session_id: str) -> str:
        """The text of a session's latest user message; empty when it has none."""
        row = self._one("SELECT content FROM messages WHERE session_id = ? AND role = 'user' "
                        "ORDER BY seq DESC LIMIT 1", (session_id,))
        return (row or {}).get("content") or ""

    def unanswered_calls(self, session_id: str) -> list[dict[str, Any]]:
        """The calls the session's assistant messages asked for that no tool message
        answers, in order: ``message_id``, ``model_call_id``, ``call_id`` (ours, when the
        message kept it), ``name``.

        A tool message answers the call it names by our id; one that names only the
        model's id answers the earliest unanswered call with that id.

        Only the messages after the session's ``settled_seq`` are read: every call up to
        there was answered when it was settled, so no later message can answer one of
        them, and a session's messages are only ever appended.
        """
        with self._lock:
            row = self._db.conn.execute("SELECT settled_seq FROM sessions WHERE id = ?",
                                        (session_id,)).fetchone()
            after = int(row[0]) if row else 0
            rows = self._db.conn.execute(
                "SELECT id, role, tool_calls, tool_call_id, call_id FROM messages "
                "WHERE session_id = ? AND seq > ? AND role IN ('assistant', 'tool') ORDER BY seq",
                (session_id, after)).fetchall()
        pending: list[dict[str, Any]] = []
        for message_id, role, calls_json, theirs, ours in rows:
            if role == "assistant":
                for call in load_json(calls_json) or ():
                    if isinstance(call, dict):
                        pending.append({"message_id": message_id,
                                        "model_call_id": str(call.get("id") or ""),
                                        "call_id": call.get("call_id"),
                                        "name": str(call.get("name") or "")})
            else:
                found = next((p for p in pending if ours and p["call_id"] == ours), None)
                if found is None:
                    found = next((p for p in pending if p["model_call_id"] == (theirs or "")
                                  and not (ours and p["call_id"])), None)
                if found is not None:
                    pending.remove(found)
        return pending


