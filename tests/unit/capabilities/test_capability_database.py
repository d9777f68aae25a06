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
