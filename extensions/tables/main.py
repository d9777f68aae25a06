"""The Tables add-on's tools: typed databases a chat reads and changes.

Every tool opens the add-on's own data folder (``$data``, told by
``ctx.getChatContext().dataFolder``) and checks the role of the consumer the host
names (``consumer``) on every call:

========== ====== =================================================
consumer   role   a change
========== ====== =================================================
person     owner  applies (the person's own action), undoable
chat       owner  applies at once; undo is the safety net
headless   owner  waits as a proposal for the person's confirmation
schedule   editor waits as a proposal (rows only)
mcp        editor waits as a proposal (rows only)
========== ====== =================================================

A consumer the host does not name gets the least: an editor whose changes wait.
An editor's schema change is refused with the answer of an unknown database.
Confirming or cancelling a proposal, undoing a change and deleting a database are
the person's own actions: those tools refuse every other consumer.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from tablesdb import SCHEMA_ACTIONS, Tables, TablesError  # noqa: E402
from tablesdb import grid  # noqa: E402
from tablesdb.card import approvals_card, databases_card, proposal_card  # noqa: E402
from tablesdb.errors import UNKNOWN_DATABASE  # noqa: E402

POLICY = {"person": ("owner", "apply"), "chat": ("owner", "apply"), "headless": ("owner", "propose"),
          "schedule": ("editor", "propose"), "mcp": ("editor", "propose")}
LEAST = ("editor", "propose")
FORBIDDEN = {"actor", "userId", "user", "role", "approved", "approval", "confirm", "confirmed", "digest",
             "proposalId", "operationId", "tool", "consumer"}
APPLIED_NOTE = ("Say plainly what changed and whether the person can undo it. Only the person can undo it "
                "(the change list: u on the call's card, or `workbench changes undo`); no tool of yours can.")
PROPOSED_NOTE = ("Nothing changed yet. The change waits as a proposal for the person to confirm in its "
                 "approval card (proposals-card, a person-only tool); you cannot confirm it.")
UNDO_TOOL = "changes-undo"


class TablesToolError(Exception):
    """A refused call, as the model and the person read it: ``kind: message``."""


def _fail(exc: TablesError) -> TablesToolError:
    extra = {k: v for k, v in exc.extra.items()}
    text = f"{exc.kind}: {exc.message}"
    if extra:
        text += " " + json.dumps(extra, ensure_ascii=False)
    return TablesToolError(text)


def _context(ctx: Any) -> dict[str, Any]:
    try:
        return dict(ctx.get_chat_context() or {})
    except Exception:
        return {}


def _open(ctx: Any) -> tuple[Tables, str]:
    chat = _context(ctx)
    folder = chat.get("dataFolder")
    if not folder:
        raise TablesToolError("unavailable: the add-on's data folder ($data) was not granted to this call")
    return Tables(folder), str(chat.get("consumer") or "")


def _policy(consumer: str) -> tuple[str, str]:
    return POLICY.get(consumer, LEAST)


def _checked(args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise TablesToolError("invalid: the arguments must be an object")
    forged = sorted(set(args) & FORBIDDEN)
    if forged:
        raise TablesToolError(f"invalid: the arguments may not carry {', '.join(forged)}: identity, role, "
                              "approval and operation fields are set by the host")
    return dict(args)


def _run(work):
    try:
        return work()
    except TablesError as exc:
        raise _fail(exc) from None


def _resource(args: dict[str, Any]) -> str:
    resource_id = args.pop("resourceId", None)
    if resource_id is None:
        raise TablesToolError("invalid: name the database with resourceId (databases-list lists them)")
    return resource_id


class SelectResource(Exception):
    """No database named and none selected for the chat: the tool runs nothing."""


SELECT_NOTE = ("No database is selected for this chat and the call named none, so nothing ran. Ask the "
               "person which database to use (databases-list lists them); only the person selects one.")


def _chosen(args: dict[str, Any], ctx: Any) -> str:
    """The database a model's call names, or else the one the person selected for the
    chat (``databases-select``); ``SelectResource`` when there is neither."""
    if args.get("resourceId") is not None:
        return _resource(args)
    args.pop("resourceId", None)
    chat = _context(ctx)
    session = chat.get("sessionId")
    folder = chat.get("dataFolder")
    found = _selections(folder).get(session) if session and folder else None
    if found is None:
        raise SelectResource()
    return found


def _selections(folder: str | None) -> dict[str, str]:
    if not folder:
        return {}
    try:
        data = json.loads((Path(folder) / SELECTIONS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(data, dict) else {}


SELECTIONS = "selections.json"
"""Which database the person selected for each chat (by session id), in ``$data``."""


def _reported(receipt: dict[str, Any], resource_id: str) -> dict[str, Any]:
    """The ``change`` the host records in the one change list, undone by the person
    through ``changes-undo`` (only while the change set can be undone)."""
    if not receipt.get("undoable") or not receipt.get("changeId") or receipt.get("replayed"):
        return {}  # a replayed receipt is a change already in the list
    return {"change": {"summary": f"Tables: {receipt['summary']}",
                       "undo": {"tool": UNDO_TOOL, "arguments": {"resourceId": resource_id,
                                                                 "changeId": receipt["changeId"]}}}}


def _selecting(tool):
    """A model-facing tool that, naming no database, uses the chat's selected one, or
    answers ``select_resource`` and runs nothing."""
    def run(args, ctx):
        try:
            return tool(args, ctx)
        except SelectResource:
            return {"kind": "select_resource", "note": SELECT_NOTE}
    run.__name__, run.__doc__ = tool.__name__, tool.__doc__
    return run


def _change(action: str, args: Any, ctx: Any) -> dict[str, Any]:
    args = _checked(args)
    tables, consumer = _open(ctx)
    role, mode = _policy(consumer)
    resource_id = _chosen(args, ctx)
    if action in SCHEMA_ACTIONS and role != "owner":
        raise TablesToolError(f"unknown: {UNKNOWN_DATABASE}")
    revision = args.pop("revision", None)
    if mode == "apply":
        return _applied(tables, resource_id, action, args, revision)
    made = _run(lambda: tables.propose(resource_id, action, args, consumer=consumer or "unknown",
                                       revision=revision))
    preview = made["preview"]
    return {"kind": "proposal", "proposal": {
        "proposalId": made["proposalId"], "addonId": "tables", "resourceId": resource_id, "action": action,
        "state": "pending", "count": preview["count"], "summary": preview["summary"],
        "expiresAt": made["expiresAt"]}, "note": PROPOSED_NOTE}


def _applied(tables: Tables, resource_id: str, action: str, args: dict[str, Any],
             revision: Any) -> dict[str, Any]:
    """Apply a change at once (the person's, or an interactive chat's) and answer its
    receipt with the change the host records in the one change list."""
    receipt = _run(lambda: tables.apply(resource_id, action, args, revision=revision))
    return {"kind": "applied", "applied": {
        "id": receipt["operationId"], "addonId": "tables", "resourceId": resource_id, "action": action,
        "summary": receipt["summary"], "count": receipt["count"], "ids": receipt["ids"][:100],
        "revision": receipt["revision"], "undoable": receipt["undoable"], "changeId": receipt["changeId"],
        "undo": receipt["undo"], "reason": receipt["reason"]}, "note": APPLIED_NOTE,
        **_reported(receipt, resource_id)}


def _person(ctx: Any, what: str) -> Tables:
    tables, consumer = _open(ctx)
    if consumer != "person":
        raise TablesToolError(f"unknown: {what} is the person's own action; no tool of a model, a run or "
                              "an MCP client reaches it")
    return tables


# --- databases ---------------------------------------------------------------------------


def databases_list(args, ctx):
    _checked(args)
    if args:
        raise TablesToolError("invalid: databases-list takes exactly {}")
    tables, _ = _open(ctx)
    return _run(tables.list)


def databases_create(args, ctx):
    args = _checked(args)
    tables, consumer = _open(ctx)
    role, mode = _policy(consumer)
    if role != "owner":
        raise TablesToolError("invalid: this consumer cannot create a database")
    if set(args) - {"name", "resourceId"}:
        raise TablesToolError("invalid: databases-create takes name and, optionally, resourceId")
    if mode == "propose":
        raise TablesToolError("invalid: a database is created by the person or in an interactive chat; "
                              "ask the person to create it")
    receipt = _run(lambda: tables.create(args.get("name"), args.get("resourceId")))
    return {"kind": "applied", "applied": {"id": receipt["operationId"], "addonId": "tables",
                                           "resourceId": receipt["resourceId"], "action": "databases-create",
                                           "summary": receipt["summary"], "count": 1,
                                           "undoable": True, "changeId": receipt["changeId"],
                                           "undo": receipt["undo"], "reason": None},
            "note": APPLIED_NOTE, **_reported(receipt, receipt["resourceId"])}


@_selecting
def databases_inspect(args, ctx):
    args = _checked(args)
    tables, _ = _open(ctx)
    resource_id = _chosen(args, ctx)
    if args:
        raise TablesToolError("invalid: databases-inspect takes resourceId only")
    return _run(lambda: tables.inspect(resource_id))


@_selecting
def databases_rename(args, ctx):
    return _change("databases-rename", args, ctx)


def databases_delete(args, ctx):
    tables = _person(ctx, "deleting a database")
    args = _checked(args)
    resource_id = _resource(args)
    if args.get("confirmName") is None:
        raise TablesToolError("invalid: type the database's name as confirmName to delete it")
    found = _run(lambda: tables.inspect(resource_id))
    if args["confirmName"] != found["name"]:
        raise TablesToolError("invalid: confirmName is not the database's name; nothing was deleted")
    return _run(lambda: tables.delete(resource_id))


# --- schema -----------------------------------------------------------------------------------


@_selecting
def tables_create(args, ctx):
    return _change("tables-create", args, ctx)


@_selecting
def tables_rename(args, ctx):
    return _change("tables-rename", args, ctx)


@_selecting
def tables_drop(args, ctx):
    return _change("tables-drop", args, ctx)


@_selecting
def columns_add(args, ctx):
    return _change("columns-add", args, ctx)


@_selecting
def columns_rename(args, ctx):
    return _change("columns-rename", args, ctx)


@_selecting
def columns_drop(args, ctx):
    return _change("columns-drop", args, ctx)


# --- rows -----------------------------------------------------------------------------------


def _read_rows(args, ctx, read):
    """A row read (query, aggregate, export) of the database the call names or the chat
    selected: ``read(tables)`` is the engine's method, called with it and the arguments."""
    args = _checked(args)
    tables, _ = _open(ctx)
    resource_id = _chosen(args, ctx)
    return _run(lambda: read(tables)(resource_id, args))


