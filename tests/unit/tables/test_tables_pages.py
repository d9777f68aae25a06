"""The Tables pages in-process, as a face uses them: each card checked by the card
parser, its inputs filled as a person would, its action's data merged and its tool
called as the person; the databases list, a database's tables as tabs, the typed grid
with filter, sort and paging, saving edits as one undoable change, schema editing, and
the chat's selected database."""

from __future__ import annotations

import importlib.util

import pytest

from tables_samples import ADDON
from workbench.cards import ExecuteAction, action_data, default_values, input_values, parse_card, plain_text
from workbench.testing import MockContext

spec = importlib.util.spec_from_file_location("tables_pages_main", ADDON / "main.py")
assert spec is not None and spec.loader is not None
main = importlib.util.module_from_spec(spec)
spec.loader.exec_module(main)


def person(folder):
    return MockContext(get_chat_context=lambda: {"dataFolder": str(folder), "consumer": "person"})


class Face:
    """What the Pages screen does: open a page's card, fill inputs, press an action."""

    def __init__(self, folder) -> None:
        self.ctx = person(folder)

    def open(self, page: str):
        self.card = parse_card(getattr(main, f"pages_{page}")({}, self.ctx)["card"])
        self.values = default_values(self.card)
        return self.card

    @property
    def text(self) -> str:
        return plain_text(self.card)

    def press(self, title: str, **entered):
        action = next(a for a in self.card.all_actions() if isinstance(a, ExecuteAction) and a.title == title)
        merged, problems = input_values(self.card, {**self.values, **entered})
        assert not problems or action.associated_inputs == "none", problems  # as CardView checks
        tool = getattr(main, action.verb.replace("-", "_"))
        return tool(action_data(action, merged), self.ctx)


@pytest.fixture
def face(tmp_path):
    ctx = person(tmp_path)
    main.databases_create({"name": "Shop", "resourceId": "shop"}, ctx)
    main.tables_create({"resourceId": "shop", "table": "Items", "columns": [
        {"label": "Item", "type": "text", "required": True}, {"label": "Qty", "type": "integer"},
        {"label": "Price", "type": "real"}, {"label": "Paid", "type": "boolean"}]}, ctx)
    main.tables_create({"resourceId": "shop", "table": "Shops", "columns": [{"label": "Name", "type": "text"}]}, ctx)
    rows = [{"Item": f"item {n:02}", "Qty": n, "Price": n / 2, "Paid": n % 2 == 0} for n in range(1, 26)]
    rows[0]["Item"] = "=cmd()\x1b[2J"
    main.rows_insert({"resourceId": "shop", "table": "Items", "rows": rows}, ctx)
    return Face(tmp_path)


def grid_ids(card) -> list[str]:
    """The rows of the grid, by their first editable cell (row 1's is shown, not edited)."""
    return [i.id for i in card.inputs() if i.id.startswith("r") and i.id.endswith(".c1")]


def test_the_databases_list_opens_a_table_as_tabs_with_a_paged_typed_grid(face):
    face.open("table")
    assert "No database is open" in face.text
    face.open("databases")
    assert "Shop" in face.text and "Items (4 columns), Shops (1 columns)" in face.text
    face.press("Open Shop")
    card = face.open("table")
    assert "[▸ Items] (pages-view)" in face.text and "[Shops] (pages-view)" in face.text
    kinds = {i.id: type(i).__name__ for i in card.inputs() if i.id.startswith("r2.")}
    assert kinds == {"r2.c0": "TextInput", "r2.c1": "TextInput", "r2.c2": "NumberInput",
                     "r2.c3": "ChoiceSetInput", "r2.del": "ToggleInput"}
    assert len(grid_ids(card)) == 20 and "Next page" in face.text and "\x1b" not in face.text
    face.press("Next page")
    face.open("table")
    assert grid_ids(face.card) == ["r21.c1", "r22.c1", "r23.c1", "r24.c1", "r25.c1"] and "21–25" in face.text
    # Filter and sort from the form; the grid shows what they select.
    face.press("Apply filter and sort", **{"filter.column": "Qty", "filter.op": "gte", "filter.value": "20",
                                           "sort.column": "Price", "sort.direction": "desc"})
    face.open("table")
    assert grid_ids(face.card) == ["r25.c1", "r24.c1", "r23.c1", "r22.c1", "r21.c1", "r20.c1"]
    face.press("Clear")
    face.press("Shops")
    face.open("table")
    assert "[▸ Shops]" in face.text and "No row yet." in face.text


