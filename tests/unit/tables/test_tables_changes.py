"""Changes: previews rolled back, applies against the previewed revision, receipts in
the same transaction, one receipt per operation id; undo with its bounds; proposals."""

from __future__ import annotations

import pytest

from tablesdb import TablesError, changes


def refused(kind, call, *args, **kwargs):
    with pytest.raises(TablesError) as caught:
        call(*args, **kwargs)
    assert caught.value.kind == kind, caught.value.to_json()
    return caught.value


def rows(tables, db):
    return [(r["id"], r["values"][0]) for r in tables.query(db, {"table": "People"})["rows"]]


def receipts(tables, db):
    import sqlite3
    with sqlite3.connect(tables.folder.path(db)) as conn:
        return [r[0] for r in conn.execute("SELECT operation_id FROM tables_receipts")]


def test_preview_is_exact_and_rolled_back(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": f"n{i}", "Age": i} for i in range(12)]})
    before = tables.inspect(db)
    shown = tables.preview(db, "rows-update", {"table": "People", "set": {"Age": 99},
                                               "filter": {"column": "Age", "op": "gte", "value": 1}})
    assert shown["count"] == 11 and len(shown["sample"]) == 10
    assert shown["sample"][0] == {"id": 2, "before": {"Age": 1}, "after": {"Age": 99}}
    assert shown["revision"] == before["revision"]
    gone = tables.preview(db, "rows-delete", {"table": "People", "ids": [1, 2]})
    assert gone["dataLoss"] == {"rows": 2} and gone["sample"][0]["values"]["Name"] == "n0"
    assert tables.inspect(db) == before and len(rows(tables, db)) == 12
    # The hash names the exact set of rows.
    applied = tables.apply(db, "rows-update", {"table": "People", "set": {"Age": 99},
                                               "filter": {"column": "Age", "op": "gte", "value": 1}},
                           revision=shown["revision"])
    assert applied["affectedHash"] == shown["affectedHash"] and applied["ids"] == list(range(2, 13))
    # A unique rule that would break fails at preview already.
    tables.apply(db, "rows-update", {"table": "People", "set": {"Email": "a@x"}, "ids": [1]})
    refused("constraint", tables.preview, db, "rows-update", {"table": "People", "set": {"Email": "a@x"}, "ids": [2]})


def test_stale_revision_receipts_and_operation_ids(tables, db):
    revision = tables.inspect(db)["revision"]
    first = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}]}, operation_id="op-1",
                         revision=revision)
    # The same id with the same request replays the receipt, never applies twice.
    again = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}]}, operation_id="op-1",
                         revision=revision)
    assert again["replayed"] and again["changeId"] == first["changeId"] and rows(tables, db) == [(1, "a")]
    refused("conflict", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Name": "b"}]},
            operation_id="op-1")
    # Applying against a revision the database moved past is stale; nothing changes.
    stale = refused("stale", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Name": "b"}]},
                    revision=revision)
    assert stale.extra["revision"] == {"schema": 1, "data": 1}
    # A refused operation leaves no receipt, so its id can be used again.
    refused("invalid", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Nope": 1}]},
            operation_id="op-2")
    assert "op-2" not in receipts(tables, db)
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "c"}]}, operation_id="op-2")
    assert rows(tables, db) == [(1, "a"), (2, "c")]


@pytest.mark.parametrize("args, kind, why", [
    ({"set": {"Age": 1}}, "invalid", "exactly one of ids or filter"),
    ({"set": {"Age": 1}, "ids": [1], "filter": {"column": "Age", "op": "is-null"}}, "invalid", "exactly one"),
    ({"set": {"Age": 1}, "ids": [1, 1]}, "invalid", "distinct"),
    ({"set": {"Age": 1}, "ids": [0]}, "invalid", "positive"),
    ({"set": {"Age": 1}, "ids": [99]}, "invalid", "no row 99"),
    ({"set": {"Age": 1}, "filter": {"column": "Name", "op": "eq", "value": "zzz"}}, "invalid", "matches no row"),
    ({"set": {}, "ids": [1]}, "invalid", "at least one"),
    ({"set": {"_id": 5}, "ids": [1]}, "invalid", "row ID"),
    ({"set": {"Name": None}, "ids": [1]}, "invalid", "required"),
])
def test_update_names_its_rows_exactly(tables, db, args, kind, why):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}, {"Name": "b"}]})
    assert why in refused(kind, tables.apply, db, "rows-update", {"table": "People", **args}).message


