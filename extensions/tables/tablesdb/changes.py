"""Previews, applies, receipts, proposals and undo: the transactional core.

``apply`` runs one operation in a write transaction (``BEGIN IMMEDIATE``): it looks
up the operation's receipt first (the same request replays it; another request
under the same id is a conflict), compares the revision, runs the operation, raises
the revision, keeps the change set and writes the receipt — all in one commit. A
preview runs the same code and rolls back. A refused operation leaves no receipt.

Undo replays a change set's inverse while the database is still at the revision
the change produced — or at an undo that restored exactly that state, so a run of
changes unwinds newest first. Undo has no change set of its own (no redo).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from tablesdb import catalog, files
from tablesdb.errors import TablesError
from tablesdb.ops import OPERATIONS, Effect, apply_inverse

MAX_INVERSE = 4 * 1024 * 1024
MAX_INVERSES = 64 * 1024 * 1024
RETENTION_S = 7 * 24 * 3600
PROPOSAL_S = 24 * 3600
TOO_LARGE = "cannot be undone: the data it changed is too large to keep"


def request_hash(action: str, args: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps([action, args], sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _begin(conn: sqlite3.Connection) -> None:
    files.restart_clock(conn)
    conn.execute("BEGIN IMMEDIATE")


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _translate(exc: sqlite3.Error) -> TablesError:
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and "interrupted" in text:
        return TablesError("timeout", "the operation took longer than 10 s and was stopped; nothing changed")
    if "full" in text or "SQLITE_FULL" in text:
        return TablesError("capacity", "the database is at its size cap (1 GiB); nothing changed")
    if "locked" in text or "busy" in text:
        return TablesError("timeout", "the database is busy with another change; try again")
    return TablesError("invalid", f"the database refused the change: {text}")


def replay(conn: sqlite3.Connection, operation_id: str, digest: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT request_hash, receipt FROM tables_receipts WHERE operation_id = ?",
                       (operation_id,)).fetchone()
    if row is None:
        return None
    if row[0] != digest:
        raise TablesError("conflict", f"operation {operation_id} was used for another request")
    return json.loads(row[1]) | {"replayed": True}


def _check_revision(conn: sqlite3.Connection, expected: dict[str, int] | None) -> dict[str, int]:
    current = catalog.revision(conn)
    if expected is not None and (expected.get("schema"), expected.get("data")) != (current["schema"], current["data"]):
        raise TablesError("stale", "the database changed since it was read; read it again and send the "
                                   "change once more", revision=current)
    return current


def preview(conn: sqlite3.Connection, action: str, args: dict[str, Any],
            revision: dict[str, int] | None = None) -> dict[str, Any]:
    """What ``action`` would do, from a run rolled back: exact count, sample,
    ``affectedHash``, data lost, and the revision it was made against."""
    _begin(conn)
    try:
        current = _check_revision(conn, revision)
        effect = OPERATIONS[action](conn, args)
        return _preview_of(action, effect, current)
    except sqlite3.Error as exc:
        raise _translate(exc) from None
    finally:
        _rollback(conn)


def _preview_of(action: str, effect: Effect, current: dict[str, int]) -> dict[str, Any]:
    shown: dict[str, Any] = {"action": action, "summary": effect.summary, "count": effect.count,
                             "sample": effect.sample, "affectedHash": effect.affected_hash, "revision": current}
    if effect.data_loss is not None:
        shown["dataLoss"] = effect.data_loss
    return shown


def apply(conn: sqlite3.Connection, resource_id: str, action: str, args: dict[str, Any], *,
          operation_id: str, revision: dict[str, int] | None = None, affected_hash: str | None = None,
          before_commit: Callable[[sqlite3.Connection, dict[str, Any]], None] | None = None,
          now: float | None = None) -> dict[str, Any]:
    """Apply ``action`` once under ``operation_id``; the receipt."""
    digest = request_hash(action, args)
    now = time.time() if now is None else now
    _begin(conn)
    try:
        replayed = replay(conn, operation_id, digest)
        if replayed is not None:
            _rollback(conn)
            return replayed
        current = _check_revision(conn, revision)
        effect = OPERATIONS[action](conn, args)
        if affected_hash is not None and effect.affected_hash != affected_hash:
            raise TablesError("stale", "the change no longer touches the rows it was previewed on",
                              revision=current)
        after = dict(current)
        if effect.moves_revision:
            after[effect.kind] += 1
            catalog.set_meta(conn, effect.kind, str(after[effect.kind]))
            catalog.set_meta(conn, "equivalent", "")
        change_id, undoable, reason = _keep(conn, action, operation_id, effect, current, after, now)
        receipt = {"operationId": operation_id, "resourceId": resource_id, "action": action,
                   "summary": effect.summary, "count": effect.count, "ids": effect.ids,
                   "affectedHash": effect.affected_hash, "revision": after, "changeId": change_id,
                   "undoable": undoable, "undo": effect.undo if undoable else None, "reason": reason}
        conn.execute("INSERT INTO tables_receipts VALUES (?, ?, ?, ?)",
                     (operation_id, digest, json.dumps(receipt), now))
        if before_commit is not None:
            before_commit(conn, receipt)
        conn.execute("COMMIT")
        return receipt
    except sqlite3.Error as exc:
        _rollback(conn)
        raise _translate(exc) from None
    except BaseException:
        _rollback(conn)
        raise


def _keep(conn: sqlite3.Connection, action: str, operation_id: str, effect: Effect,
          before: dict[str, int], after: dict[str, int], now: float) -> tuple[str, bool, str | None]:
    """Store the change set (inverse within the bounds); drop expired and the oldest
    past 64 MiB."""
    change_id = "ch-" + secrets.token_hex(8)
    inverse = json.dumps(effect.inverse) if effect.inverse is not None else None
    size = len(inverse.encode()) if inverse is not None else 0
    reason = None
    if inverse is None or size > MAX_INVERSE:
        inverse, size, reason = None, 0, TOO_LARGE
    seq = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM tables_changes").fetchone()[0]
    conn.execute("INSERT INTO tables_changes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                 (change_id, seq, operation_id, action, effect.kind, effect.summary, effect.undo,
                  before["schema"], before["data"], after["schema"], after["data"], inverse, size, reason, now,
                  "applied" if inverse is not None else "kept-none"))
    conn.execute("UPDATE tables_changes SET inverse = NULL, size = 0, state = 'expired' "
                 "WHERE state = 'applied' AND created_at < ?", (now - RETENTION_S,))
    total = conn.execute("SELECT coalesce(sum(size), 0) FROM tables_changes").fetchone()[0]
    oldest = conn.execute("SELECT id, size FROM tables_changes WHERE inverse IS NOT NULL ORDER BY seq").fetchall() \
        if total > MAX_INVERSES else []
    for old_id, old_size in oldest:
        if total <= MAX_INVERSES:
            break
        conn.execute("UPDATE tables_changes SET inverse = NULL, size = 0, state = 'dropped', reason = ? "
                     "WHERE id = ?", ("cannot be undone any more: newer changes needed the room", old_id))
        total -= old_size
    undoable = conn.execute("SELECT inverse IS NOT NULL FROM tables_changes WHERE id = ?",
                            (change_id,)).fetchone()[0]
    return change_id, bool(undoable), reason if not undoable else None


# --- undo ---------------------------------------------------------------------------


def undo_operation(change_id: str) -> str:
    """The operation id of undoing ``change_id``: one undo however often it is asked."""
    return "undo-" + change_id


def undo(conn: sqlite3.Connection, resource_id: str, change_id: str, *, operation_id: str | None = None,
         now: float | None = None) -> dict[str, Any]:
    """Undo the change ``change_id`` (the person's action); its receipt."""
    operation_id = operation_id or undo_operation(change_id)
    digest = request_hash("undo", {"changeId": change_id})
    now = time.time() if now is None else now
    _begin(conn)
    try:
        replayed = replay(conn, operation_id, digest)
        if replayed is not None:
            _rollback(conn)
            return replayed
        row = conn.execute("SELECT seq, action, kind, summary, inverse, after_schema, after_data, before_schema, "
                           "before_data, created_at, state, reason FROM tables_changes WHERE id = ?",
                           (change_id,)).fetchone()
        if row is None:
            raise TablesError("unknown", f"this database has no change {change_id}")
        seq, action, kind, summary, inverse, after_s, after_d, before_s, before_d, created, state, reason = row
        if state == "undone":
            raise TablesError("already_undone", f"the change {change_id} ({summary}) is undone already")
        if state == "applied" and created < now - RETENTION_S:
            conn.execute("UPDATE tables_changes SET inverse = NULL, size = 0, state = 'expired' WHERE id = ?",
                         (change_id,))
            conn.execute("COMMIT")
            raise TablesError("expired", f"the change {change_id} is older than 7 days and cannot be undone")
        if state == "expired":
            raise TablesError("expired", f"the change {change_id} is older than 7 days and cannot be undone")
        if inverse is None:
            raise TablesError("not_undoable", f"the change {change_id} {reason or TOO_LARGE}")
        inverse_data = json.loads(inverse)
        current = catalog.revision(conn)
        if action == "databases-rename":
            if catalog.meta(conn, "name") != inverse_data["set"]:
                raise TablesError("stale", "the database was renamed again since; undo that first",
                                  revision=current)
        elif (current["schema"], current["data"]) != (after_s, after_d) and \
                catalog.meta(conn, "equivalent") != f"{after_s},{after_d}":
            later = [r[0] for r in conn.execute(
                "SELECT summary FROM tables_changes WHERE seq > ? AND action != 'databases-rename' "
                "ORDER BY seq DESC LIMIT 3", (seq,))]
            since = "; ".join(later) or "the database changed"
            raise TablesError("stale", f"the database changed after it ({since}): undo the later changes first",
                              revision=current)
        apply_inverse(conn, inverse_data)
        after = dict(current)
        if action != "databases-rename":
            after[kind] += 1
            catalog.set_meta(conn, kind, str(after[kind]))
            catalog.set_meta(conn, "equivalent", f"{before_s},{before_d}")
        conn.execute("UPDATE tables_changes SET state = 'undone', inverse = NULL, size = 0, undo_operation = ?, "
                     "undone_at = ? WHERE id = ?", (operation_id, now, change_id))
        receipt = {"operationId": operation_id, "resourceId": resource_id, "action": "undo",
                   "changeId": change_id, "summary": f"undid: {summary}", "revision": after}
        conn.execute("INSERT INTO tables_receipts VALUES (?, ?, ?, ?)",
                     (operation_id, digest, json.dumps(receipt), now))
        conn.execute("COMMIT")
        return receipt
    except sqlite3.Error as exc:
        _rollback(conn)
        raise _translate(exc) from None
    except BaseException:
        _rollback(conn)
        raise


def change_list(conn: sqlite3.Connection, resource_id: str, *, now: float | None = None,
                limit: int = 100) -> list[dict[str, Any]]:
    """The database's changes, newest first, each with whether it can be undone now."""
    now = time.time() if now is None else now
    current = catalog.revision(conn)
    equivalent = catalog.meta(conn, "equivalent")
    name = catalog.meta(conn, "name")
    found = []
    for row in conn.execute("SELECT id, action, summary, undo, after_schema, after_data, created_at, state, "
                            "reason, inverse IS NOT NULL, inverse FROM tables_changes ORDER BY seq DESC LIMIT ?",
                            (limit,)):
        change_id, action, summary, undo_text, after_s, after_d, created, state, reason, kept, inverse = row
        if state == "applied" and created < now - RETENTION_S:
            state = "expired"
        at_revision = (current["schema"], current["data"]) == (after_s, after_d) or equivalent == f"{after_s},{after_d}"
        if action == "databases-rename" and kept:
            at_revision = json.loads(inverse)["set"] == name
        found.append({"changeId": change_id, "resourceId": resource_id, "action": action, "summary": summary,
                      "undo": undo_text, "createdAt": created, "state": state,
                      "undoable": state == "applied" and bool(kept) and at_revision,
                      "reason": reason})
    return found


# --- proposals ------------------------------------------------------------------------


def propose(conn: sqlite3.Connection, action: str, args: dict[str, Any], *, consumer: str,
            revision: dict[str, int] | None = None, now: float | None = None) -> dict[str, Any]:
    """Preview ``action`` and store it as a proposal waiting for the person, in one
    transaction (the preview's changes rolled back to a savepoint); ``stale`` when
    ``revision`` is given and the database moved past it."""
    now = time.time() if now is None else now
    _begin(conn)
    try:
        current = _check_revision(conn, revision)
        conn.execute("SAVEPOINT preview")
        try:
            effect = OPERATIONS[action](conn, args)
            shown = _preview_of(action, effect, current)
        finally:
            conn.execute("ROLLBACK TO preview")
            conn.execute("RELEASE preview")
        proposal_id = "p-" + secrets.token_hex(8)
        operation_id = "op-" + secrets.token_hex(12)
        request = json.dumps({"action": action, "arguments": args}, sort_keys=True)
        digest = hashlib.sha256(json.dumps([proposal_id, request, shown], sort_keys=True).encode()).hexdigest()
        conn.execute("INSERT INTO tables_proposals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, ?, ?)",
                     (proposal_id, operation_id, action, request, json.dumps(shown), current["schema"],
                      current["data"], digest, consumer, now, now + PROPOSAL_S))
        conn.execute("COMMIT")
        return {"proposalId": proposal_id, "state": "pending", "preview": shown, "expiresAt": now + PROPOSAL_S}
    except sqlite3.Error as exc:
        _rollback(conn)
        raise _translate(exc) from None
    except BaseException:
        _rollback(conn)
        raise


def proposal(conn: sqlite3.Connection, proposal_id: Any, *, now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    if not isinstance(proposal_id, str):
        raise TablesError("invalid", "proposalId must be a string")
    row = conn.execute("SELECT id, action, request, preview, digest, consumer, state, reason, receipt, created_at, "
                       "expires_at, operation_id, schema_rev, data_rev FROM tables_proposals WHERE id = ?",
                       (proposal_id,)).fetchone()
    if row is None:
        raise TablesError("unknown", f"no proposal {proposal_id}")
    state = "expired" if row[6] == "pending" and row[10] < now else row[6]
    return {"proposalId": row[0], "action": row[1], "request": json.loads(row[2]), "preview": json.loads(row[3]),
            "digest": row[4], "consumer": row[5], "state": state, "reason": row[7],
            "receipt": json.loads(row[8]) if row[8] else None, "createdAt": row[9], "expiresAt": row[10],
            "operationId": row[11], "revision": {"schema": row[12], "data": row[13]}}


def proposals(conn: sqlite3.Connection, *, state: str | None = "pending", now: float | None = None,
              limit: int = 32) -> list[dict[str, Any]]:
    ids = [r[0] for r in conn.execute("SELECT id FROM tables_proposals ORDER BY created_at DESC, rowid DESC")]
    found = []
    for proposal_id in ids:
        item = proposal(conn, proposal_id, now=now)
        if state is None or item["state"] == state:
            found.append(item)
        if len(found) >= limit:
            break
    return found


def _settle(conn: sqlite3.Connection, proposal_id: str, state: str, reason: str | None,
            receipt: dict[str, Any] | None = None) -> None:
    conn.execute("UPDATE tables_proposals SET state = ?, reason = ?, receipt = ? WHERE id = ?",
                 (state, reason, json.dumps(receipt) if receipt else None, proposal_id))


def confirm(conn: sqlite3.Connection, resource_id: str, proposal_id: Any, digest: Any, *,
            now: float | None = None) -> dict[str, Any]:
    """Apply a pending proposal as the person confirmed it (``digest`` is the one its
    card showed); stale when the database moved since its preview."""
    now = time.time() if now is None else now
    item = proposal(conn, proposal_id, now=now)
    if item["state"] == "applied" and item["receipt"]:
        return item["receipt"] | {"replayed": True}
    if item["state"] != "pending":
        raise TablesError("invalid", f"proposal {proposal_id} is {item['state']}; nothing was changed")
    if digest != item["digest"]:
        raise TablesError("invalid", "the confirmation does not match the proposal as it was shown")
    request = item["request"]

    def mark(c: sqlite3.Connection, receipt: dict[str, Any]) -> None:
        c.execute("UPDATE tables_proposals SET state = 'applied', receipt = ? WHERE id = ? AND state = 'pending'",
                  (json.dumps(receipt), item["proposalId"]))

    try:
        return apply(conn, resource_id, request["action"], request["arguments"], operation_id=item["operationId"],
                     revision=item["revision"], affected_hash=item["preview"]["affectedHash"],
                     before_commit=mark, now=now)
    except TablesError as exc:
        if exc.kind in ("stale", "constraint", "invalid", "limit"):
            _settle(conn, item["proposalId"], "rejected" if exc.kind != "stale" else "stale", exc.message)
        raise


def cancel(conn: sqlite3.Connection, proposal_id: Any, *, now: float | None = None) -> dict[str, Any]:
    item = proposal(conn, proposal_id, now=now)
    if item["state"] != "pending":
        raise TablesError("invalid", f"proposal {proposal_id} is {item['state']}; it cannot be cancelled")
    _settle(conn, item["proposalId"], "cancelled", "cancelled by you")
    return {"proposalId": item["proposalId"], "state": "cancelled"}
