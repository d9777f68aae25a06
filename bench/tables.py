"""The Tables engine beside plain SQLite doing the same work in the same run.

Run with ``.venv/bin/python bench/tables.py``. A table of 10,000 rows (text, integer,
real, boolean); each figure is the median of ``BENCH_RUNS`` (31) rounds:

- a page of 50 rows with a filter and a sort (``rows-query``: the catalog looked up,
  the filter compiled, one read transaction), beside the same SELECT run directly;
  goal: at most 2 ms more;
- 100 rows inserted as one change (``rows-insert``: receipt, change set and revision
  in the same commit, ``synchronous=FULL``), beside the same 100 INSERTs committed in
  one transaction with the same settings; goal: at most 3x;
- the whole table exported to CSV (``rows-export``: formula policy, RFC 4180 quoting),
  beside ``csv.writer`` over the same SELECT; goal: at most 2x.
"""

from __future__ import annotations

import csv
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "extensions" / "tables"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import report  # noqa: E402
from tablesdb import Tables  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "31"))
ROWS = 10_000


def median(work) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        tables = Tables(Path(scratch) / "data")
        rid = tables.create("Bench")["resourceId"]
        tables.apply(rid, "tables-create", {"table": "Items", "columns": [
            {"label": "Name", "type": "text"}, {"label": "Qty", "type": "integer"},
            {"label": "Price", "type": "real"}, {"label": "Done", "type": "boolean"}]})
        for start in range(0, ROWS, 100):
            tables.apply(rid, "rows-insert", {"table": "Items", "rows": [
                {"Name": f"item {i}", "Qty": i % 97, "Price": i / 7, "Done": i % 2 == 0}
                for i in range(start, start + 100)]})
        table = tables.inspect(rid)["tables"][0]
        tid = table["id"]
        name, qty, price, done = (c["id"] for c in table["columns"])
        raw = sqlite3.connect(tables.folder.path(rid), isolation_level=None)
        raw.execute("PRAGMA synchronous=FULL")

        query = {"table": "Items", "filter": {"and": [{"column": "Qty", "op": "gt", "value": 50},
                                                      {"column": "Name", "op": "contains", "value": "1"}]},
                 "sort": [{"column": "Price", "direction": "desc"}], "limit": 50}
        sql = (f'SELECT _id, "{name}", "{qty}", "{price}", "{done}" FROM "{tid}" WHERE ("{qty}" > ? AND '
               f'"{name}" LIKE ? ESCAPE \'\\\') ORDER BY "{price}" DESC, _id ASC LIMIT 51 OFFSET 0')
        engine = median(lambda: tables.query(rid, query))
        plain = median(lambda: raw.execute(sql, (50, "%1%")).fetchall())
        report("tables", "rows-query: a page of 50, filtered and sorted", engine, plain,
               "the same SELECT on sqlite3", max_over_ms=2)

        batch = [{"Name": "new", "Qty": 1, "Price": 1.5, "Done": True}] * 100
        engine = median(lambda: tables.apply(rid, "rows-insert", {"table": "Items", "rows": batch}))

        def plain_insert() -> None:
            raw.execute("BEGIN IMMEDIATE")
            raw.executemany(f'INSERT INTO "{tid}" ("{name}", "{qty}", "{price}", "{done}") VALUES (?, ?, ?, ?)',
                            [("new", 1, 1.5, 1)] * 100)
            raw.execute("COMMIT")

        plain = median(plain_insert)
        report("tables", "rows-insert: 100 rows with receipt and undo", engine, plain,
               "100 INSERTs in one commit", max_over_ms=3)

        every = f'SELECT "{name}", "{qty}", "{price}", "{done}" FROM "{tid}" ORDER BY _id'
        out = Path(scratch) / "plain.csv"

        def plain_export() -> None:
            with open(out, "w", newline="", encoding="utf-8") as handle:
                csv.writer(handle).writerows(raw.execute(every))

        engine = median(lambda: os.unlink(tables.export(rid, {"table": "Items"})["path"]))
        plain = median(plain_export)
        report("tables", f"rows-export: {ROWS:,}+ rows to CSV", engine, plain, "csv.writer over the SELECT",
               max_ratio=2)
        raw.close()


if __name__ == "__main__":
    main()