@_selecting
def rows_query(args, ctx):
    return _read_rows(args, ctx, lambda tables: tables.query)


@_selecting
def rows_aggregate(args, ctx):
    return _read_rows(args, ctx, lambda tables: tables.aggregate)


@_selecting
def rows_export(args, ctx):
    return _read_rows(args, ctx, lambda tables: tables.export)


@_selecting
def rows_insert(args, ctx):
    return _change("rows-insert", args, ctx)


@_selecting
def rows_update(args, ctx):
    return _change("rows-update", args, ctx)


@_selecting
def rows_delete(args, ctx):
    return _change("rows-delete", args, ctx)


# --- the person's own actions -----------------------------------------------------------------


def proposals_list(args, ctx):
    tables = _person(ctx, "the list of waiting proposals")
    if args:
        raise TablesToolError("invalid: proposals-list takes exactly {}")
    found = _run(tables.proposals)
    return {"proposals": [{k: p[k] for k in ("proposalId", "resourceId", "name", "action", "state", "createdAt",
                                             "expiresAt")} | {"summary": p["preview"]["summary"],
                                                              "count": p["preview"]["count"]} for p in found]}


def proposals_card(args, ctx):
    tables = _person(ctx, "the approval card")
    args = dict(args)
    resource_id = _resource(args)
    item = _run(lambda: tables.proposal(resource_id, args.get("proposalId")))
    return {"card": proposal_card(item)}


