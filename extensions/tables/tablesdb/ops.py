"""The changes themselves: each schema and row operation, and the inverse it keeps.

An operation takes an open transaction and the request's arguments, changes the
database and returns an ``Effect``: what it did (count, sample, affected ids, data
lost), a one-line summary, what an undo does, and the inverse — plain data the
undo replays (``apply_inverse``). Every identifier in SQL comes from the catalog
(``ident``); every value is a bound parameter, except a column's validated
default, written by the strict literal encoder of ``values``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from tablesdb import catalog, values
from tablesdb.catalog import MAX_COLUMNS, MAX_TABLES, Column, Table
from tablesdb.errors import TablesError, invalid
from tablesdb.values import ident

MAX_INSERT = 100
MAX_CHANGE = 1000
SAMPLE = 10


@dataclass
class Effect:
    kind: str
    """``schema`` or ``data``: which half of the revision the change raises."""
    summary: str
    undo: str
    inverse: dict[str, Any] | None
    count: int = 0
    ids: list[int] = field(default_factory=list)
    sample: list[Any] = field(default_factory=list)
    data_loss: dict[str, Any] | None = None
    moves_revision: bool = True

    @property
    def affected_hash(self) -> str:
        return hashlib.sha256(json.dumps(sorted(self.ids)).encode()).hexdigest()


def only(args: dict[str, Any], allowed: set[str], what: str) -> None:
    """Refuse a field ``args`` may not hold (unknown fields are never ignored)."""
    if not isinstance(args, dict):
        raise invalid(f"the arguments of {what} must be an object")
    extra = sorted(set(args) - allowed)
    if extra:
        raise invalid(f"{what} does not take {', '.join(map(repr, extra))}")


# --- DDL from the catalog ------------------------------------------------------


def _column_sql(column: Column) -> str:
    parts = [ident(column.id), values.SQL_TYPE[column.type]]
    if column.required:
        parts.append("NOT NULL")
    if column.default is not None:
        parts.append("DEFAULT " + values.literal(column.type, column.default))
    if column.type == "boolean":
        parts.append(f"CHECK ({ident(column.id)} IN (0, 1))")
    return " ".join(parts)


def _index(column: Column) -> str:
    return f'"{column.id}_u"'


def _create_table(conn: sqlite3.Connection, table_id: str, columns: list[Column]) -> None:
    body = ", ".join(["_id INTEGER PRIMARY KEY AUTOINCREMENT"] + [_column_sql(c) for c in columns])
    conn.execute(f"CREATE TABLE {ident(table_id)} ({body}) STRICT")
    for column in columns:
        if column.unique:
            conn.execute(f"CREATE UNIQUE INDEX {_index(column)} ON {ident(table_id)} ({ident(column.id)})")


def _set_counter(conn: sqlite3.Connection, table_id: str, counter: int) -> None:
    conn.execute("DELETE FROM sqlite_sequence WHERE name = ?", (table_id,))
    if counter:
        conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table_id, counter))


def _row_count(conn: sqlite3.Connection, table: Table) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {ident(table.id)}").fetchone()[0])


def _catalog_column(conn: sqlite3.Connection, table_id: str, column: Column) -> None:
    conn.execute("INSERT INTO tables_columns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (column.id, table_id, column.label, column.type, int(column.required),
                  int(column.unique), None if column.default is None else json.dumps(column.default),
                  column.position))


def _column_spec(spec: Any, table: Table | None, position: int, taken: list[str]) -> Column:
    """A new column from its request: label, type, required, unique, default."""
    where = f"column {spec.get('label')!r}" if isinstance(spec, dict) else "a column"
    if not isinstance(spec, dict):
        raise invalid("each column must be an object with label and type")
    only(spec, {"label", "type", "required", "unique", "default"}, where)
    label = values.label(spec.get("label"), "a column label")
    if catalog.reserved(label):
        raise invalid("no column may be labelled _id (it names the row ID)")
    if values.fold(label) in taken:
        raise invalid(f"a column labelled {label!r} exists already (labels ignore case)")
    kind = spec.get("type")
    if kind not in values.TYPES:
        raise invalid(f"column {label!r} has type {kind!r}; the types are {', '.join(values.TYPES)}")
    required, unique = spec.get("required", False), spec.get("unique", False)
    if not isinstance(required, bool) or not isinstance(unique, bool):
        raise invalid(f"required and unique of column {label!r} must be true or false")
    default = values.default(kind, spec.get("default"), f"the default of column {label!r}")
    return Column(values.new_id("c"), label, kind, required, unique, default, position)


# --- schema operations -------------------------------------------------------------


def tables_create(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "columns"}, "tables-create")
    label = values.label(args.get("table"), "a table label")
    existing = catalog.tables(conn)
    if len(existing) >= MAX_TABLES:
        raise TablesError("limit", f"a database holds at most {MAX_TABLES} tables")
    if any(values.fold(t.label) == values.fold(label) for t in existing):
        raise invalid(f"a table labelled {label!r} exists already (labels ignore case)")
    specs = args.get("columns", [])
    if not isinstance(specs, list) or len(specs) > MAX_COLUMNS:
        raise invalid(f"columns must be a list of at most {MAX_COLUMNS} columns")
    columns: list[Column] = []
    for position, spec in enumerate(specs):
        columns.append(_column_spec(spec, None, position, [values.fold(c.label) for c in columns]))
    table_id = values.new_id("t")
    position = max((t.position for t in existing), default=-1) + 1
    conn.execute("INSERT INTO tables_tables VALUES (?, ?, ?)", (table_id, label, position))
    for column in columns:
        _catalog_column(conn, table_id, column)
    _create_table(conn, table_id, columns)
    return Effect("schema", f"created table {label}", f"drops table {label}",
                  {"op": "drop-table", "table": table_id}, count=1)


def tables_rename(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "newName"}, "tables-rename")
    table = catalog.table(conn, args.get("table"))
    label = values.label(args.get("newName"), "the new table label")
    if any(values.fold(t.label) == values.fold(label) and t.id != table.id for t in catalog.tables(conn)):
        raise invalid(f"a table labelled {label!r} exists already (labels ignore case)")
    conn.execute("UPDATE tables_tables SET label = ? WHERE id = ?", (label, table.id))
    return Effect("schema", f"renamed table {table.label} to {label}", f"renames it back to {table.label}",
                  {"op": "rename-table", "table": table.id, "label": table.label}, count=1)


def _table_data(conn: sqlite3.Connection, table: Table) -> list[list[Any]]:
    cols = ", ".join(["_id"] + [ident(c.id) for c in table.columns])
    return [list(r) for r in conn.execute(f"SELECT {cols} FROM {ident(table.id)} ORDER BY _id")]


def tables_drop(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table"}, "tables-drop")
    table = catalog.table(conn, args.get("table"))
    rows = _table_data(conn, table)
    inverse = {"op": "restore-table", "table": table.to_json() | {"position": table.position},
               "columns": [_column_json(c) for c in table.columns], "rows": rows,
               "counter": catalog.row_counter(conn, table.id)}
    conn.execute(f"DROP TABLE {ident(table.id)}")
    conn.execute("DELETE FROM tables_tables WHERE id = ?", (table.id,))
    return Effect("schema", f"dropped table {table.label} ({len(rows)} rows)",
                  f"recreates table {table.label} with its {len(rows)} rows", inverse, count=1,
                  data_loss={"rowsLost": len(rows), "columnsLost": len(table.columns)})


def _column_json(column: Column) -> dict[str, Any]:
    return {"id": column.id, "label": column.label, "type": column.type, "required": column.required,
            "unique": column.unique, "default": column.default, "position": column.position}


def _column_of(data: dict[str, Any]) -> Column:
    return Column(data["id"], data["label"], data["type"], data["required"], data["unique"],
                  data["default"], data["position"])


def columns_add(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "column"}, "columns-add")
    table = catalog.table(conn, args.get("table"))
    if len(table.columns) >= MAX_COLUMNS:
        raise TablesError("limit", f"a table holds at most {MAX_COLUMNS} columns")
    position = max((c.position for c in table.columns), default=-1) + 1
    column = _column_spec(args.get("column"), table, position, [values.fold(c.label) for c in table.columns])
    rows = _row_count(conn, table)
    if column.required and rows and column.default is None:
        raise invalid(f"column {column.label!r} is required and table {table.label!r} has rows: give it a default")
    if column.unique and column.default is not None and rows > 1:
        raise invalid(f"the default of unique column {column.label!r} would repeat in {rows} rows")
    _catalog_column(conn, table.id, column)
    conn.execute(f"ALTER TABLE {ident(table.id)} ADD COLUMN {_column_sql(column)}")
    if column.unique:
        conn.execute(f"CREATE UNIQUE INDEX {_index(column)} ON {ident(table.id)} ({ident(column.id)})")
    return Effect("schema", f"added column {column.label} to {table.label}",
                  f"removes column {column.label}", {"op": "drop-column", "table": table.id,
                                                       "column": column.id}, count=1)


def columns_rename(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "column", "newName"}, "columns-rename")
    table = catalog.table(conn, args.get("table"))
    column = table.column(args.get("column"))
    label = values.label(args.get("newName"), "the new column label")
    if catalog.reserved(label):
        raise invalid("no column may be labelled _id (it names the row ID)")
    if any(values.fold(c.label) == values.fold(label) and c.id != column.id for c in table.columns):
        raise invalid(f"a column labelled {label!r} exists already (labels ignore case)")
    conn.execute("UPDATE tables_columns SET label = ? WHERE id = ?", (label, column.id))
    return Effect("schema", f"renamed column {column.label} of {table.label} to {label}",
                  f"renames it back to {column.label}",
                  {"op": "rename-column", "column": column.id, "label": column.label}, count=1)


def _rebuild(conn: sqlite3.Connection, table: Table, columns: list[Column],
             fill: dict[str, dict[int, Any]] | None = None) -> None:
    """Rebuild ``table`` with ``columns`` in this transaction: create the new table,
    copy the rows (and ``fill``'s values by row ID), drop the old one. The row
    counter is kept."""
    counter = catalog.row_counter(conn, table.id)
    scratch = values.new_id("t")
    body = ", ".join(["_id INTEGER PRIMARY KEY AUTOINCREMENT"] + [_column_sql(c) for c in columns])
    conn.execute(f"CREATE TABLE {ident(scratch)} ({body}) STRICT")
    kept = [c for c in columns if any(o.id == c.id for o in table.columns)]
    names = ", ".join(["_id"] + [ident(c.id) for c in kept])
    if not fill:
        conn.execute(f"INSERT INTO {ident(scratch)} ({names}) SELECT {names} FROM {ident(table.id)}")
    else:
        extra = list(fill)
        targets = ", ".join(["_id"] + [ident(c.id) for c in kept] + [ident(c) for c in extra])
        marks = ", ".join("?" for _ in range(1 + len(kept) + len(extra)))
        rows = conn.execute(f"SELECT {names} FROM {ident(table.id)}").fetchall()
        conn.executemany(f"INSERT INTO {ident(scratch)} ({targets}) VALUES ({marks})",
                         [list(r) + [fill[c].get(r[0]) for c in extra] for r in rows])
    conn.execute(f"DROP TABLE {ident(table.id)}")
    conn.execute(f"ALTER TABLE {ident(scratch)} RENAME TO {ident(table.id)}")
    for column in columns:
        if column.unique:
            conn.execute(f"CREATE UNIQUE INDEX {_index(column)} ON {ident(table.id)} ({ident(column.id)})")
    _set_counter(conn, table.id, counter)


def columns_drop(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "column"}, "columns-drop")
    table = catalog.table(conn, args.get("table"))
    column = table.column(args.get("column"))
    held = [list(r) for r in conn.execute(
        f"SELECT _id, {ident(column.id)} FROM {ident(table.id)} WHERE {ident(column.id)} IS NOT NULL ORDER BY _id")]
    _rebuild(conn, table, [c for c in table.columns if c.id != column.id])
    conn.execute("DELETE FROM tables_columns WHERE id = ?", (column.id,))
    return Effect("schema", f"dropped column {column.label} of {table.label}",
                  f"adds column {column.label} back with its values",
                  {"op": "restore-column", "table": table.id, "column": _column_json(column), "values": held},
                  count=1, data_loss={"rowsLost": len(held), "columnsLost": 1})


def databases_rename(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"name"}, "databases-rename")
    name = values.database_name(args.get("name"))
    before = catalog.meta(conn, "name")
    catalog.set_meta(conn, "name", name)
    return Effect("schema", f"renamed the database {before} to {name}", f"renames it back to {before}",
                  {"op": "rename-database", "name": before, "set": name}, count=1, moves_revision=False)


# --- row operations -------------------------------------------------------------------


def _values_of(table: Table, row: Any, where: str,
               index: dict[str, Any] | None = None) -> dict[str, Any]:
    """A row's values by column id, from labels; refuses unknown labels and ``_id``.
    ``index`` (``_by_label(table)``) saves folding every label again for every row."""
    if not isinstance(row, dict):
        raise invalid(f"{where} must be an object of column labels and values")
    if index is None:
        index = _by_label(table)
    found: dict[str, Any] = {}
    for name, value in row.items():
        if isinstance(name, str) and catalog.reserved(name):
            raise invalid(f"{where}: the row ID (_id) is given by the database, not set")
        column = index.get(values.fold(name)) if isinstance(name, str) else None
        if column is None:
            column = table.column(name)  # refuses it, naming it
        if column.id in found:
            raise invalid(f"{where} names column {column.label!r} twice")
        if value is None and column.required:
            raise invalid(f"{where}: column {column.label!r} is required and cannot be empty")
        found[column.id] = values.cell(column.type, value, f"{where}, column {column.label!r}")
    return found


def _by_label(table: Table) -> dict[str, Any]:
    """The table's columns by folded label (labels are unique ignoring case)."""
    return {values.fold(c.label): c for c in table.columns}


def _shown(table: Table, column_ids: list[str], stored: list[Any]) -> dict[str, Any]:
    by_id = {c.id: c for c in table.columns}
    return {by_id[cid].label: values.out(by_id[cid].type, v) for cid, v in zip(column_ids, stored)}


def rows_insert(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "rows"}, "rows-insert")
    table = catalog.table(conn, args.get("table"))
    rows = args.get("rows")
    if not isinstance(rows, list) or not 1 <= len(rows) <= MAX_INSERT:
        raise invalid(f"rows must be a list of 1 to {MAX_INSERT} rows")
    ids, sample = [], []
    index = _by_label(table)
    statements: dict[tuple[str, ...], str] = {}
    for number, row in enumerate(rows, 1):
        given = _values_of(table, row, f"row {number}", index)
        for column in table.columns:
            if column.id not in given:
                if column.required and column.default is None:
                    raise invalid(f"row {number}: column {column.label!r} is required")
                given[column.id] = column.default
        names = list(given)
        if names:
            key = tuple(names)
            sql = statements.get(key) or statements.setdefault(key, (
                f"INSERT INTO {ident(table.id)} ({', '.join(ident(n) for n in names)}) "
                f"VALUES ({', '.join('?' for _ in names)})"))
            cursor = constrained(conn, table, sql, [given[n] for n in names])
        else:
            cursor = constrained(conn, table, f"INSERT INTO {ident(table.id)} DEFAULT VALUES", [])
        ids.append(int(cursor.lastrowid or 0))
        if len(sample) < SAMPLE:
            sample.append({"id": values.row_id_out(ids[-1]), "values": _shown(table, names, [given[n] for n in names])})
    noun = "row" if len(ids) == 1 else "rows"
    undo = "deletes that row" if len(ids) == 1 else f"deletes those {len(ids)} rows"
    return Effect("data", f"inserted {len(ids)} {noun} into {table.label}", undo,
                  {"op": "delete-rows", "table": table.id, "ids": ids}, count=len(ids), ids=ids, sample=sample)