def test_one_change_touches_at_most_1000_rows_and_insert_100(tables, db):
    for _ in range(11):
        tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "x"}] * 100})
    refused("invalid", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Name": "x"}] * 101})
    assert "narrow" in refused("limit", tables.apply, db, "rows-delete", {
        "table": "People", "filter": {"column": "Name", "op": "eq", "value": "x"}}).message
    refused("invalid", tables.apply, db, "rows-delete", {"table": "People", "ids": list(range(1, 1002))})
    done = tables.apply(db, "rows-delete", {"table": "People", "filter": {"column": "_id", "op": "lte", "value": 1000}})
    assert done["count"] == 1000
    # Defaults and required columns on insert; the whole batch or nothing.
    refused("invalid", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Name": "ok"}, {"Age": 1}]})
    refused("invalid", tables.apply, db, "rows-insert", {"table": "People", "rows": [{"Name": None, "Active": True}]})
    assert len(tables.query(db, {"table": "People", "limit": 500})["rows"]) == 100


def test_undo_unwinds_every_kind_of_change_newest_first(tables, db):
    start = tables.query(db, {"table": "People"})
    steps = [
        ("rows-insert", {"table": "People", "rows": [{"Name": "a", "Email": "a@x"}, {"Name": "b"}]}),
        ("rows-update", {"table": "People", "set": {"Age": 5}, "ids": [1, 2]}),
        ("columns-add", {"table": "People", "column": {"label": "Note", "type": "text", "default": "n"}}),
        ("columns-rename", {"table": "People", "column": "Note", "newName": "Memo"}),
        ("columns-drop", {"table": "People", "column": "Email"}),
        ("rows-delete", {"table": "People", "ids": [2]}),
        ("tables-rename", {"table": "People", "newName": "Folk"}),
        ("tables-create", {"table": "Other", "columns": [{"label": "v", "type": "integer"}]}),
        ("tables-drop", {"table": "Folk"}),
    ]
    seen = []
    for action, args in steps:
        seen.append(tables.inspect(db)["tables"] and (tables.inspect(db), _all_rows(tables, db)))
        tables.apply(db, action, args)
    listed = tables.changes(db)
    assert [c["action"] for c in listed[:len(steps)]] == [a for a, _ in reversed(steps)]
    assert [c["undoable"] for c in listed] == [True] + [False] * (len(listed) - 1)
    # An older change waits: it is stale while a newer one stands, and says what came after.
    stale = refused("stale", tables.undo, db, listed[1]["changeId"])
    assert "dropped table Folk" in stale.message
    for number, change in enumerate(listed[:len(steps)]):
        tables.undo(db, change["changeId"])
        shape, data = seen[len(steps) - 1 - number]
        now = tables.inspect(db)
        assert now["tables"] == shape["tables"] and _all_rows(tables, db) == data, change["action"]
    assert tables.query(db, {"table": "People"})["rows"] == start["rows"]
    # Row IDs are never reused, even after an undo of their insert.
    assert tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "z"}]})["ids"] == [3]


def _all_rows(tables, db):
    return {t["label"]: tables.query(db, {"table": t["label"]})["rows"] for t in tables.inspect(db)["tables"]}


def test_undo_is_idempotent_bounded_and_has_no_redo(tables, db, monkeypatch):
    made = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}]})
    undone = tables.undo(db, made["changeId"])
    assert tables.undo(db, made["changeId"])["operationId"] == undone["operationId"]  # same id: same receipt
    assert refused("already_undone", tables.undo, db, made["changeId"], operation_id="other").kind
    # The undo has no change set of its own: nothing new to undo.
    listed = tables.changes(db)
    assert [(c["action"], c["state"], c["undoable"]) for c in listed[:2]] == [
        ("rows-insert", "undone", False), ("tables-create", "applied", True)]  # the run unwinds further
    # Retention: 7 days, then expired.
    old = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "b"}]})
    import time
    refused("expired", tables.undo, db, old["changeId"], now=time.time() + 7 * 24 * 3600 + 60)
    refused("expired", tables.undo, db, old["changeId"])
    # Bounds: an inverse too large is not kept, and the result says so at apply time.
    monkeypatch.setattr(changes, "MAX_INVERSE", 200)
    kept = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "c" * 300}]})
    big = tables.apply(db, "rows-delete", {"table": "People", "ids": kept["ids"]})
    assert big["undoable"] is False and big["reason"] == changes.TOO_LARGE
    assert "too large" in refused("not_undoable", tables.undo, db, big["changeId"]).message
    # The database keeps at most its budget of inverses, dropping the oldest first.
    monkeypatch.setattr(changes, "MAX_INVERSE", 4096)
    monkeypatch.setattr(changes, "MAX_INVERSES", 400)
    three = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "d" * 150}] * 3})["ids"]
    first, second, third = (tables.apply(db, "rows-delete", {"table": "People", "ids": [row]}) for row in three)
    states = {c["changeId"]: c["state"] for c in tables.changes(db)}
    assert states[first["changeId"]] == "dropped" and states[third["changeId"]] == "applied"
    assert second["undoable"] and third["undoable"]


