"""The catalog inside each database file: its name, revision, tables and columns,
and the bookkeeping tables of receipts, change sets and proposals.

Every ``tables_*`` table here is ours; a person's tables are ``t_<hex>`` with
columns ``c_<hex>``, named only through this catalog.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from tablesdb.errors import TablesError
from tablesdb.values import ROW_ID, fold

DDL = """
CREATE TABLE tables_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE tables_tables (id TEXT PRIMARY KEY, label TEXT NOT NULL, position INTEGER NOT NULL) STRICT;
CREATE TABLE tables_columns (
  id TEXT PRIMARY KEY, table_id TEXT NOT NULL REFERENCES tables_tables(id) ON DELETE CASCADE,
  label TEXT NOT NULL, type TEXT NOT NULL, required INTEGER NOT NULL, uniq INTEGER NOT NULL,
  default_json TEXT, position INTEGER NOT NULL) STRICT;
CREATE TABLE tables_receipts (
  operation_id TEXT PRIMARY KEY, request_hash TEXT NOT NULL, receipt TEXT NOT NULL,
  created_at REAL NOT NULL) STRICT;
CREATE TABLE tables_changes (
  id TEXT PRIMARY KEY, seq INTEGER NOT NULL, operation_id TEXT NOT NULL, action TEXT NOT NULL,
  kind TEXT NOT NULL, summary TEXT NOT NULL, undo TEXT NOT NULL,
  before_schema INTEGER NOT NULL, before_data INTEGER NOT NULL,
  after_schema INTEGER NOT NULL, after_data INTEGER NOT NULL,
  inverse TEXT, size INTEGER NOT NULL, reason TEXT, created_at REAL NOT NULL,
  state TEXT NOT NULL, undo_operation TEXT, undone_at REAL) STRICT;
CREATE TABLE tables_proposals (
  id TEXT PRIMARY KEY, operation_id TEXT NOT NULL, action TEXT NOT NULL, request TEXT NOT NULL,
  preview TEXT NOT NULL, schema_rev INTEGER NOT NULL, data_rev INTEGER NOT NULL,
  digest TEXT NOT NULL, consumer TEXT NOT NULL, state TEXT NOT NULL, reason TEXT,
  receipt TEXT, created_at REAL NOT NULL, expires_at REAL NOT NULL) STRICT;
"""

MAX_TABLES = 50
MAX_COLUMNS = 64


@dataclass(frozen=True)
class Column:
    id: str
    label: str
    type: str
    required: bool
    unique: bool
    default: Any
    position: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "type": self.type, "required": self.required,
                "unique": self.unique, "default": _shown_default(self)}


def _shown_default(column: Column) -> Any:
    from tablesdb.values import out
    return out(column.type, column.default)


@dataclass
class Table:
    id: str
    label: str
    position: int
    columns: list[Column] = field(default_factory=list)

    def column(self, name: Any) -> Column:
        """The column labelled ``name`` (ignoring case); ``invalid`` naming it when none."""
        if isinstance(name, str):
            for column in self.columns:
                if fold(column.label) == fold(name):
                    return column
        raise TablesError("invalid", f"table {self.label!r} has no column {name!r}")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "columns": [c.to_json() for c in self.columns]}


def init(conn: sqlite3.Connection, name: str) -> None:
    conn.executescript(DDL)
    conn.executemany("INSERT INTO tables_meta VALUES (?, ?)",
                     [("name", name), ("schema", "0"), ("data", "0"), ("equivalent", "")])


def meta(conn: sqlite3.Connection, key: str) -> str:
    row = conn.execute("SELECT value FROM tables_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else ""


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO tables_meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 (key, value))


def revision(conn: sqlite3.Connection) -> dict[str, int]:
    return {"schema": int(meta(conn, "schema")), "data": int(meta(conn, "data"))}


def tables(conn: sqlite3.Connection) -> list[Table]:
    found = {row[0]: Table(row[0], row[1], row[2]) for row in
             conn.execute("SELECT id, label, position FROM tables_tables ORDER BY position")}
    for row in conn.execute("SELECT id, table_id, label, type, required, uniq, default_json, position "
                            "FROM tables_columns ORDER BY position"):
        default = json.loads(row[6]) if row[6] is not None else None
        found[row[1]].columns.append(Column(row[0], row[2], row[3], bool(row[4]), bool(row[5]),
                                            default, row[7]))
    return list(found.values())


def table(conn: sqlite3.Connection, name: Any) -> Table:
    """The table labelled ``name`` (ignoring case); ``invalid`` naming it when none."""
    if isinstance(name, str):
        for found in tables(conn):
            if fold(found.label) == fold(name):
                return found
    raise TablesError("invalid", f"this database has no table {name!r}")


def describe(conn: sqlite3.Connection, resource_id: str) -> dict[str, Any]:
    return {"resourceId": resource_id, "name": meta(conn, "name"), "revision": revision(conn),
            "tables": [t.to_json() for t in tables(conn)]}


def row_counter(conn: sqlite3.Connection, table_id: str) -> int:
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table_id,)).fetchone()
    return int(row[0]) if row else 0


def reserved(label: str) -> bool:
    return fold(label) == ROW_ID