def _target_ids(conn: sqlite3.Connection, table: Table, args: dict[str, Any], what: str) -> list[int]:
    """The rows an update or delete names: exactly one of ``ids`` or ``filter``."""
    from tablesdb import query
    has_ids, has_filter = "ids" in args, "filter" in args
    if has_ids == has_filter:
        raise invalid(f"{what} names its rows by exactly one of ids or filter")
    if has_ids:
        raw = args["ids"]
        if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_CHANGE:
            raise invalid(f"ids must be a list of 1 to {MAX_CHANGE} row IDs")
        ids = [values.integer_value(i, "a row ID") for i in raw]
        if any(i <= 0 for i in ids) or len(set(ids)) != len(ids):
            raise invalid("ids must be distinct positive row IDs")
        present = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            present |= {r[0] for r in conn.execute(
                f"SELECT _id FROM {ident(table.id)} WHERE _id IN ({', '.join('?' for _ in chunk)})", chunk)}
        missing = [i for i in ids if i not in present]
        if missing:
            raise invalid(f"table {table.label!r} has no row {missing[0]}")
        return sorted(ids)
    where, params = query.compile_filter(table, args["filter"])
    found = [r[0] for r in conn.execute(
        f"SELECT _id FROM {ident(table.id)} WHERE {where} ORDER BY _id LIMIT {MAX_CHANGE + 1}", params)]
    if len(found) > MAX_CHANGE:
        raise TablesError("limit", f"the filter selects more than {MAX_CHANGE} rows of {table.label!r}; "
                                   "narrow it (one change touches at most 1000 rows)")
    if not found:
        raise invalid(f"the filter matches no row of {table.label!r}")
    return found