def test_saving_the_grid_is_one_undoable_change_against_the_revision_shown(face, tmp_path):
    face.open("databases")
    face.press("Open Shop")
    face.open("table")
    saved = face.press("Save changes", **{"r2.c1": "200", "r2.c3": "", "r3.c1": "200", "r3.c3": ""})
    assert saved["kind"] == "applied" and saved["applied"]["action"] == "rows-update"
    assert saved["applied"]["count"] == 2 and saved["change"]["undo"]["tool"] == "changes-undo"
    face.open("table")
    assert face.values["r2.c1"] == "200" and face.values["r3.c3"] == "" and face.values["r4.c1"] == "4"
    # Different values for different rows would be several changes: refused, nothing saved.
    with pytest.raises(main.TablesToolError, match="one change you can undo"):
        face.press("Save changes", **{"r4.c1": "1", "r5.c1": "2"})
    with pytest.raises(main.TablesToolError, match="must be a whole number"):
        face.press("Save changes", **{"r4.c1": "four"})
    # A page drawn before someone else's change saves nothing.
    main.rows_update({"resourceId": "shop", "table": "Items", "set": {"Qty": 7}, "ids": [9]}, person(tmp_path))
    with pytest.raises(main.TablesToolError, match="stale"):
        face.press("Save changes", **{"r4.c1": "44"})
    face.open("table")
    deleted = face.press("Save changes", **{"r1.del": True, "r4.del": True})
    assert deleted["applied"]["action"] == "rows-delete" and deleted["applied"]["count"] == 2
    added = face.press("Add row", **{"new.c0": "a pen", "new.c2": 1.5, "new.c3": "true"})
    assert added["applied"]["action"] == "rows-insert"
    # Each save is in the change list, newest first, and undone by the person.
    listed = main.changes_list({"resourceId": "shop"}, face.ctx)["changes"]
    assert [c["action"] for c in listed[:3]] == ["rows-insert", "rows-delete", "rows-update"]
    main.changes_undo(added["change"]["undo"]["arguments"], face.ctx)
    main.changes_undo(deleted["change"]["undo"]["arguments"], face.ctx)
    face.open("table")
    # A cell holding control characters is shown, not an input: no save can rewrite it.
    assert "r1.c0" not in face.values and "r1.c1" in face.values and "=cmd()" in face.text
    face.press("Save changes", **{"r1.c1": "9"})
    found = main.rows_query({"resourceId": "shop", "table": "Items", "filter": {"column": "_id", "op": "eq",
                                                                               "value": 1}}, face.ctx)
    assert found["rows"][0]["values"][:2] == ["=cmd()\x1b[2J", 9]


def test_the_schema_forms_add_rename_and_drop_columns_and_add_tables(face):
    face.open("databases")
    face.press("Open Shop")
    face.open("table")
    with pytest.raises(main.TablesToolError, match="give it a default"):
        face.press("Add column", **{"add.label": "Note", "add.required": True})
    face.press("Add column", **{"add.label": "Note", "add.type": "text", "add.required": True,
                                "add.default": "none", "add.unique": False})
    face.open("table")
    assert "Note:  text, required, default none" in face.text
    face.press("Rename column", column="Note", **{"rename.to": "Remark"})
    face.open("table")
    assert "Remark (text)" in face.text
    face.press("Drop column", column="Remark")
    face.press("Add table", **{"table.new": "Suppliers"})
    face.open("table")
    assert "Remark" not in face.text and "[Suppliers] (pages-view)" in face.text
    found = main.databases_inspect({"resourceId": "shop"}, face.ctx)
    assert [t["label"] for t in found["tables"]] == ["Items", "Shops", "Suppliers"]


def test_the_chats_selected_database_is_chosen_on_the_databases_page(face, tmp_path):
    face.open("databases")
    face.press("Select for that chat", sessionId="s-42", resourceId="shop")
    face.open("databases")
    assert "Selected in: s-42" in face.text
    chat = MockContext(get_chat_context=lambda: {"dataFolder": str(tmp_path), "consumer": "chat",
                                                 "sessionId": "s-42"})
    assert main.databases_inspect({}, chat)["name"] == "Shop"


def test_page_actions_are_the_persons_own(face, tmp_path):
    for consumer in ("chat", "headless", "mcp"):
        other = MockContext(get_chat_context=lambda c=consumer: {"dataFolder": str(tmp_path), "consumer": c})
        for tool in (main.pages_table, main.pages_view, main.pages_rows_save, main.pages_rows_add,
                     main.pages_schema):
            with pytest.raises(main.TablesToolError, match="the person's own action"):
                tool({"resourceId": "shop", "table": "Items"}, other)


@pytest.mark.parametrize("tool, args, words", [
    ("pages_rows_save", {"ids": "1", "revision": {}}, "ids lists the 1 to 20 rows"),
    ("pages_rows_save", {"ids": list(range(1, 22)), "revision": {}}, "ids lists the 1 to 20 rows"),
    ("pages_rows_save", {"ids": [1], "revision": {"schema": 0, "data": 0}}, "stale"),
    ("pages_rows_save", {"ids": [1], "table": "Nope", "revision": {}}, "no table 'Nope'"),
    ("pages_rows_add", {}, "fill in at least one cell"),
    ("pages_rows_add", {"new.c3": "maybe"}, "yes, no or empty"),
    ("pages_schema", {"op": "truncate"}, "op is add, rename, drop or table"),
    ("pages_schema", {"op": "drop", "column": "_id"}, "choose the column"),
    ("pages_schema", {"op": "add", "add.label": "x'); DROP TABLE t;--", "add.type": "blob"}, "type"),
    ("pages_view", {"apply": True, "filter.column": "Secret", "filter.op": "eq"}, "no column 'Secret'"),
    ("pages_view", {"apply": True, "filter.column": "Qty", "filter.op": "glob"}, "the operator is one of"),
    ("pages_view", {"resourceId": "../../etc", "table": "Items"}, "resourceId must match"),
])
def test_hostile_page_actions_are_refused_naming_why_and_change_nothing(face, tool, args, words):
    before = main.databases_inspect({"resourceId": "shop"}, face.ctx)
    with pytest.raises(main.TablesToolError) as raised:
        getattr(main, tool)({"resourceId": "shop", "table": "Items", **args}, face.ctx)
    assert words in str(raised.value)
    assert main.databases_inspect({"resourceId": "shop"}, face.ctx) == before
