"""Row queries and aggregates: the filter tree, sorts, pages and cursors.

A filter is a tree of ``and``, ``or`` and conditions (at most 8 levels and 64
nodes). Each statement is built from internal identifiers with every value bound as
a parameter; a label is only looked up in the catalog. A comparison never matches
NULL (SQL's own rule); a comparison with a null value is refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from typing import Any

from tablesdb import catalog, values
from tablesdb.catalog import Column, Table
from tablesdb.errors import TablesError, invalid
from tablesdb.ops import only
from tablesdb.values import ident

MAX_DEPTH = 8
MAX_NODES = 64
MAX_IN = 100
MAX_MATCH_BYTES = 1024
MAX_SORT = 4
DEFAULT_LIMIT, MAX_LIMIT = 50, 500
MAX_OFFSET = 100_000
PAGE_BYTES = 512 * 1024
MAX_GROUPS = 500
COMPARE = {"eq": "=", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
MATCH = ("contains", "starts-with", "ends-with")
ROW_ID = Column("_id", "_id", "integer", True, True, None, -1)


def _column(table: Table, name: Any) -> tuple[Column, str]:
    """The column a filter or sort names (``_id`` is the row ID) and its SQL."""
    if isinstance(name, str) and catalog.reserved(name):
        return ROW_ID, "_id"
    column = table.column(name)
    return column, ident(column.id)


def compile_filter(table: Table, node: Any) -> tuple[str, list[Any]]:
    """``node`` as an SQL condition and its parameters."""
    count = [0]
    params: list[Any] = []
    sql = _node(table, node, 1, count, params)
    return sql, params


def _node(table: Table, node: Any, depth: int, count: list[int], params: list[Any]) -> str:
    if depth > MAX_DEPTH:
        raise TablesError("limit", f"a filter is at most {MAX_DEPTH} levels deep")
    count[0] += 1
    if count[0] > MAX_NODES:
        raise TablesError("limit", f"a filter has at most {MAX_NODES} nodes")
    if not isinstance(node, dict):
        raise invalid("each filter node must be an object: and, or, or a condition")
    for joiner in ("and", "or"):
        if joiner in node:
            if len(node) != 1:
                raise invalid(f"a filter node with {joiner!r} holds nothing else")
            children = node[joiner]
            if not isinstance(children, list) or not children:
                raise invalid(f"{joiner!r} takes a non-empty list of filter nodes")
            parts = [_node(table, child, depth + 1, count, params) for child in children]
            return "(" + f" {joiner.upper()} ".join(parts) + ")"
    return _condition(table, node, params)


def _condition(table: Table, node: dict[str, Any], params: list[Any]) -> str:
    only(node, {"column", "op", "value", "values"}, "a filter condition")
    column, sql = _column(table, node.get("column"))
    op = node.get("op")
    if op in ("is-null", "is-not-null"):
        if "value" in node or "values" in node:
            raise invalid(f"{op} takes no value")
        return f"{sql} IS {'NOT ' if op == 'is-not-null' else ''}NULL"
    allowed = _operators(column)
    if op not in allowed:
        raise invalid(f"column {column.label!r} ({column.type}) takes the operators {', '.join(allowed)}; "
                      f"not {op!r}")
    if op == "in":
        if "value" in node:
            raise invalid("in takes values, a list of 1 to 100 values")
        items = node.get("values")
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_IN:
            raise invalid(f"in takes values, a list of 1 to {MAX_IN} values")
        params.extend(_operand(column, item) for item in items)
        return f"{sql} IN ({', '.join('?' for _ in items)})"
    if "values" in node or "value" not in node:
        raise invalid(f"{op} takes one value")
    value = node["value"]
    if op in MATCH:
        if not isinstance(value, str):
            raise invalid(f"{op} takes a text value")
        if len(value.encode("utf-8", "surrogatepass")) > MAX_MATCH_BYTES:
            raise invalid(f"a text to match is at most {MAX_MATCH_BYTES} bytes")
        escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = {"contains": f"%{escaped}%", "starts-with": f"{escaped}%", "ends-with": f"%{escaped}"}[op]
        params.append(pattern)
        return f"{sql} LIKE ? ESCAPE '\\'"
    params.append(_operand(column, value))
    return f"{sql} {COMPARE[op]} ?"


def _operators(column: Column) -> list[str]:
    if column.type == "boolean":
        return ["eq", "ne", "is-null", "is-not-null"]
    ops = list(COMPARE) + ["in", "is-null", "is-not-null"]
    return ops + list(MATCH) if column.type == "text" else ops


def _operand(column: Column, value: Any) -> Any:
    if value is None:
        raise invalid(f"a comparison with null is refused: use is-null or is-not-null on {column.label!r}")
    stored = values.cell(column.type, value, f"the value compared with {column.label!r}",
                         limit=MAX_MATCH_BYTES)
    return stored


def _sort(table: Table, sort: Any) -> str:
    if sort is None:
        return "_id ASC"
    if not isinstance(sort, list) or len(sort) > MAX_SORT:
        raise invalid(f"sort takes a list of at most {MAX_SORT} columns")
    parts = []
    for key in sort:
        if not isinstance(key, dict):
            raise invalid("each sort key must be an object with column and direction")
        only(key, {"column", "direction"}, "a sort key")
        _, sql = _column(table, key.get("column"))
        direction = key.get("direction", "asc")
        if direction not in ("asc", "desc"):
            raise invalid("a sort direction is asc or desc")
        parts.append(f"{sql} {direction.upper()}")
    return ", ".join(parts + ["_id ASC"])


def _selected(table: Table, names: Any) -> list[Column]:
    if names is None or names == []:
        return list(table.columns)
    if not isinstance(names, list) or len(names) > 65:
        raise invalid("columns takes a list of column labels")
    chosen = [_column(table, name)[0] for name in names]
    if len({c.id for c in chosen}) != len(chosen):
        raise invalid("columns names a column twice")
    return chosen


def _cursor_of(key: str, revision: dict[str, int], offset: int) -> str:
    raw = json.dumps({"q": key, "r": [revision["schema"], revision["data"]], "o": offset})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _offset_of(cursor: Any, key: str, revision: dict[str, int]) -> int:
    if cursor is None:
        return 0
    try:
        data = json.loads(base64.urlsafe_b64decode(str(cursor) + "=" * (-len(str(cursor)) % 4)))
        same = data["q"] == key and data["r"] == [revision["schema"], revision["data"]]
        offset = int(data["o"])
    except (ValueError, KeyError, TypeError):
        raise TablesError("invalid", "the cursor is not one this query gave") from None
    if not same:
        raise TablesError("stale", "the cursor is no longer valid (the data changed or the query is "
                                   "another): start again at the first page", revision=revision)
    return offset


def rows_query(conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
    only(args, {"table", "columns", "filter", "sort", "limit", "cursor"}, "rows-query")
    table = catalog.table(conn, args.get("table"))
    columns = _selected(table, args.get("columns"))
    limit = args.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise invalid(f"limit is 1 to {MAX_LIMIT}")
    where, params = compile_filter(table, args["filter"]) if args.get("filter") is not None else ("1", [])
    order = _sort(table, args.get("sort"))
    revision = catalog.revision(conn)
    key = hashlib.sha256(json.dumps([table.id, [c.id for c in columns], args.get("filter"), args.get("sort")],
                                    sort_keys=True).encode()).hexdigest()[:32]
    offset = _offset_of(args.get("cursor"), key, revision)
    if offset > MAX_OFFSET:
        raise TablesError("limit", f"offsets beyond {MAX_OFFSET} rows are refused: add a filter")
    names = ", ".join(["_id"] + [ident(c.id) if c.id != "_id" else "_id" for c in columns])
    found = conn.execute(f"SELECT {names} FROM {ident(table.id)} WHERE {where} ORDER BY {order} "
                         f"LIMIT ? OFFSET ?", params + [limit + 1, offset]).fetchall()
    rows, size = [], 0
    for record in found[:limit]:
        row = {"id": values.row_id_out(record[0]),
               "values": [values.out(c.type, v) for c, v in zip(columns, record[1:])]}
        size += len(json.dumps(row, ensure_ascii=False).encode())
        if rows and size > PAGE_BYTES:
            break
        rows.append(row)
    more = len(found) > len(rows)
    result: dict[str, Any] = {"table": table.label, "columns": [c.label for c in columns], "rows": rows,
                              "hasMore": more, "revision": revision}
    if more:
        result["cursor"] = _cursor_of(key, revision, offset + len(rows))
    return result


AGGREGATES = ("count", "sum", "avg", "min", "max")


def rows_aggregate(conn: sqlite3.Connection, args: dict[str, Any]) -> dict[str, Any]:
    only(args, {"table", "aggregates", "filter", "groupBy"}, "rows-aggregate")
    table = catalog.table(conn, args.get("table"))
    wanted = args.get("aggregates")
    if not isinstance(wanted, list) or not 1 <= len(wanted) <= 8:
        raise invalid("aggregates takes 1 to 8 of {fn, column}")
    exprs, kinds = [], []
    for item in wanted:
        if not isinstance(item, dict):
            raise invalid("each aggregate is an object with fn and column")
        only(item, {"fn", "column"}, "an aggregate")
        fn = item.get("fn")
        if fn not in AGGREGATES:
            raise invalid(f"an aggregate fn is one of {', '.join(AGGREGATES)}")
        if fn == "count" and item.get("column") is None:
            exprs.append("count(*)")
            kinds.append("integer")
            continue
        column, sql = _column(table, item.get("column"))
        if fn in ("sum", "avg") and column.type not in ("integer", "real"):
            raise invalid(f"{fn} needs an integer or real column; {column.label!r} is {column.type}")
        if fn in ("min", "max") and column.type == "boolean":
            raise invalid(f"{fn} works on integer, real, text and datetime columns; {column.label!r} is boolean")
        exprs.append(f"{fn}({sql})")
        kinds.append("integer" if fn == "count" else "real" if fn == "avg" else column.type)
    where, params = compile_filter(table, args["filter"]) if args.get("filter") is not None else ("1", [])
    group = args.get("groupBy")
    try:
        if group is None:
            record = conn.execute(f"SELECT {', '.join(exprs)} FROM {ident(table.id)} WHERE {where}",
                                  params).fetchone()
            return {"table": table.label, "values": [values.out(k, v) for k, v in zip(kinds, record)]}
        column, sql = _column(table, group)
        found = conn.execute(f"SELECT {sql}, {', '.join(exprs)} FROM {ident(table.id)} WHERE {where} "
                             f"GROUP BY {sql} ORDER BY {sql} ASC LIMIT ?", params + [MAX_GROUPS + 1]).fetchall()
    except sqlite3.OperationalError as exc:
        if "overflow" in str(exc):
            raise TablesError("invalid", "the sum overflows 64 bits") from None
        raise
    groups = [{"key": values.out(column.type, r[0]), "values": [values.out(k, v) for k, v in zip(kinds, r[1:])]}
              for r in found[:MAX_GROUPS]]
    return {"table": table.label, "groupBy": column.label, "groups": groups, "truncated": len(found) > MAX_GROUPS}
