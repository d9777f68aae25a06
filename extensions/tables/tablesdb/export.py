"""CSV export: one snapshot, RFC 4180, UTF-8 without a BOM, formulas defused.

The rows come from one read transaction (one revision) and are written row by row
through a small buffer. A text cell or a column label that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` so that a
spreadsheet shows it as text (OWASP's guidance); cells of other types never do.
"""

from __future__ import annotations

import math
import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any

from tablesdb import catalog, query
from tablesdb.errors import TablesError, invalid
from tablesdb.ops import only
from tablesdb.values import ident

FORMULA = ("=", "+", "-", "@", "\t", "\r")
MAX_EXPORT_ROWS = 1_000_000
BUFFER = 64 * 1024


def _field(text: str) -> str:
    if text == "" or any(ch in text for ch in ',"\r\n') or text[0] in " \t" or text[-1] in " \t":
        return '"' + text.replace('"', '""') + '"'
    return text


def _text(text: str) -> str:
    return "'" + text if text.startswith(FORMULA) else text


def _cell(kind: str, stored: Any) -> str:
    if stored is None:
        return ""
    if kind == "text":
        return _field(_text(stored))
    if kind == "boolean":
        return "true" if stored else "false"
    if kind == "integer":
        return str(int(stored))
    if kind == "real":
        number = float(stored)
        return repr(number) if math.isfinite(number) else ""
    return _field(str(stored))


def rows_export(conn: sqlite3.Connection, args: dict[str, Any], folder: Path) -> dict[str, Any]:
    only(args, {"table", "columns", "filter", "sort", "maxRows"}, "rows-export")
    table = catalog.table(conn, args.get("table"))
    columns = query._selected(table, args.get("columns"))
    max_rows = args.get("maxRows", MAX_EXPORT_ROWS)
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or not 1 <= max_rows <= MAX_EXPORT_ROWS:
        raise invalid(f"maxRows is 1 to {MAX_EXPORT_ROWS}")
    where, params = (query.compile_filter(table, args["filter"]) if args.get("filter") is not None
                     else ("1", []))
    order = query._sort(table, args.get("sort"))
    names = ", ".join("_id" if c.id == "_id" else ident(c.id) for c in columns)
    if not columns:
        raise TablesError("invalid", f"table {table.label!r} has no columns to export")
    path = folder / f"{secrets.token_hex(8)}.csv"
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="", buffering=BUFFER) as out:
            out.write(",".join(_field(_text(c.label)) for c in columns) + "\r\n")
            cursor = conn.execute(f"SELECT {names} FROM {ident(table.id)} WHERE {where} ORDER BY {order} LIMIT ?",
                                  params + [max_rows])
            while True:
                batch = cursor.fetchmany(500)
                if not batch:
                    break
                for record in batch:
                    out.write(",".join(_cell(c.type, v) for c, v in zip(columns, record)) + "\r\n")
                    count += 1
    except BaseException:
        os.unlink(path)
        raise
    return {"table": table.label, "path": str(path), "rows": count, "columns": [c.label for c in columns],
            "bytes": path.stat().st_size}
