"""Schema operations: labels and internal ids, the five types and their defaults,
required and unique rules, drop and rename, limits; no label ever becomes SQL."""

from __future__ import annotations

import sqlite3

import pytest

from tablesdb import TablesError


def refused(kind: str, call, *args, **kwargs) -> str:
    with pytest.raises(TablesError) as caught:
        call(*args, **kwargs)
    assert caught.value.kind == kind, caught.value.to_json()
    return caught.value.message


def sql_names(tables, resource_id: str) -> list[str]:
    with sqlite3.connect(tables.folder.path(resource_id)) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]


def test_labels_are_data_in_the_catalog_never_sql(tables, db):
    hostile = 'x"); DROP TABLE tables_meta; --'
    tables.apply(db, "tables-create", {"table": hostile, "columns": [
        {"label": "a' OR 1=1 --", "type": "text", "default": "'); DELETE FROM tables_meta; --"}]})
    tables.apply(db, "rows-insert", {"table": hostile, "rows": [{"a' OR 1=1 --": "v"}, {}]})
    found = tables.query(db, {"table": hostile, "filter": {"column": "A' or 1=1 --", "op": "eq", "value": "v"}})
    assert [r["values"] for r in found["rows"]] == [["v"]]
    everything = tables.query(db, {"table": hostile})["rows"]
    assert everything[1]["values"] == ["'); DELETE FROM tables_meta; --"]
    # Every SQL name is an internal id of ours; the labels live in the catalog alone.
    names = [n for n in sql_names(tables, db) if not n.startswith(("tables_", "sqlite_"))]
    assert names and all(n.startswith(("t_", "c_")) for n in names), names
    assert tables.inspect(db)["name"] == "Home"
    # A rename touches only the catalog: the internal ids stay.
    before = {t["label"]: t["id"] for t in tables.inspect(db)["tables"]}
    tables.apply(db, "tables-rename", {"table": hostile, "newName": "Plain"})
    after = {t["label"]: t["id"] for t in tables.inspect(db)["tables"]}
    assert after["Plain"] == before[hostile] and sql_names(tables, db) == sql_names(tables, db)


@pytest.mark.parametrize("label, why", [
    ("", "1 to 64"), ("x" * 65, "1 to 64"), (" lead", "space"), ("trail ", "space"),
    ("a\x00b", "control"), ("a\u202eb", "bidirectional"), ("a\u200bb", "format"), (7, "1 to 64")])
def test_bad_labels_are_refused_naming_why(tables, db, label, why):
    message = refused("invalid", tables.apply, db, "tables-create", {"table": label})
    assert why in message
    assert [t["label"] for t in tables.inspect(db)["tables"]] == ["People"]


def test_labels_are_unique_ignoring_case_and_id_is_reserved(tables, db):
    assert "exists already" in refused("invalid", tables.apply, db, "tables-create", {"table": "PEOPLE"})
    assert "exists already" in refused("invalid", tables.apply, db, "columns-add",
                                       {"table": "people", "column": {"label": "name", "type": "text"}})
    assert "_id" in refused("invalid", tables.apply, db, "columns-add",
                            {"table": "People", "column": {"label": "_ID", "type": "integer"}})
    assert "_id" in refused("invalid", tables.apply, db, "columns-rename",
                            {"table": "People", "column": "Age", "newName": "_id"})
    assert "does not take" in refused("invalid", tables.apply, db, "tables-create",
                                      {"table": "T", "sql": "DROP TABLE x"})


@pytest.mark.parametrize("kind, default, stored", [
    ("text", "hello", "hello"), ("integer", "9007199254740993", "9007199254740993"),
    ("integer", -5, -5), ("real", 0.1, 0.1), ("boolean", False, False),
    ("datetime", "2026-12-03T10:00:00.5+01:00", "2026-12-03T09:00:00.500000000Z")])
def test_defaults_are_validated_for_their_type(tables, db, kind, default, stored):
    tables.apply(db, "columns-add", {"table": "People", "column": {"label": "New", "type": kind, "default": default}})
    [column] = [c for t in tables.inspect(db)["tables"] for c in t["columns"] if c["label"] == "New"]
    assert column["default"] == stored
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "x"}]})
    row = tables.query(db, {"table": "People", "columns": ["New"]})["rows"][0]
    assert row["values"] == [stored]


@pytest.mark.parametrize("kind, default", [
    ("text", "x" * 1025), ("text", "a\nb"), ("integer", 2 ** 63), ("integer", 1.5), ("integer", True),
    ("real", float("nan")), ("real", float("inf")), ("real", "1.0"), ("real", 2 ** 60 + 1),
    ("boolean", 1), ("datetime", "2026-02-30T00:00:00Z"), ("datetime", "yesterday"), ("datetime", 5),
    ("blob", None)])
def test_bad_defaults_and_types_are_refused(tables, db, kind, default):
    before = tables.inspect(db)
    refused("invalid", tables.apply, db, "columns-add",
            {"table": "People", "column": {"label": "New", "type": kind, "default": default}})
    assert tables.inspect(db) == before


