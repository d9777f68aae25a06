"""Each extension's private database: its own file, nothing beyond it."""

from __future__ import annotations

import pytest

from workbench.capabilities import database
from workbench.capabilities.database import ExtensionDatabases
from workbench.errors import ToolError


@pytest.fixture
def dbs(tmp_path):
    found = ExtensionDatabases(tmp_path / "databases")
    yield found
    found.close()


def test_rows_come_back_as_objects_and_changes_are_counted(dbs):
    dbs.execute("notes", "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT, done BOOLEAN)")
    assert dbs.execute("notes", "INSERT INTO t (body, done) VALUES (?, ?)", ["milk", True]) == \
        {"changes": 1, "lastInsertRowId": 1}
    assert dbs.query("notes", "SELECT * FROM t") == [{"id": 1, "body": "milk", "done": 1}]


def test_extensions_do_not_share_a_database(dbs):
    dbs.execute("a", "CREATE TABLE t (x)")
    with pytest.raises(ToolError, match="no such table"):
        dbs.query("b", "SELECT * FROM t")


@pytest.mark.parametrize("sql", ["ATTACH DATABASE '{path}' AS other", "VACUUM INTO '{path}'",
                                 "  vacuum main into '{path}'"])
def test_nothing_reaches_another_file(dbs, tmp_path, sql):
    target = tmp_path / "elsewhere.db"
    with pytest.raises(ToolError):
        dbs.execute("a", sql.format(path=target))
    assert not target.exists()


@pytest.mark.parametrize("params", [{"a": 1}, [[1]], [{"x": 1}], "text"])
def test_params_are_plain_values(dbs, params):
    with pytest.raises(ToolError) as info:
        dbs.query("a", "SELECT ?", params)
    assert info.value.kind == "invalid_arguments"


def test_a_huge_result_is_refused_not_cut(dbs, monkeypatch):
    monkeypatch.setattr(database, "MAX_ROWS", 5)
    dbs.execute("a", "CREATE TABLE t (x)")
    for n in range(6):
        dbs.execute("a", "INSERT INTO t VALUES (?)", [n])
    with pytest.raises(ToolError) as info:
        dbs.query("a", "SELECT * FROM t")
    assert info.value.kind == "output_too_large"


def test_drop_removes_every_file(dbs):
    dbs.execute("gone", "CREATE TABLE t (x)")
    path = dbs.path("gone")
    assert path.exists()
    dbs.drop("gone")
    assert not list(path.parent.glob("gone*"))


def test_rows_are_bounded_in_bytes_and_values_in_size(dbs, monkeypatch):
    monkeypatch.setattr(database, "MAX_RESULT_BYTES", 10_000)
    dbs.execute("a", "CREATE TABLE t (x)")
    for _ in range(3):
        dbs.execute("a", "INSERT INTO t VALUES (randomblob(4000))")
    with pytest.raises(ToolError) as info:
        dbs.query("a", "SELECT * FROM t")
    assert info.value.kind == "output_too_large" and "more than 10000 bytes" in info.value.message
    with pytest.raises(ToolError, match="too big"):
        dbs.query("a", f"SELECT randomblob({database.MAX_VALUE_BYTES + 1})")


def test_a_database_made_larger_than_the_cap_takes_no_more(tmp_path):
    roomy = ExtensionDatabases(tmp_path / "databases")
    roomy.execute("a", "CREATE TABLE t (x)")
    roomy.execute("a", "INSERT INTO t VALUES (randomblob(300000))")
    roomy.close()
    tight = ExtensionDatabases(tmp_path / "databases", max_bytes=100_000)
    try:
        with pytest.raises(ToolError, match="is full"):
            tight.execute("a", "INSERT INTO t VALUES (randomblob(100000))")
        assert tight.query("a", "SELECT count(*) AS n FROM t") == [{"n": 1}]
    finally:
        tight.close()
