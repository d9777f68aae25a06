"""Change sets: what a shell command changed in a project folder, applied as one change,
with the files' earlier contents kept (bounded) so the person can undo it.

Tables ``change_sets``, ``change_files`` and ``change_blobs`` (``m012``), which also hold
the changes an extension's tool made outside the project's files (kind ``outside``,
``m017``); a chat's shell
network, ``session_shell`` (``m012``) and the hosts allowed for it, ``session_shell_hosts``
(``m013``). A blob is
kept once per content (its SHA-256) and dropped once no change file names it. This
module must not import anything above the store.
"""

from __future__ import annotations

from typing import Any

from workbench.store.db import StoreBase, now_ms

FILE_COLUMNS = ("seq", "path", "action", "kind", "before_kind", "before_mode", "before_target",
                "before_blob", "before_kept", "after_mode", "after_identity", "copy", "note")


class ChangesMixin(StoreBase):
    """Queries on ``change_sets``, ``change_files`` and ``change_blobs``."""

    def begin_change_set(self, *, session_id: str | None, folder: str, command: str) -> int:
        """Open a change set (state ``applying``) before its files are applied; its id
        names the copies a conflict makes."""
        with self.transaction():
            cursor = self._execute(
                "INSERT INTO change_sets (session_id, folder, command, created_at, state) "
                "VALUES (?, ?, ?, ?, 'applying')", (session_id, folder, command, self.clock()))
        return int(cursor.lastrowid or 0)

    def finish_change_set(self, change_set: int, *, files: list[dict[str, Any]],
                          blobs: dict[str, bytes], note: str = "") -> None:
        """Record what the change set applied: its files (``FILE_COLUMNS``) and the blobs
        of their earlier contents, in one transaction; a change set with no file is
        removed."""
        with self.transaction():
            if not files:
                self._execute("DELETE FROM change_sets WHERE id = ?", (change_set,))
                return
            kept = 0
            for sha, data in blobs.items():
                kept += len(data)
                self._execute("INSERT OR IGNORE INTO change_blobs (sha256, size, data) VALUES (?, ?, ?)",
                              (sha, len(data), data))
            self._db.conn.executemany(
                f"INSERT INTO change_files (change_set, {', '.join(FILE_COLUMNS)}) VALUES "
                f"(?, {', '.join('?' for _ in FILE_COLUMNS)})",
                [(change_set, *(row.get(column) for column in FILE_COLUMNS)) for row in files])
            self._execute("UPDATE change_sets SET state = 'applied', kept_bytes = ?, note = ? "
                          "WHERE id = ?", (kept, note, change_set))

    def change_sets(self, *, session_id: str | None = None, limit: int | None = 50) -> list[dict[str, Any]]:
        """The change sets, newest first (of one chat when ``session_id`` is given), each
        with ``files`` (how many paths it changed)."""
        where, params = ("WHERE c.session_id = ?", (session_id,)) if session_id else ("", ())
        sql = ("SELECT c.*, (SELECT COUNT(*) FROM change_files f WHERE f.change_set = c.id) AS files "
               f"FROM change_sets c {where} ORDER BY c.id DESC")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return self._all(sql, params)

    def change_set(self, change_set: int) -> dict[str, Any] | None:
        """One change set with its ``files`` (in the order they were applied), or None."""
        found = self._one("SELECT * FROM change_sets WHERE id = ?", (change_set,))
        if found is None:
            return None
        found["files"] = self._all(
            f"SELECT {', '.join(FILE_COLUMNS)} FROM change_files WHERE change_set = ? ORDER BY seq",
            (change_set,))
        return found

    def record_outside_change(self, *, session_id: str | None, extension: str, call_id: str,
                              summary: str, undo_tool: str, undo_arguments: str) -> int:
        """Record a change an extension's tool made outside the project's files (kind
        ``outside``, state ``applied``), with the person-only tool (``EXTENSION.TOOL``)
        and its arguments (JSON text) that undo it; returns its id in the change list."""
        with self.transaction():
            cursor = self._execute(
                "INSERT INTO change_sets (session_id, folder, command, created_at, state, kind, "
                "extension, call_id, undo_tool, undo_arguments) "
                "VALUES (?, '', ?, ?, 'applied', 'outside', ?, ?, ?, ?)",
                (session_id, summary, self.clock(), extension, call_id, undo_tool, undo_arguments))
        return int(cursor.lastrowid or 0)

    def newer_outside_changes(self, extension: str, change_set: int) -> list[int]:
        """The changes of ``extension`` after ``change_set`` that are not undone, newest first."""
        return [int(row["id"]) for row in self._all(
            "SELECT id FROM change_sets WHERE kind = 'outside' AND extension = ? AND id > ? "
            "AND state = 'applied' ORDER BY id DESC", (extension, change_set))]

    def change_blob(self, sha256: str) -> bytes | None:
        row = self._one("SELECT data FROM change_blobs WHERE sha256 = ?", (sha256,))
        return None if row is None else bytes(row["data"])

    def mark_change_set(self, change_set: int, state: str, note: str) -> None:
        """Record that a change set was undone (``undone``, or ``partly undone``)."""
        with self.transaction():
            self._execute("UPDATE change_sets SET state = ?, undone_at = ?, note = ? WHERE id = ?",
                          (state, self.clock(), note, change_set))

    def kept_change_bytes(self) -> int:
        """Bytes of earlier contents every change set keeps together."""
        row = self._one("SELECT COALESCE(SUM(kept_bytes), 0) AS n FROM change_sets")
        return int(row["n"]) if row else 0

    def drop_change_contents(self, change_set: int, note: str) -> None:
        """Forget a change set's earlier contents (it cannot be undone any more) and the
        blobs no other change file names."""
        with self.transaction():
            self._execute("UPDATE change_files SET before_kept = 0 WHERE change_set = ? "
                          "AND before_blob IS NOT NULL", (change_set,))
            self._execute("UPDATE change_sets SET kept_bytes = 0, note = ? WHERE id = ?",
                          (note, change_set))
            self._execute("DELETE FROM change_blobs WHERE sha256 NOT IN (SELECT before_blob FROM "
                          "change_files WHERE before_blob IS NOT NULL AND before_kept = 1)")

    def oldest_kept_change_sets(self) -> list[int]:
        """The change sets that still keep contents, oldest first."""
        return [int(row["id"]) for row in self._all(
            "SELECT id FROM change_sets WHERE kept_bytes > 0 ORDER BY id")]

    def session_network(self, session_id: str) -> str | None:
        """A chat's own choice of the shell's network, or None when it follows the setting."""
        row = self._one("SELECT network FROM session_shell WHERE session_id = ?", (session_id,))
        return None if row is None else str(row["network"])

    def set_session_network(self, session_id: str, network: str | None) -> None:
        """Record a chat's choice of the shell's network (None: follow the setting)."""
        with self.transaction():
            if network is None:
                self._execute("DELETE FROM session_shell WHERE session_id = ?", (session_id,))
            else:
                self._execute("INSERT INTO session_shell (session_id, network) VALUES (?, ?) "
                              "ON CONFLICT (session_id) DO UPDATE SET network = excluded.network",
                              (session_id, network))

    def session_hosts(self, session_id: str) -> set[str]:
        """The hosts the person allowed the shell to reach for the rest of a chat
        (``Allow for this chat`` on its network card)."""
        return {str(row["host"]) for row in self._all(
            "SELECT host FROM session_shell_hosts WHERE session_id = ?", (session_id,))}

    def allow_session_host(self, session_id: str, host: str) -> None:
        """Record that the shell may reach ``host`` for the rest of the chat (nothing
        when there is no such chat: the answer then holds for the call alone)."""
        with self.transaction():
            self._execute("INSERT OR IGNORE INTO session_shell_hosts (session_id, host, allowed_at) "
                          "SELECT id, ?, ? FROM sessions WHERE id = ?", (host, now_ms(), session_id))