def test_required_and_unique_rules(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}, {"Name": "b"}]})
    # A required column needs a default once the table has rows.
    assert "give it a default" in refused("invalid", tables.apply, db, "columns-add",
                                          {"table": "People", "column": {"label": "R", "type": "text", "required": True}})
    tables.apply(db, "columns-add", {"table": "People", "column": {
        "label": "R", "type": "text", "required": True, "default": "r"}})
    assert [r["values"][-1] for r in tables.query(db, {"table": "People"})["rows"]] == ["r", "r"]
    # A unique default that would repeat is refused; several NULLs are fine.
    assert "repeat" in refused("invalid", tables.apply, db, "columns-add",
                               {"table": "People", "column": {"label": "U", "type": "integer", "unique": True, "default": 1}})
    tables.apply(db, "columns-add", {"table": "People", "column": {"label": "U", "type": "integer", "unique": True}})
    tables.apply(db, "rows-update", {"table": "People", "set": {"U": 1}, "ids": [1]})
    message = refused("constraint", tables.apply, db, "rows-update", {"table": "People", "set": {"U": 1}, "ids": [2]})
    assert "'U'" in message and "unique" in message
    # On an empty table, a required column needs no default.
    tables.apply(db, "tables-create", {"table": "Empty"})
    tables.apply(db, "columns-add", {"table": "Empty", "column": {"label": "R", "type": "text", "required": True}})


def test_drop_column_rebuilds_and_keeps_ids_counter_and_rules(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [
        {"Name": "a", "Email": "a@x", "Age": 1}, {"Name": "b", "Email": "b@x"}, {"Name": "c"}]})
    tables.apply(db, "rows-delete", {"table": "People", "ids": [3]})
    preview = tables.preview(db, "columns-drop", {"table": "People", "column": "Age"})
    assert preview["dataLoss"] == {"rowsLost": 1, "columnsLost": 1}
    tables.apply(db, "columns-drop", {"table": "People", "column": "Age"})
    rows = tables.query(db, {"table": "People"})
    assert rows["columns"] == ["Name", "Score", "Active", "Seen", "Email"]
    assert [r["id"] for r in rows["rows"]] == [1, 2]
    # The unique rule survived the rebuild, and a deleted ID is never reused.
    refused("constraint", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Name": "d", "Email": "a@x"}]})
    made = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "d"}]})
    assert made["ids"] == [4]
    preview = tables.preview(db, "tables-drop", {"table": "People"})
    assert preview["dataLoss"] == {"rowsLost": 3, "columnsLost": 5}


def test_limits_of_tables_and_columns(tables, db):
    columns = [{"label": f"c{i}", "type": "integer"} for i in range(65)]
    assert "64" in refused("invalid", tables.apply, db, "tables-create", {"table": "Wide", "columns": columns})
    tables.apply(db, "tables-create", {"table": "Wide", "columns": columns[:64]})
    refused("limit", tables.apply, db, "columns-add", {"table": "Wide", "column": {"label": "more", "type": "text"}})
    for number in range(48):
        tables.apply(db, "tables-create", {"table": f"T{number}"})
    refused("limit", tables.apply, db, "tables-create", {"table": "One too many"})
    assert len(tables.inspect(db)["tables"]) == 50


def test_database_files_ids_links_and_modes(tables, tmp_path):
    import os
    import stat
    for bad in ("../x", "X", "a" * 65, "a/b", "", "1abc", 5):
        refused("invalid", tables.create, "n", bad)
    made = tables.create("Name", "my-db")
    again = tables.create("Name", "my-db")
    assert again["replayed"] and again["changeId"] == made["changeId"]
    refused("conflict", tables.create, "Other", "my-db")
    path = tables.folder.path("my-db")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tables.folder.databases).st_mode) == 0o700
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # A database file that is a link is never followed.
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_bytes(path.read_bytes())
    os.symlink(elsewhere, tables.folder.databases / "linked.db")
    assert "symbolic link" in refused("invalid", tables.inspect, "linked")
    assert "linked" not in [d["resourceId"] for d in tables.list()["databases"]]
    # Nor a data folder reached through one.
    from tablesdb import Tables
    os.symlink(tables.folder.root, tmp_path / "alias")
    assert "symbolic link" in refused("invalid", Tables, tmp_path / "alias")
    # What a crash left between the steps of a creation is settled at the next open.
    (tables.folder.databases / "half.partial-1-2").write_bytes(b"junk")
    (tables.folder.databases / ".deletingold-1").write_bytes(b"junk")
    Tables(tables.folder.root)
    assert sorted(p.name for p in tables.folder.databases.iterdir()
                  if not p.name.startswith(("my-db", ".steps"))) == ["linked.db"]


def test_a_write_past_the_size_cap_fails_with_a_capacity_error(tmp_path):
    from tablesdb import Tables
    small = Tables(tmp_path / "small", max_bytes=96 * 1024)
    resource_id = small.create("Tiny")["resourceId"]
    small.apply(resource_id, "tables-create", {"table": "T", "columns": [{"label": "v", "type": "text"}]})
    before = small.inspect(resource_id)["revision"]
    message = refused("capacity", small.apply, resource_id, "rows-insert",
                      {"table": "T", "rows": [{"v": "x" * 4000}] * 100})
    assert "size cap" in message
    assert small.inspect(resource_id)["revision"] == before
    assert small.query(resource_id, {"table": "T"})["rows"] == []