def _select(conn: sqlite3.Connection, table: Table, column_ids: list[str], ids: list[int]) -> list[list[Any]]:
    found: list[list[Any]] = []
    cols = ", ".join(["_id"] + [ident(c) for c in column_ids])
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        found += [list(r) for r in conn.execute(
            f"SELECT {cols} FROM {ident(table.id)} WHERE _id IN ({', '.join('?' for _ in chunk)}) ORDER BY _id",
            chunk)]
    return found


def rows_update(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "set", "ids", "filter"}, "rows-update")
    table = catalog.table(conn, args.get("table"))
    changes = _values_of(table, args.get("set"), "set")
    if not changes:
        raise invalid("set must name at least one column")
    ids = _target_ids(conn, table, args, "rows-update")
    names = list(changes)
    before = _select(conn, table, names, ids)
    assignments = ", ".join(f"{ident(n)} = ?" for n in names)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        constrained(conn, table, f"UPDATE {ident(table.id)} SET {assignments} "
                                 f"WHERE _id IN ({', '.join('?' for _ in chunk)})",
                    [changes[n] for n in names] + chunk)
    after = [changes[n] for n in names]
    sample = [{"id": values.row_id_out(r[0]), "before": _shown(table, names, r[1:]),
               "after": _shown(table, names, after)} for r in before[:SAMPLE]]
    noun = "row" if len(ids) == 1 else "rows"
    return Effect("data", f"updated {len(ids)} {noun} of {table.label}", f"puts back the previous values of {len(ids)} {noun}",
                  {"op": "set-values", "table": table.id, "columns": names, "rows": before},
                  count=len(ids), ids=ids, sample=sample)