def proposals_confirm(args, ctx):
    tables = _person(ctx, "confirming a proposal")
    args = dict(args)
    resource_id = _resource(args)
    receipt = _run(lambda: tables.confirm(resource_id, args.get("proposalId"), args.get("digest")))
    return {"kind": "applied", "applied": receipt, **({} if receipt.get("replayed") else _reported(receipt, resource_id))}


def proposals_cancel(args, ctx):
    tables = _person(ctx, "cancelling a proposal")
    args = dict(args)
    resource_id = _resource(args)
    return _run(lambda: tables.cancel(resource_id, args.get("proposalId")))


def changes_list(args, ctx):
    tables = _person(ctx, "the change list")
    args = dict(args)
    resource_id = args.pop("resourceId", None)
    return {"changes": _run(lambda: tables.changes(resource_id))}


def changes_undo(args, ctx):
    tables = _person(ctx, "undoing a change")
    args = dict(args)
    resource_id = _resource(args)
    return _run(lambda: tables.undo(resource_id, args.get("changeId")))


# --- pages ------------------------------------------------------------------------------------


def pages_approvals(args, ctx):
    """The page of the changes waiting for the person (each one's approval card)."""
    tables = _person(ctx, "the page of waiting changes")
    waiting = _run(tables.proposals)
    return {"card": approvals_card([w for w in waiting if w["state"] == "pending"])}


