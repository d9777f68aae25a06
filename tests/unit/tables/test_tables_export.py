"""CSV export: one snapshot, RFC 4180, UTF-8 without BOM, formula injection defused,
re-read by Python's csv module and by the sqlite3 program's CSV reader."""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
import subprocess

import pytest

from tablesdb import TablesError, export

ROWS = [{"Name": "=1+1", "Age": -4, "Score": 1e-7, "Active": True, "Seen": "2026-01-01T00:00:00.123456789+02:00"},
        {"Name": "+cmd|' /C calc'!A0", "Age": "9223372036854775807", "Score": 2.5e300, "Active": False},
        {"Name": "-5 apples", "Email": ""},
        {"Name": "@SUM(A1)", "Email": "\tx"},
        {"Name": "a,b \"quoted\"\r\nnext"},
        {"Name": " padded ", "Email": "ünïcødé ✓"},
        {"Name": "plain"}]


@pytest.fixture
def exported(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": ROWS})
    tables.apply(db, "columns-add", {"table": "People", "column": {"label": "=HYPERLINK(1)", "type": "text"}})
    return tables.export(db, {"table": "People", "columns": ["_id", "Name", "Age", "Score", "Active", "Seen",
                                                              "Email", "=hyperlink(1)"]})


def test_the_export_reads_back_with_formulas_defused(exported):
    raw = open(exported["path"], "rb").read()
    assert not raw.startswith(b"\xef\xbb\xbf") and raw.endswith(b"\r\n")
    assert raw.count(b"\r\n") == len(ROWS) + 2  # the header, the rows, and the CRLF inside a field
    text = raw.decode("utf-8")
    records = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    assert records[0] == ["_id", "Name", "Age", "Score", "Active", "Seen", "Email", "'=HYPERLINK(1)"]
    body = {int(r[0]): r[1:] for r in records[1:]}
    assert body[1] == ["'=1+1", "-4", "1e-07", "true", "2025-12-31T22:00:00.123456789Z", "", ""]
    assert body[2][:4] == ["'+cmd|' /C calc'!A0", "9223372036854775807", "2.5e+300", "false"]
    assert body[3][0] == "'-5 apples" and body[4][0] == "'@SUM(A1)" and body[4][5] == "'\tx"
    assert body[5][0] == 'a,b "quoted"\r\nnext'
    assert body[6][0] == " padded " and body[6][5] == "ünïcødé ✓"
    assert body[7] == ["plain", "", "", "true", "", "", ""]  # Active defaults to true
    # NULL is an empty field with no quotes; an empty text is "".
    line3 = text.split("\r\n")[3]
    assert line3.endswith(',"",') and ",,," in line3
    assert '" padded "' in text
    assert exported["rows"] == len(ROWS)


def test_another_csv_reader_reads_the_same_cells(exported, tmp_path):
    target = tmp_path / "read.db"
    program = shutil.which("sqlite3")
    assert program is not None, "the sqlite3 program (a second CSV reader) is part of the test machine"
    done = subprocess.run([program, str(target), f".import --csv {exported['path']} t"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(target) as conn:
        names = [r[0] for r in conn.execute('SELECT "Name" FROM t ORDER BY CAST("_id" AS INTEGER)')]
    assert names == ["'=1+1", "'+cmd|' /C calc'!A0", "'-5 apples", "'@SUM(A1)", 'a,b "quoted"\r\nnext',
                     " padded ", "plain"]


def test_one_snapshot_that_never_blocks_a_change(tables, db, monkeypatch):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": str(i)} for i in range(50)]})
    cell = export._cell
    wrote = []

    def meanwhile(kind, stored):
        if not wrote:  # a change commits while the export reads
            wrote.append(tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "late"}]}))
        return cell(kind, stored)

    monkeypatch.setattr(export, "_cell", meanwhile)
    done = tables.export(db, {"table": "People", "filter": {"column": "Name", "op": "is-not-null"},
                              "sort": [{"column": "_id", "direction": "desc"}], "maxRows": 40})
    assert wrote and done["rows"] == 40
    records = list(csv.reader(open(done["path"], newline="", encoding="utf-8")))
    assert "late" not in {r[0] for r in records} and records[1][0] == "49"
    assert len(tables.query(db, {"table": "People", "limit": 500})["rows"]) == 51
    with pytest.raises(TablesError):
        tables.export(db, {"table": "People", "maxRows": 0})


def test_an_export_is_a_temporary_file(exported, tables):
    import os
    from pathlib import Path
    path = Path(exported["path"])
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    tables.folder.settle()
    assert path.exists()
    old = path.stat().st_mtime - 25 * 3600
    os.utime(path, (old, old))
    tables.folder.settle()
    assert not path.exists()
