"""One turn at a time per session, and sessions made whole after a crash.

A turn holds its session's lease (``session_leases``): a row naming the turn (a token),
its owner (pid and process start, ``owners.py``) and what holds it (``workbench run``,
the TUI). Taking it is one ``INSERT`` that fails while another row is there, so two
processes never both hold it; a lease whose owner is gone is expired, and whoever
looks next deletes it (only that very row, by its token) and may take it.

Settling a session (``settle_session``, under its lease) makes it one a model accepts
again: the running calls of a dead owner are ``interrupted``, and every call its
assistant messages asked for without an answer gets a tool message — the recorded
outcome when the call ended before its process died, else a result saying it was
interrupted. ``settle_after_crash`` does that wherever a process died: for the calls
of dead owners and the sessions of expired leases.

This module must not import anything above the store.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from workbench.errors import StoreError
from workbench.store.db import StoreBase
from workbench.store.owners import owner_alive, this_process

_LEASE_COLUMNS = "session_id, token, owner_pid, owner_start, holder, taken_at"


def interrupted_result(message: str) -> dict[str, Any]:
    """The result a call that never finished gets, as the model reads results."""
    return {"ok": False, "error": {"kind": "interrupted", "message": message}}


class LeasesMixin(StoreBase):
    """Queries on ``session_leases``, and the settling of sessions a crash left open."""

    def take_lease(self, session_id: str, token: str, holder: str) -> dict[str, Any] | None:
        """Take the lease of ``session_id`` for the turn ``token``, held by this process.

        Args:
            session_id: The session's full id.
            token: Names the turn (another turn of this same process has another).
            holder: What holds it, for the person another process tells (``workbench run``).

        Returns:
            None when the lease is now ours (or was already); else the live lease that
            holds it: ``session_id``, ``token``, ``owner_pid``, ``owner_start``,
            ``holder``, ``taken_at``.

        Raises:
            StoreError: No such session.
        """
        me = this_process()
        while True:
            current = self.lease(session_id, live_only=False)
            if current is not None:
                if current["token"] == token:
                    return None
                if owner_alive(current["owner_pid"], current["owner_start"]):
                    return current
                self._expire(current)  # its owner is gone
                continue
            try:
                with self.transaction():
                    inserted = self._execute(
                        f"INSERT INTO session_leases ({_LEASE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (session_id) DO NOTHING",
                        (session_id, token, me.pid, me.start, holder, self.clock())).rowcount
            except sqlite3.IntegrityError:
                raise StoreError(f"no session {session_id!r}") from None
            if inserted:
                return None
            # Taken by another since it was read: look again.

    def release_lease(self, session_id: str, token: str) -> bool:
        """Let the lease go, if the turn ``token`` holds it; returns whether it did."""
        with self.transaction():
            return self._execute("DELETE FROM session_leases WHERE session_id = ? AND token = ?",
                                 (session_id, token)).rowcount > 0

    def lease(self, session_id: str, *, live_only: bool = True) -> dict[str, Any] | None:
        """The lease of ``session_id``: None when nobody holds it (or, with ``live_only``,
        when its owner is gone)."""
        row = self._one(f"SELECT {_LEASE_COLUMNS} FROM session_leases WHERE session_id = ?",
                        (session_id,))
        if row is None or (live_only and not owner_alive(row["owner_pid"], row["owner_start"])):
            return None
        return row

    def _expire(self, lease: dict[str, Any]) -> bool:
        """Delete the lease of a dead owner — that very row, not one taken since."""
        with self.transaction():
            return self._execute("DELETE FROM session_leases WHERE session_id = ? AND token = ?",
                                 (lease["session_id"], lease["token"])).rowcount > 0

    def settle_session(self, session_id: str) -> list[dict[str, Any]]:
        """Make the session one a model accepts; call it holding its lease.

        The running calls of the session whose owner is gone are settled
        ``interrupted``; each call an assistant message asked for that has no tool
        message gets one (our id and the model's): its recorded outcome when it has
        one, else an ``interrupted`` error saying the call may or may not have taken
        effect. The messages are added in one transaction, after the last one.

        Returns:
            The tool messages added, as ``{"call_id", "model_call_id", "name", "result"}``.
        """
        self.settle_interrupted_calls(session_id)
        added: list[dict[str, Any]] = []
        with self.transaction():
            for call in self.unanswered_calls(session_id):
                record = None
                if call["call_id"]:
                    record = self.get_tool_call(call["call_id"])
                if record is None:
                    record = self._call_of_message(call["message_id"], call["model_call_id"])
                result = _result_of(record)
                self.add_message(session_id, "tool", content=json.dumps(result, ensure_ascii=False),
                                 tool_call_id=call["model_call_id"], name=call["name"],
                                 call_id=record["id"] if record else call["call_id"])
                added.append({"call_id": record["id"] if record else call["call_id"],
                              "model_call_id": call["model_call_id"], "name": call["name"],
                              "result": result})
            # Every call is answered now: the next settling reads only what comes after.
            self._execute("UPDATE sessions SET settled_seq = (SELECT coalesce(max(seq), 0) "
                          "FROM messages WHERE session_id = ?) WHERE id = ?", (session_id, session_id))
        return added

    def _call_of_message(self, message_id: int, model_call_id: str) -> dict[str, Any] | None:
        row = self._one("SELECT id FROM tool_calls WHERE message_id = ? AND model_call_id = ?",
                        (message_id, model_call_id))
        return None if row is None else self.get_tool_call(row["id"])

    def settle_after_crash(self) -> list[str]:
        """Settle what processes that died left open: their running calls everywhere,
        and, for the sessions of those calls and of leases whose owner is gone, the
        calls without a result (``settle_session``, under the lease taken for it; a
        session another live turn holds is left to it: it settled it when it began).

        Returns:
            The ids of the sessions settled.
        """
        sessions = {call["session_id"] for call in self.settle_interrupted_calls()
                    if call["session_id"]}
        for lease in self._all(f"SELECT {_LEASE_COLUMNS} FROM session_leases"):
            if not owner_alive(lease["owner_pid"], lease["owner_start"]) and self._expire(lease):
                sessions.add(lease["session_id"])
        settled = []
        token = f"settle-{this_process().pid}-{id(self):x}"
        for session_id in sorted(sessions):
            if self.take_lease(session_id, token, "settling after a crash") is not None:
                continue
            try:
                self.settle_session(session_id)
            finally:
                self.release_lease(session_id, token)
            settled.append(session_id)
        return settled


def _result_of(record: dict[str, Any] | None) -> dict[str, Any]:
    """What the model is told of a call whose result message was never written."""
    if record is None:
        return interrupted_result("the call was interrupted: the turn that asked for it stopped "
                                  "before it ran or before its record was kept; it may or may "
                                  "not have taken effect")
    if record["status"] == "ok":
        return {"ok": True, "result": record["result"]}
    if record["status"] == "running":  # an owner alive outside any turn of this session
        return interrupted_result("the call did not finish within its turn; its result is not "
                                  "known")
    error = record["error"] if isinstance(record["error"], dict) else {
        "kind": record["status"], "message": str(record["error"] or record["status"])}
    return {"ok": False, "error": error}
