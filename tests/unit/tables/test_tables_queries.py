"""Row queries and aggregates: the filter tree, its operators and NULL rules, sorts,
cursors tied to the revision, page caps, and integers past 2^53 as strings."""

from __future__ import annotations

import base64
import json

import pytest

from tablesdb import TablesError

ROWS = [{"Name": "Ann", "Age": 30, "Score": 1.5, "Active": True, "Email": "ann@x"},
        {"Name": "bob", "Age": None, "Score": -2.0, "Active": False},
        {"Name": "100% real_name\\", "Age": 30, "Seen": "2026-01-01T00:00:00Z"},
        {"Name": "ANNA", "Age": "9007199254740993", "Active": None}]


@pytest.fixture
def people(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": ROWS})
    return db


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One populated database for the tests that only read (files cost fsyncs)."""
    from tables_samples import PEOPLE
    from tablesdb import Tables
    tables = Tables(tmp_path_factory.mktemp("shared"))
    resource_id = tables.create("Shared")["resourceId"]
    tables.apply(resource_id, "tables-create", {"table": "People", "columns": PEOPLE})
    tables.apply(resource_id, "rows-insert", {"table": "People", "rows": ROWS})
    return tables, resource_id


def ids(tables, db, filter_, **more):
    return [r["id"] for r in tables.query(db, {"table": "People", "filter": filter_, **more})["rows"]]


def refused(kind, call, *args):
    with pytest.raises(TablesError) as caught:
        call(*args)
    assert caught.value.kind == kind, caught.value.to_json()
    return caught.value.message


@pytest.mark.parametrize("filter_, expected", [
    ({"column": "Age", "op": "eq", "value": 30}, [1, 3]),
    ({"column": "Age", "op": "ne", "value": 30}, [4]),             # ne never matches NULL
    ({"or": [{"column": "Age", "op": "ne", "value": 30}, {"column": "Age", "op": "is-null"}]}, [2, 4]),
    ({"column": "Age", "op": "gt", "value": "9007199254740992"}, [4]),
    ({"column": "Age", "op": "in", "values": [30, 1]}, [1, 3]),
    ({"column": "Name", "op": "eq", "value": "ann"}, []),           # eq on text is case-sensitive
    ({"column": "Name", "op": "starts-with", "value": "ann"}, [1, 4]),  # matching is ASCII case-insensitive
    ({"column": "Name", "op": "contains", "value": "%"}, [3]),      # % and _ are plain characters
    ({"column": "Name", "op": "contains", "value": "l_n"}, [3]),
    ({"column": "Name", "op": "ends-with", "value": "\\"}, [3]),
    ({"column": "Name", "op": "contains", "value": "_"}, [3]),
    ({"column": "Active", "op": "eq", "value": False}, [2]),
    ({"column": "Active", "op": "ne", "value": True}, [2]),
    ({"column": "Active", "op": "is-null"}, [4]),
    ({"column": "Seen", "op": "gte", "value": "2026-01-01T01:00:00+01:00"}, [3]),
    ({"column": "_id", "op": "lt", "value": 3}, [1, 2]),
    ({"and": [{"column": "Score", "op": "lt", "value": 0}, {"column": "Name", "op": "is-not-null"}]}, [2]),
])
def test_filter_operators_and_null_rules(shared, filter_, expected):
    assert ids(*shared, filter_) == expected


@pytest.mark.parametrize("filter_, why", [
    ({"column": "Age", "op": "eq", "value": None}, "null"),
    ({"column": "Age", "op": "in", "values": []}, "1 to 100"),
    ({"column": "Age", "op": "in", "values": list(range(101))}, "1 to 100"),
    ({"column": "Active", "op": "lt", "value": True}, "operators"),
    ({"column": "Age", "op": "contains", "value": "3"}, "operators"),
    ({"column": "Name", "op": "contains", "value": "x" * 1025}, "1024"),
    ({"column": "Name", "op": "eq", "value": 5}, "text"),
    ({"column": "Nope", "op": "eq", "value": 5}, "no column"),
    ({"column": "Age", "op": "eq", "value": 1, "sql": "1=1"}, "does not take"),
    ({"and": [], "or": []}, "nothing else"),
    ({"and": []}, "non-empty"),
    ({"column": "Age", "op": "is-null", "value": 1}, "no value"),
    ([], "object"),
])
def test_bad_filters_are_refused(shared, filter_, why):
    tables, people = shared
    assert why in refused("invalid", tables.query, people, {"table": "People", "filter": filter_})


def test_deep_and_wide_filter_trees_are_refused(shared):
    tables, people = shared
    node = {"column": "Age", "op": "eq", "value": 30}
    for _ in range(7):
        node = {"and": [node]}
    assert ids(tables, people, node) == [1, 3]  # 8 levels
    assert "8 levels" in refused("limit", tables.query, people, {"table": "People", "filter": {"or": [node]}})
    wide = {"or": [{"column": "Age", "op": "eq", "value": i} for i in range(63)]}
    assert ids(tables, people, wide) == [1, 3]  # 64 nodes
    wide["or"].append({"column": "Age", "op": "eq", "value": 99})
    assert "64 nodes" in refused("limit", tables.query, people, {"table": "People", "filter": wide})
    hostile = {"and": [{"and": [{"and": [{}]}]}] * 1}
    for _ in range(5000):
        hostile = {"and": [hostile]}
    refused("limit", tables.query, people, {"table": "People", "filter": hostile})


def test_sorts_nulls_first_ascending_and_ties_by_row_id(shared):
    tables, people = shared
    by = lambda direction: [r["id"] for r in tables.query(people, {  # noqa: E731
        "table": "People", "sort": [{"column": "Age", "direction": direction}]})["rows"]]
    assert by("asc") == [2, 1, 3, 4]
    assert by("desc") == [4, 1, 3, 2]
    assert "4" in refused("invalid", tables.query, people, {"table": "People", "sort": [{"column": "Age"}] * 5})


def test_pages_cursors_and_their_revision(tables, people):
    first = tables.query(people, {"table": "People", "limit": 3, "sort": [{"column": "Name"}]})
    assert first["hasMore"] and len(first["rows"]) == 3
    second = tables.query(people, {"table": "People", "limit": 3, "sort": [{"column": "Name"}],
                                   "cursor": first["cursor"]})
    assert not second["hasMore"] and "cursor" not in second
    assert {r["id"] for r in first["rows"] + second["rows"]} == {1, 2, 3, 4}
    # Another query cannot use it, and after a change it is no longer valid.
    assert "start again" in refused("stale", tables.query, people, {"table": "People", "cursor": first["cursor"]})
    tables.apply(people, "rows-insert", {"table": "People", "rows": [{"Name": "new"}]})
    assert "start again" in refused("stale", tables.query, people, {
        "table": "People", "limit": 3, "sort": [{"column": "Name"}], "cursor": first["cursor"]})
    refused("invalid", tables.query, people, {"table": "People", "cursor": "not-a-cursor!"})
    for limit in (0, 501, True, "5"):
        refused("invalid", tables.query, people, {"table": "People", "limit": limit})
    # Offsets beyond 100000 are refused, however the cursor was made.
    data = json.loads(base64.urlsafe_b64decode(first["cursor"] + "=="))
    revision = tables.inspect(people)["revision"]
    forged = dict(data, o=100_001, r=[revision["schema"], revision["data"]])
    token = base64.urlsafe_b64encode(json.dumps(forged).encode()).decode().rstrip("=")
    assert "100000" in refused("limit", tables.query, people, {
        "table": "People", "limit": 3, "sort": [{"column": "Name"}], "cursor": token})


def test_a_page_is_cut_at_512_kib(tables, db):
    big = "x" * 200_000
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": big}] * 5})
    page = tables.query(db, {"table": "People", "limit": 500})
    assert len(page["rows"]) == 2 and page["hasMore"]
    rest = tables.query(db, {"table": "People", "limit": 500, "cursor": page["cursor"]})
    assert [r["id"] for r in rest["rows"]][:1] == [3]


def test_integers_past_2_53_are_exact_strings_and_huge_values_refused(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [
        {"Name": "a", "Age": "-9223372036854775808"}, {"Name": "b", "Age": 2 ** 53}, {"Name": "c", "Age": " 12 "}]})
    values = [r["values"][1] for r in tables.query(db, {"table": "People"})["rows"]]
    assert values == ["-9223372036854775808", 2 ** 53, 12]
    for bad in ("9223372036854775808", "1e3", 2.5, "0x10"):
        refused("invalid", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Name": "d", "Age": bad}]})
    message = refused("invalid", tables.apply, db, "rows-insert",
                      {"table": "People", "rows": [{"Name": "x" * (1024 * 1024 + 1)}]})
    assert "row 1, column 'Name'" in message and "longer" in message
    assert len(tables.query(db, {"table": "People"})["rows"]) == 3


def test_aggregates(tables, people):
    got = tables.aggregate(people, {"table": "People", "aggregates": [
        {"fn": "count"}, {"fn": "count", "column": "Age"}, {"fn": "sum", "column": "Score"},
        {"fn": "min", "column": "Name"}, {"fn": "max", "column": "Seen"}, {"fn": "avg", "column": "Score"}]})
    assert got["values"] == [4, 3, -0.5, "100% real_name\\", "2026-01-01T00:00:00.000000000Z", -0.25]
    grouped = tables.aggregate(people, {"table": "People", "aggregates": [{"fn": "count"}], "groupBy": "Active"})
    assert [(g["key"], g["values"][0]) for g in grouped["groups"]] == [(None, 1), (False, 1), (True, 2)]
    assert not grouped["truncated"]
    for bad in ([{"fn": "sum", "column": "Name"}], [{"fn": "max", "column": "Active"}], [{"fn": "median"}], [],
                [{"fn": "count"}] * 9):
        refused("invalid", tables.aggregate, people, {"table": "People", "aggregates": bad})
    tables.apply(people, "rows-insert", {"table": "People", "rows": [{"Name": "big", "Age": "9223372036854775807"}]})
    assert "overflows" in refused("invalid", tables.aggregate, people,
                                  {"table": "People", "aggregates": [{"fn": "sum", "column": "Age"}]})


def test_groups_are_capped_at_500(tables, db):
    for start in range(0, 501, 100):
        tables.apply(db, "rows-insert", {"table": "People", "rows": [
            {"Name": str(i)} for i in range(start, min(start + 100, 501))]})
    grouped = tables.aggregate(db, {"table": "People", "aggregates": [{"fn": "count"}], "groupBy": "Name"})
    assert len(grouped["groups"]) == 500 and grouped["truncated"]


def test_a_slow_operation_is_stopped_and_changes_nothing(tables, db, monkeypatch):
    from tablesdb import files
    for start in range(0, 1000, 100):
        tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": str(i)} for i in range(start, start + 100)]})
    before = tables.inspect(db)["revision"]
    monkeypatch.setattr(files, "OPERATION_S", -1.0)  # every operation is past its deadline at once
    assert "10 s" in refused("timeout", tables.query, db, {"table": "People", "sort": [{"column": "Name"}],
                                                           "filter": {"column": "Name", "op": "contains", "value": "9"}})
    refused("timeout", tables.apply, db, "rows-update", {"table": "People", "set": {"Age": 1},
                                                          "filter": {"column": "Name", "op": "contains", "value": "1"}})
    monkeypatch.setattr(files, "OPERATION_S", 10.0)
    assert tables.inspect(db)["revision"] == before
