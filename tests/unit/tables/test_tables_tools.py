"""The add-on's tools in-process with ``MockContext``: the role and the mode of each
consumer, decided on every call from what the host says (never from the arguments)."""

from __future__ import annotations

import importlib.util

import pytest

from tables_samples import ADDON
from workbench.testing import MockContext

spec = importlib.util.spec_from_file_location("tables_main", ADDON / "main.py")
assert spec is not None and spec.loader is not None
main = importlib.util.module_from_spec(spec)
spec.loader.exec_module(main)


def ctx(folder, consumer):
    return MockContext(get_chat_context=lambda: {"dataFolder": str(folder), "consumer": consumer})


@pytest.fixture
def made(tmp_path):
    person = ctx(tmp_path, "person")
    rid = main.databases_create({"name": "Home", "resourceId": "home"}, person)["applied"]["resourceId"]
    main.tables_create({"resourceId": rid, "table": "T", "columns": [{"label": "v", "type": "integer"}]}, person)
    return tmp_path, rid


@pytest.mark.parametrize("consumer, kind, schema", [
    ("person", "applied", "applied"), ("chat", "applied", "applied"), ("headless", "proposal", "proposal"),
    ("schedule", "proposal", None), ("mcp", "proposal", None), (None, "proposal", None), ("admin", "proposal", None)])
def test_each_consumer_gets_its_role_and_mode(made, consumer, kind, schema):
    folder, rid = made
    asker = ctx(folder, consumer)
    got = main.rows_insert({"resourceId": rid, "table": "T", "rows": [{"v": 1}]}, asker)
    assert got["kind"] == kind
    assert ("change" in got) == (kind == "applied")  # only an applied change joins the change list
    if schema is None:
        with pytest.raises(main.TablesToolError, match="unknown: no such database"):
            main.columns_add({"resourceId": rid, "table": "T", "column": {"label": "w", "type": "text"}}, asker)
    else:
        assert main.columns_add({"resourceId": rid, "table": "T", "column": {"label": "w", "type": "text"}},
                                asker)["kind"] == schema
    for person_only in (main.proposals_list, main.changes_list, main.pages_approvals):
        if consumer != "person":
            with pytest.raises(main.TablesToolError, match="the person's own action"):
                person_only({}, asker)


@pytest.mark.parametrize("field", ["operationId", "approved", "digest", "role", "actor", "proposalId", "consumer"])
def test_identity_and_approval_fields_are_refused(made, field):
    folder, rid = made
    with pytest.raises(main.TablesToolError, match="set by the host"):
        main.rows_insert({"resourceId": rid, "table": "T", "rows": [{"v": 1}], field: "x"}, ctx(folder, "chat"))


def test_a_call_without_its_data_folder_is_refused(made):
    with pytest.raises(main.TablesToolError, match=r"\$data"):
        main.databases_list({}, MockContext(get_chat_context=lambda: {"consumer": "person"}))
    folder, rid = made
    with pytest.raises(main.TablesToolError, match="cannot create"):
        main.databases_create({"name": "x"}, ctx(folder, "mcp"))
    with pytest.raises(main.TablesToolError, match="ask the person"):
        main.databases_create({"name": "x"}, ctx(folder, "headless"))


def test_deleting_a_database_is_the_persons_and_needs_its_name(made):
    folder, rid = made
    with pytest.raises(main.TablesToolError, match="the person's own action"):
        main.databases_delete({"resourceId": rid, "confirmName": "Home"}, ctx(folder, "chat"))
    with pytest.raises(main.TablesToolError, match="not the database's name"):
        main.databases_delete({"resourceId": rid, "confirmName": "home"}, ctx(folder, "person"))
    person = ctx(folder, "person")
    assert main.databases_delete({"resourceId": rid, "confirmName": "Home"}, person)["deleted"] is True
    assert main.databases_list({}, person) == {"databases": [], "truncated": False}
    assert sorted(p.name for p in (folder / "databases").iterdir() if p.name != ".steps.lock") == []
    with pytest.raises(main.TablesToolError, match="unknown"):
        main.databases_inspect({"resourceId": rid}, person)


def test_a_chats_selected_database_is_the_persons_choice(made):
    folder, rid = made

    def in_chat(session, consumer="chat"):
        return MockContext(get_chat_context=lambda: {"dataFolder": str(folder), "consumer": consumer,
                                                     "sessionId": session})

    asked = main.rows_query({"table": "T"}, in_chat("s1"))
    assert asked["kind"] == "select_resource" and "nothing ran" in asked["note"]
    with pytest.raises(main.TablesToolError, match="the person's own action"):
        main.databases_select({"sessionId": "s1", "resourceId": rid}, in_chat("s1"))
    with pytest.raises(main.TablesToolError, match="unknown"):
        main.databases_select({"sessionId": "s1", "resourceId": "nope"}, ctx(folder, "person"))
    main.databases_select({"sessionId": "s1", "resourceId": rid}, ctx(folder, "person"))
    added = main.rows_insert({"table": "T", "rows": [{"v": 7}]}, in_chat("s1"))
    assert added["kind"] == "applied" and added["applied"]["resourceId"] == rid
    assert main.rows_query({"table": "T"}, in_chat("s1"))["rows"][0]["values"] == [7]
    # Another chat has no selection; a withdrawn database is refused like an unknown one.
    assert main.rows_query({"table": "T"}, in_chat("s2"))["kind"] == "select_resource"
    main.databases_delete({"resourceId": rid, "confirmName": "Home"}, ctx(folder, "person"))
    with pytest.raises(main.TablesToolError, match="unknown"):
        main.rows_query({"table": "T"}, in_chat("s1"))
    main.databases_select({"sessionId": "s1", "resourceId": None}, ctx(folder, "person"))
    assert main.rows_query({"table": "T"}, in_chat("s1"))["kind"] == "select_resource"


def test_a_replayed_creation_is_not_a_second_change(tmp_path):
    person = ctx(tmp_path, "chat")
    first = main.databases_create({"name": "Home", "resourceId": "home"}, person)
    again = main.databases_create({"name": "Home", "resourceId": "home"}, person)
    assert "change" in first and "change" not in again
    assert again["applied"]["changeId"] == first["applied"]["changeId"]
    with pytest.raises(main.TablesToolError, match="conflict"):
        main.databases_create({"name": "Other", "resourceId": "home"}, person)