def pages_databases(args, ctx):
    """The page of the databases, their revisions and tables, each with its Open button,
    and which database each chat has selected."""
    tables = _person(ctx, "the page of databases")
    listed = _run(tables.list)["databases"]
    return {"card": databases_card([_run(lambda rid=d["resourceId"]: tables.inspect(rid)) for d in listed],
                                   _selections(str(tables.folder.root)))}


VIEW = "view.json"
"""The table the person has open on the page ``table`` (database, table, filter, sort,
cursor), in ``$data``."""


def _write_json(folder: Path, name: str, data: Any) -> None:
    scratch = folder / f"{name}.{os.getpid()}"
    fd = os.open(scratch, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out)
    os.replace(scratch, folder / name)


def _view(tables: Tables) -> dict[str, Any]:
    try:
        data = json.loads((Path(tables.folder.root) / VIEW).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def pages_table(args, ctx):
    """The page of the open table: the database's tables as tabs, a typed grid of one
    page of its rows (filter, sort, paging), a row to add and the schema's forms."""
    tables = _person(ctx, "the page of a table")
    view = _view(tables)
    rid = view.get("resourceId")
    if not isinstance(rid, str):
        return {"card": grid.table_card(None, view, None)}
    try:
        found = tables.inspect(rid)
    except TablesError as exc:
        return {"card": grid.table_card(None, view, None, f"The open database cannot be read: {exc.message}")}
    current = next((t for t in found["tables"] if t["label"] == view.get("table")),
                   found["tables"][0] if found["tables"] else None)
    if current is None:
        return {"card": grid.table_card(found, view, None)}
    view["table"] = current["label"]
    labels = [c["label"] for c in current["columns"]][:grid.GRID_COLUMNS]
    query = {"table": current["label"], "limit": grid.PAGE_ROWS, "columns": labels or None}
    query = {k: v for k, v in query.items() if v is not None}
    problem = ""
    for key in ("filter", "sort", "cursor"):
        if view.get(key) is not None:
            query[key] = view[key]
    try:
        page = tables.query(rid, query)
    except TablesError as exc:
        problem = f"{exc.message}: back to the first page, without the filter and sort"
        view = {"resourceId": rid, "table": current["label"]}
        page = _run(lambda: tables.query(rid, {k: v for k, v in query.items()
                                               if k not in ("filter", "sort", "cursor")}))
    return {"card": grid.table_card(found, view, page, problem)}


def pages_view(args, ctx):
    """Open a database's table on the page ``table``: with ``apply``, the filter and sort
    the form asks for; with ``keep``, the ones open now (and ``cursor``, the page)."""
    tables = _person(ctx, "opening a table on its page")
    args = dict(args)
    rid = _resource(args)
    found = _run(lambda: tables.inspect(rid))
    table = args.get("table")
    current = next((t for t in found["tables"] if t["label"] == table), found["tables"][0] if found["tables"] else None)
    view: dict[str, Any] = {"resourceId": rid, "table": current["label"] if current else None}
    before = _view(tables)
    same = before.get("resourceId") == rid and before.get("table") == view["table"]
    if current is not None and args.get("apply"):
        view["filter"] = _run(lambda: grid.view_filter(current["columns"], args))
        view["sort"] = _run(lambda: grid.view_sort(current["columns"], args))
    elif args.get("keep") and same:
        view["filter"], view["sort"] = before.get("filter"), before.get("sort")
    if args.get("keep") and same and isinstance(args.get("cursor"), str):
        view["cursor"] = args["cursor"]
        view["offset"] = args.get("offset") if isinstance(args.get("offset"), int) else 0
    view = {k: v for k, v in view.items() if v is not None}
    _write_json(Path(tables.folder.root), VIEW, view)
    return {"opened": {"resourceId": rid, "table": view.get("table"), "filter": view.get("filter"),
                       "sort": view.get("sort")}}


def _columns_of(tables: Tables, rid: str, table: Any) -> list[dict[str, Any]]:
    found = _run(lambda: tables.inspect(rid))
    current = next((t for t in found["tables"] if t["label"] == table), None)
    if current is None:
        raise TablesToolError(f"unknown: there is no table {table!r} (reload the page)")
    return current["columns"]


def pages_rows_save(args, ctx):
    """Save the grid: the rows whose cells the person changed, or ticked to delete, as
    one change (undoable in the change list) against the revision the page showed."""
    tables = _person(ctx, "saving a table's rows")
    args = dict(args)
    rid = _resource(args)
    table = args.get("table")
    ids = args.get("ids")
    if not isinstance(ids, list) or not ids or len(ids) > grid.PAGE_ROWS:
        raise TablesToolError(f"invalid: ids lists the 1 to {grid.PAGE_ROWS} rows the page showed")
    columns = _columns_of(tables, rid, table)
    labels = [c["label"] for c in columns][:grid.GRID_COLUMNS]
    now = _run(lambda: tables.query(rid, {"table": table, "columns": labels, "limit": len(ids),
                                          "filter": {"column": "_id", "op": "in", "values": ids}}))
    if args.get("revision") != now["revision"]:
        raise TablesToolError("stale: the table changed since the page was drawn; nothing was saved "
                              "(reload the page with r)")
    change = _run(lambda: grid.edits(columns, now["rows"], args))
    if not change:
        raise TablesToolError("invalid: nothing was changed on the page; nothing was saved")
    return _applied(tables, rid, change["action"], {"table": table, **change["args"]}, args["revision"])


def pages_rows_add(args, ctx):
    """Insert the row the person filled in under the grid (undoable in the change list)."""
    tables = _person(ctx, "adding a row")
    args = dict(args)
    rid = _resource(args)
    columns = _columns_of(tables, rid, args.get("table"))
    row = _run(lambda: grid.new_row(columns, args))
    return _applied(tables, rid, "rows-insert", {"table": args.get("table"), "rows": [row]}, None)


def pages_schema(args, ctx):
    """The schema's forms: add, rename or drop a column of the open table, or add a table
    (each one change, undoable in the change list)."""
    tables = _person(ctx, "changing a schema")
    args = dict(args)
    rid = _resource(args)
    op, table = args.get("op"), args.get("table")
    if op == "table":
        return _applied(tables, rid, "tables-create", {"table": args.get("table.new") or ""}, None)
    columns = _columns_of(tables, rid, table)
    if op == "add":
        kind = args.get("add.type") or "text"
        column: dict[str, Any] = {"label": args.get("add.label") or "", "type": kind,
                                  "required": args.get("add.required") == "true",
                                  "unique": args.get("add.unique") == "true"}
        default = _run(lambda: grid.typed(kind, args.get("add.default"), "the default"))
        if kind == "real" and isinstance(default, str):
            try:
                default = float(default)
            except ValueError:
                raise TablesToolError("invalid: the default of a real column is a number") from None
        if default is not None:
            column["default"] = default
        return _applied(tables, rid, "columns-add", {"table": table, "column": column}, None)
    if op in ("rename", "drop"):
        label = args.get("column")
        if label not in [c["label"] for c in columns]:
            raise TablesToolError("invalid: choose the column (reload the page)")
        if op == "rename":
            return _applied(tables, rid, "columns-rename",
                            {"table": table, "column": label, "newName": args.get("rename.to") or ""}, None)
        return _applied(tables, rid, "columns-drop", {"table": table, "column": label}, None)
    raise TablesToolError("invalid: op is add, rename, drop or table")


def databases_select(args, ctx):
    """The person selects the database a chat uses when a call names none (or clears it)."""
    tables = _person(ctx, "selecting a chat's database")
    args = dict(args)
    session = args.get("sessionId")
    if not isinstance(session, str) or not session:
        raise TablesToolError("invalid: name the chat with sessionId (workbench sessions list)")
    chosen = args.get("resourceId")
    if chosen is not None:
        _run(lambda: tables.inspect(chosen))
    folder = Path(tables.folder.root)
    selected = _selections(str(folder))
    if chosen is None:
        selected.pop(session, None)
    else:
        selected[session] = chosen
    _write_json(folder, SELECTIONS, selected)
    return {"sessionId": session, "resourceId": chosen}
