"""The store's connection (``store/connection.py``) on a real SQLite file: writes
committed, transactions and savepoints undone on errors, and no sqlite-utils loaded."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from workbench.store.connection import Database


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "t.db"
    database = Database(sqlite3.connect(path))
    database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
    yield database, path
    database.close()


def other_reader(path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, name FROM t ORDER BY id").fetchall()
    finally:
        conn.close()


def test_a_write_outside_a_transaction_is_committed(db) -> None:
    database, path = db
    database.execute("INSERT INTO t (name) VALUES (?)", ("a",))
    assert not database.conn.in_transaction
    assert other_reader(path) == [(1, "a")]


def test_rows_come_as_dicts_with_repeated_names_made_unique(db) -> None:
    database, _ = db
    database.execute("INSERT INTO t (name) VALUES ('a')")
    assert list(database.query("SELECT id, name, name FROM t")) == [{"id": 1, "name": "a", "name_2": "a"}]
    assert list(database.query("PRAGMA recursive_triggers")) == [{"recursive_triggers": 1}]


def test_a_query_that_returns_no_rows_is_refused_and_undone(db) -> None:
    database, path = db
    with pytest.raises(ValueError, match="returns rows"):
        database.query("INSERT INTO t (name) VALUES ('sneaked')")
    with pytest.raises(ValueError):
        database.query("BEGIN")
    assert other_reader(path) == [] and not database.conn.in_transaction


def test_insert_returning_through_query_is_committed(db) -> None:
    database, path = db
    rows = list(database.query("INSERT INTO t (name) VALUES ('r') RETURNING id"))
    assert rows == [{"id": 1}] and other_reader(path) == [(1, "r")]


def test_atomic_rolls_back_everything_and_a_savepoint_only_its_own(db) -> None:
    database, path = db
    with pytest.raises(RuntimeError):
        with database.atomic():
            database.execute("INSERT INTO t (name) VALUES ('gone')")
            raise RuntimeError("stop")
    assert other_reader(path) == []
    with database.atomic():
        database.execute("INSERT INTO t (name) VALUES ('kept')")
        with pytest.raises(RuntimeError):
            with database.atomic():
                database.execute("INSERT INTO t (name) VALUES ('inner')")
                raise RuntimeError("stop")
    assert other_reader(path) == [(1, "kept")]


def test_a_failed_write_leaves_no_transaction_open(db) -> None:
    database, path = db
    with pytest.raises(sqlite3.IntegrityError):
        database.execute("INSERT INTO t (id, name) VALUES (1, 'a'), (1, 'b')")
    assert not database.conn.in_transaction
    database.execute("INSERT INTO t (name) VALUES ('after')")
    assert other_reader(path) == [(1, "after")]


def test_wal_is_enabled(db) -> None:
    database, _ = db
    database.enable_wal()
    assert database.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_opening_the_store_loads_no_sqlite_utils(tmp_path) -> None:
    code = ("import sys\nfrom workbench.store import Store\n"
            f"Store.open({str(tmp_path / 'w.db')!r}).close()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('sqlite_utils', 'click', 'pluggy', 'dateutil')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