def test_database_rename_and_creation_undo(tables, db):
    renamed = tables.apply(db, "databases-rename", {"name": "Work"})
    assert renamed["revision"] == {"schema": 1, "data": 0}  # a rename does not move the revision
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}]})
    tables.undo(db, renamed["changeId"])  # still undoable: not renamed again
    assert tables.inspect(db)["name"] == "Home"
    fresh = tables.create("Scratch")
    touched = tables.create("Touched")
    tables.apply(touched["resourceId"], "tables-create", {"table": "T"})
    refused("stale", tables.undo, touched["resourceId"], touched["changeId"])
    tables.undo(fresh["resourceId"], fresh["changeId"])
    assert not tables.exists(fresh["resourceId"]) and tables.exists(touched["resourceId"])
    # Once every later change is undone, the creation itself can be undone (newest first).
    tables.undo(touched["resourceId"], tables.changes(touched["resourceId"])[0]["changeId"])
    tables.undo(touched["resourceId"], touched["changeId"])
    assert not tables.exists(touched["resourceId"])
    refused("unknown", tables.inspect, fresh["resourceId"])


def test_proposals_wait_apply_once_and_go_stale(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}, {"Name": "b"}]})
    before = tables.inspect(db)
    made = tables.propose(db, "rows-delete", {"table": "People", "ids": [1]}, consumer="headless")
    assert made["state"] == "pending" and made["preview"]["count"] == 1
    assert tables.inspect(db) == before  # nothing changed yet
    stored = tables.proposal(db, made["proposalId"])
    assert [p["proposalId"] for p in tables.proposals()] == [made["proposalId"]]
    refused("invalid", tables.confirm, db, made["proposalId"], "0" * 64)  # not the digest shown
    receipt = tables.confirm(db, made["proposalId"], stored["digest"])
    assert receipt["count"] == 1 and rows(tables, db) == [(2, "b")]
    assert tables.confirm(db, made["proposalId"], stored["digest"])["replayed"]
    assert tables.proposal(db, made["proposalId"])["state"] == "applied" and tables.proposals() == []
    # A write to any table makes a pending proposal stale; it never applies later.
    waiting = tables.propose(db, "rows-update", {"table": "People", "set": {"Age": 1}, "ids": [2]}, consumer="mcp")
    tables.apply(db, "tables-create", {"table": "Unrelated"})
    digest = tables.proposal(db, waiting["proposalId"])["digest"]
    refused("stale", tables.confirm, db, waiting["proposalId"], digest)
    assert tables.proposal(db, waiting["proposalId"])["state"] == "stale"
    refused("invalid", tables.confirm, db, waiting["proposalId"], digest)
    # Cancelled and expired proposals cannot be confirmed.
    other = tables.propose(db, "rows-delete", {"table": "People", "ids": [2]}, consumer="schedule")
    tables.cancel(db, other["proposalId"])
    refused("invalid", tables.confirm, db, other["proposalId"], tables.proposal(db, other["proposalId"])["digest"])
    late = tables.propose(db, "rows-delete", {"table": "People", "ids": [2]}, consumer="schedule")
    item = tables.proposal(db, late["proposalId"], now=late["expiresAt"] + 1)
    assert item["state"] == "expired"
    refused("invalid", tables.confirm, db, late["proposalId"], item["digest"], now=late["expiresAt"] + 1)
    assert rows(tables, db) == [(2, "b")]
    # A proposal made against a revision the database moved past is stale at once.
    refused("stale", tables.propose, db, "rows-delete", {"table": "People", "ids": [2]}, consumer="mcp",
            revision={"schema": 0, "data": 0})
    # A proposal the database would refuse is refused at once and nothing waits.
    refused("invalid", tables.propose, db, "rows-delete", {"table": "People", "ids": [7]}, consumer="mcp")


def test_the_approval_card_is_drawn_from_the_stored_proposal(tables, db):
    from tablesdb.card import proposal_card
    from workbench.cards import parse_card, plain_text
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "\x1b[31mred"}]})
    made = tables.propose(db, "rows-update", {"table": "People", "set": {"Age": 3}, "ids": [1]}, consumer="headless")
    item = tables.proposal(db, made["proposalId"])
    card = proposal_card(item)
    parsed = parse_card(card)
    text = plain_text(parsed)
    assert "rows-update" in text and "updated 1 row of People" in text and "Home" in text
    assert "\x1b" not in text
    confirm = card["actions"][0]
    assert confirm["verb"] == "proposals-confirm" and confirm["data"]["digest"] == item["digest"]
    tables.cancel(db, made["proposalId"])
    closed = proposal_card(tables.proposal(db, made["proposalId"]))
    assert closed["actions"] == [] and "cancelled" in plain_text(parse_card(closed))