def rows_delete(conn: sqlite3.Connection, args: dict[str, Any]) -> Effect:
    only(args, {"table", "ids", "filter"}, "rows-delete")
    table = catalog.table(conn, args.get("table"))
    ids = _target_ids(conn, table, args, "rows-delete")
    names = [c.id for c in table.columns]
    rows = _select(conn, table, names, ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        conn.execute(f"DELETE FROM {ident(table.id)} WHERE _id IN ({', '.join('?' for _ in chunk)})", chunk)
    sample = [{"id": values.row_id_out(r[0]), "values": _shown(table, names, r[1:])} for r in rows[:SAMPLE]]
    noun = "row" if len(ids) == 1 else "rows"
    undo = "inserts that row again" if len(ids) == 1 else f"inserts the {len(ids)} rows again"
    return Effect("data", f"deleted {len(ids)} {noun} from {table.label}", undo,
                  {"op": "insert-rows", "table": table.id, "columns": names, "rows": rows},
                  count=len(ids), ids=ids, sample=sample, data_loss={"rows": len(ids)})


def constrained(conn: sqlite3.Connection, table: Table, sql: str, params: list[Any]) -> sqlite3.Cursor:
    """Run a row statement; a broken rule is refused naming the column by its label."""
    try:
        return conn.execute(sql, params)
    except sqlite3.IntegrityError as exc:
        text = str(exc)
        column = next((c for c in table.columns if c.id in text), None)
        name = repr(column.label) if column else "a column"
        if "UNIQUE" in text:
            raise TablesError("constraint", f"the change would repeat a value of unique column {name} "
                                            f"of {table.label!r}") from None
        if "NOT NULL" in text:
            raise TablesError("constraint", f"column {name} of {table.label!r} is required") from None
        raise TablesError("constraint", f"the change breaks a rule of column {name} of {table.label!r}") from None


OPERATIONS = {
    "tables-create": tables_create, "tables-rename": tables_rename, "tables-drop": tables_drop,
    "columns-add": columns_add, "columns-rename": columns_rename, "columns-drop": columns_drop,
    "databases-rename": databases_rename,
    "rows-insert": rows_insert, "rows-update": rows_update, "rows-delete": rows_delete,
}
ROW_ACTIONS = {"rows-insert", "rows-update", "rows-delete"}


# --- inverses ---------------------------------------------------------------------------


def apply_inverse(conn: sqlite3.Connection, inverse: dict[str, Any]) -> None:
    """Undo one change from its inverse (the database is at the change's revision)."""
    op = inverse["op"]
    if op == "delete-rows":
        ids = inverse["ids"]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            conn.execute(f"DELETE FROM {ident(inverse['table'])} WHERE _id IN ({', '.join('?' for _ in chunk)})",
                         chunk)
    elif op == "set-values":
        assignments = ", ".join(f"{ident(c)} = ?" for c in inverse["columns"])
        conn.executemany(f"UPDATE {ident(inverse['table'])} SET {assignments} WHERE _id = ?",
                         [row[1:] + [row[0]] for row in inverse["rows"]])
    elif op == "insert-rows":
        names = ", ".join(["_id"] + [ident(c) for c in inverse["columns"]])
        marks = ", ".join("?" for _ in range(len(inverse["columns"]) + 1))
        conn.executemany(f"INSERT INTO {ident(inverse['table'])} ({names}) VALUES ({marks})", inverse["rows"])
    elif op == "drop-table":
        conn.execute(f"DROP TABLE {ident(inverse['table'])}")
        conn.execute("DELETE FROM tables_tables WHERE id = ?", (inverse["table"],))
    elif op == "rename-table":
        conn.execute("UPDATE tables_tables SET label = ? WHERE id = ?", (inverse["label"], inverse["table"]))
    elif op == "rename-column":
        conn.execute("UPDATE tables_columns SET label = ? WHERE id = ?", (inverse["label"], inverse["column"]))
    elif op == "rename-database":
        catalog.set_meta(conn, "name", inverse["name"])
    elif op == "restore-table":
        data = inverse["table"]
        columns = [_column_of(c) for c in inverse["columns"]]
        conn.execute("INSERT INTO tables_tables VALUES (?, ?, ?)", (data["id"], data["label"], data["position"]))
        for column in columns:
            _catalog_column(conn, data["id"], column)
        _create_table(conn, data["id"], columns)
        if inverse["rows"]:
            names = ", ".join(["_id"] + [ident(c.id) for c in columns])
            marks = ", ".join("?" for _ in range(len(columns) + 1))
            conn.executemany(f"INSERT INTO {ident(data['id'])} ({names}) VALUES ({marks})", inverse["rows"])
        _set_counter(conn, data["id"], inverse["counter"])
    elif op == "drop-column":
        table = next(t for t in catalog.tables(conn) if t.id == inverse["table"])
        _rebuild(conn, table, [c for c in table.columns if c.id != inverse["column"]])
        conn.execute("DELETE FROM tables_columns WHERE id = ?", (inverse["column"],))
    elif op == "restore-column":
        table = next(t for t in catalog.tables(conn) if t.id == inverse["table"])
        column = _column_of(inverse["column"])
        columns = sorted(table.columns + [column], key=lambda c: c.position)
        _catalog_column(conn, table.id, column)
        _rebuild(conn, table, columns, {column.id: {row: value for row, value in inverse["values"]}})
    else:
        raise ValueError(f"unknown inverse {op!r}")
