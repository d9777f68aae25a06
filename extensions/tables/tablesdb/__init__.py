"""Tables: typed databases in SQLite files, changed through previews, receipts and undo.

Plain Python over ``sqlite3`` (no workbench import): the add-on's tools in
``main.py`` call ``Tables``; tests call it in-process. Modules: ``files`` (where a
database lives and how it opens), ``catalog`` (its name, revision, tables and
columns), ``values`` (labels and typed values), ``ops`` (each change and its
inverse), ``query`` (filters, sorts, pages, aggregates), ``changes`` (previews,
applies, receipts, proposals, undo) and ``export`` (CSV).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tablesdb import catalog, changes, export, files, query, values
from tablesdb.errors import TablesError, invalid
from tablesdb.ops import OPERATIONS, ROW_ACTIONS

__all__ = ["Tables", "TablesError", "OPERATIONS", "ROW_ACTIONS", "SCHEMA_ACTIONS"]

SCHEMA_ACTIONS = frozenset(OPERATIONS) - ROW_ACTIONS
CREATE_UNDO = "deletes the database (only while nothing touched it since)"


def _read(conn, work: Callable[[], Any]) -> Any:
    """Run ``work`` in one read transaction: one snapshot of one revision."""
    files.restart_clock(conn)
    conn.execute("BEGIN")
    try:
        return work()
    except sqlite3.Error as exc:
        raise changes._translate(exc) from None
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


class Tables:
    """The databases of one data folder."""

    def __init__(self, root: str | Path, *, max_bytes: int = files.MAX_BYTES) -> None:
        self.folder = files.Folder(root, max_bytes=max_bytes)

    # --- databases -------------------------------------------------------------------

    def create(self, name: Any, resource_id: str | None = None, *, now: float | None = None,
               step: Callable[[str], None] = files._no_step) -> dict[str, Any]:
        """Create a database; the same ``resource_id`` twice is one creation. ``step`` is
        told each step done (``files.CREATE_STEPS``)."""
        name = values.database_name(name)
        resource_id = files.check_id(resource_id) if resource_id is not None else "db-" + secrets.token_hex(6)
        now = time.time() if now is None else now
        operation_id = "create-" + resource_id
        change_id = "ch-" + secrets.token_hex(8)

        def init(conn) -> None:
            catalog.init(conn, name)
            receipt = {"operationId": operation_id, "resourceId": resource_id, "action": "databases-create",
                       "summary": f"created the database {name}", "changeId": change_id, "undoable": True,
                       "undo": CREATE_UNDO, "revision": {"schema": 0, "data": 0}}
            conn.execute("INSERT INTO tables_changes VALUES (?, 1, ?, 'databases-create', 'schema', ?, ?, 0, 0, 0, 0, "
                         "?, 0, NULL, ?, 'applied', NULL, NULL)",
                         (change_id, operation_id, receipt["summary"], CREATE_UNDO,
                          json.dumps({"op": "delete-database", "name": name}), now))
            conn.execute("INSERT INTO tables_receipts VALUES (?, ?, ?, ?)",
                         (operation_id, changes.request_hash("databases-create", {"name": name}),
                          json.dumps(receipt), now))

        if not self.folder.build(resource_id, init, step):
            with self.folder.connect(resource_id) as conn:
                found = changes.replay(conn, operation_id, changes.request_hash("databases-create", {"name": name}))
            if found is None:
                raise TablesError("conflict", f"database {resource_id} exists already")
            return found
        return {"operationId": operation_id, "resourceId": resource_id, "action": "databases-create",
                "summary": f"created the database {name}", "changeId": change_id, "undoable": True,
                "undo": CREATE_UNDO, "revision": {"schema": 0, "data": 0}}

    def exists(self, resource_id: str) -> bool:
        return self.folder.exists(resource_id)

    def list(self) -> dict[str, Any]:
        """The databases, ordered by id, at most 100."""
        ids = self.folder.ids()
        found = []
        for resource_id in ids[:100]:
            try:
                with self.folder.connect(resource_id) as conn:
                    found.append({"resourceId": resource_id, "name": catalog.meta(conn, "name"), "role": "owner"})
            except Exception:
                found.append({"resourceId": resource_id, "role": "owner"})
        return {"databases": found, "truncated": len(ids) > 100}

    def inspect(self, resource_id: str) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return _read(conn, lambda: catalog.describe(conn, resource_id))

    def delete(self, resource_id: str, *, step: Callable[[str], None] = files._no_step) -> dict[str, Any]:
        """Remove the database and its journal files (the person's action); the same
        answer however often it is asked. ``step`` is told each step done
        (``files.DELETE_STEPS``)."""
        removed = self.folder.remove(resource_id, step)
        return {"resourceId": resource_id, "deleted": True, "removedNow": removed}

    # --- reads -----------------------------------------------------------------------

    def query(self, resource_id: str, args: dict[str, Any]) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return _read(conn, lambda: query.rows_query(conn, args))

    def aggregate(self, resource_id: str, args: dict[str, Any]) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return _read(conn, lambda: query.rows_aggregate(conn, args))

    def export(self, resource_id: str, args: dict[str, Any]) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return _read(conn, lambda: export.rows_export(conn, args, self.folder.exports))

    # --- changes --------------------------------------------------------------------

    def _action(self, action: str) -> str:
        if action not in OPERATIONS:
            raise invalid(f"unknown change {action!r}")
        return action

    def preview(self, resource_id: str, action: str, args: dict[str, Any],
                revision: dict[str, int] | None = None) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return changes.preview(conn, self._action(action), args, revision)

    def apply(self, resource_id: str, action: str, args: dict[str, Any], *, operation_id: str | None = None,
              revision: dict[str, int] | None = None, now: float | None = None, **hooks: Any) -> dict[str, Any]:
        operation_id = operation_id or "op-" + secrets.token_hex(12)
        with self.folder.connect(resource_id) as conn:
            return changes.apply(conn, resource_id, self._action(action), args, operation_id=operation_id,
                                 revision=revision, now=now, **hooks)

    def propose(self, resource_id: str, action: str, args: dict[str, Any], *, consumer: str,
                revision: dict[str, int] | None = None, now: float | None = None) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return changes.propose(conn, self._action(action), args, consumer=consumer, revision=revision,
                                   now=now) | {
                "resourceId": resource_id, "name": catalog.meta(conn, "name")}

    def proposal(self, resource_id: str, proposal_id: Any, *, now: float | None = None) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return changes.proposal(conn, proposal_id, now=now) | {"resourceId": resource_id,
                                                                   "name": catalog.meta(conn, "name")}

    def proposals(self, *, now: float | None = None) -> list[dict[str, Any]]:
        """Every pending proposal of every database, newest first, at most 32."""
        found = []
        for resource_id in self.folder.ids():
            with self.folder.connect(resource_id) as conn:
                name = catalog.meta(conn, "name")
                found += [p | {"resourceId": resource_id, "name": name} for p in changes.proposals(conn, now=now)]
        found.sort(key=lambda p: p["createdAt"], reverse=True)
        return found[:32]

    def confirm(self, resource_id: str, proposal_id: Any, digest: Any, *, now: float | None = None) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return changes.confirm(conn, resource_id, proposal_id, digest, now=now)

    def cancel(self, resource_id: str, proposal_id: Any) -> dict[str, Any]:
        with self.folder.connect(resource_id) as conn:
            return changes.cancel(conn, proposal_id)

    # --- undo -----------------------------------------------------------------------------

    def changes(self, resource_id: str | None = None, *, now: float | None = None) -> list[dict[str, Any]]:
        """The change list, newest first: of one database, or of all of them."""
        ids = [resource_id] if resource_id is not None else self.folder.ids()
        found: list[dict[str, Any]] = []
        for rid in ids:
            with self.folder.connect(rid) as conn:
                found += changes.change_list(conn, rid, now=now)
        found.sort(key=lambda c: c["createdAt"], reverse=True)
        return found

    def undo(self, resource_id: str, change_id: Any, *, operation_id: str | None = None,
             now: float | None = None) -> dict[str, Any]:
        if not isinstance(change_id, str):
            raise invalid("changeId must be a string")
        with self.folder.connect(resource_id) as conn:
            row = conn.execute("SELECT action, state FROM tables_changes WHERE id = ?", (change_id,)).fetchone()
            if row is None or row[0] != "databases-create":
                return changes.undo(conn, resource_id, change_id, operation_id=operation_id, now=now)
            # Untouched since: still at its first revision, or back at it through undos
            # (every later change undone), under the name it was created with.
            standing = conn.execute("SELECT count(*) FROM tables_changes WHERE action != 'databases-create' "
                                    "AND state != 'undone'").fetchone()[0]
            fresh = catalog.revision(conn) == {"schema": 0, "data": 0} or catalog.meta(conn, "equivalent") == "0,0"
            named = catalog.meta(conn, "name") == json.loads(conn.execute(
                "SELECT coalesce(inverse, '{}') FROM tables_changes WHERE id = ?", (change_id,)).fetchone()[0]).get("name")
            if row[1] != "applied" or standing or not fresh or not named:
                raise TablesError("stale", "the database was changed since it was created (undo those changes "
                                           "first); it is not deleted by an undo")
        self.folder.remove(resource_id)
        return {"operationId": operation_id or changes.undo_operation(change_id), "resourceId": resource_id,
                "action": "undo", "changeId": change_id, "summary": "undid: created the database (deleted it)"}
