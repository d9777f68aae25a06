"""The page of one table: its database's tables as tabs, a typed grid of one page of
rows (filter, sort, paging), a row to add, and the schema's forms.

The grid is an Adaptive Cards ``Table`` whose cells hold inputs (the editable grid of
``docs/cards.md``): each row's cells are ``r<row id>.c<column number>`` (and
``r<row id>.del``, a toggle that deletes the row), the new row's ``new.c<number>``.
What the person enters comes back as the action's data; ``edits`` turns it into the
one change a save makes, comparing each cell with the value the page showed. Plain
Python, no workbench import.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from tablesdb.errors import invalid

PAGE_ROWS = 20
GRID_COLUMNS = 18
"""The most columns drawn in the grid (with the row id and the delete toggle: 20)."""
TYPES = ("text", "integer", "real", "boolean", "datetime")
OPS = ("eq", "ne", "lt", "lte", "gt", "gte", "contains", "starts-with", "ends-with", "is-null", "is-not-null")
CELL = 80


def _text(text: str, **more: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **more}


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= CELL else text[:CELL - 1] + "…"


def _cell(*items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "TableCell", "items": list(items)}


def _execute(title: str, verb: str, data: dict[str, Any], *, inputs: bool = False,
             style: str = "default") -> dict[str, Any]:
    action = {"type": "Action.Execute", "title": title, "verb": verb, "data": data, "style": style}
    if not inputs:
        action["associatedInputs"] = "none"
    return action


def _choices(values: list[str]) -> list[dict[str, str]]:
    return [{"title": _short(v), "value": v} for v in values]


def shown(kind: str, value: Any) -> str:
    """A stored value as its cell shows it (``""`` for null)."""
    if value is None:
        return ""
    if kind == "boolean":
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def cell_input(kind: str, input_id: str, value: Any, label: str) -> dict[str, Any]:
    """The typed input of one cell: integers as exact decimal text, reals as numbers,
    booleans as a choice (yes, no or empty for null), date-times as RFC 3339 text."""
    if kind == "real":
        item: dict[str, Any] = {"type": "Input.Number", "id": input_id}
        if value is not None:
            item["value"] = value
    elif kind == "boolean":
        item = {"type": "Input.ChoiceSet", "id": input_id, "placeholder": "–",
                "choices": [{"title": "yes", "value": "true"}, {"title": "no", "value": "false"}],
                "value": shown(kind, value)}
    else:
        placeholder = {"integer": "whole number", "datetime": "2026-12-03T20:00:00Z"}.get(kind, "")
        item = {"type": "Input.Text", "id": input_id, "value": shown(kind, value), "placeholder": placeholder}
    item["label"] = label
    return item


def editable(kind: str, value: Any) -> bool:
    """Whether a cell is drawn as an input: not a text too long for a one-line cell, nor
    one holding control or format characters (a terminal is shown them made safe, so an
    input could not give them back): that cell is shown as text and left as it is."""
    return not (kind == "text" and isinstance(value, str) and (
        len(value) > 1000 or any(unicodedata.category(ch) in ("Cc", "Cf") for ch in value)))


def typed(kind: str, entered: Any, what: str) -> Any:
    """What the person entered in a cell, as the value the engine checks (``""`` is null)."""
    if entered is None or entered == "":
        return None
    if kind == "boolean":
        if entered not in ("true", "false"):
            raise invalid(f"{what} is yes, no or empty")
        return entered == "true"
    if kind == "real":
        return entered
    if not isinstance(entered, str):
        raise invalid(f"{what} is text")
    return entered.strip() if kind == "integer" else entered


def _same(kind: str, before: Any, after: Any) -> bool:
    if kind == "real" and before is not None and after is not None and not isinstance(after, str):
        return float(before) == float(after)
    if kind == "boolean":
        return before == after
    return shown(kind, before) == shown(kind, after)


def edits(columns: list[dict[str, Any]], rows: list[dict[str, Any]], data: dict[str, Any]) -> dict[str, Any]:
    """The one change a save of the grid makes: ``{"action": …, "args": …}``, or None when
    nothing was changed. ``rows`` are the rows as stored now (``rows-query``), ``data``
    what the person entered. Deleting rows, or giving rows the same new values, is one
    change; edits that would be several changes are refused (each is one undo)."""
    shown_columns = columns[:GRID_COLUMNS]
    deleted, groups = [], {}
    for row in rows:
        key = f"r{row['id']}"
        if data.get(f"{key}.del") == "true":
            deleted.append(row["id"])
            continue
        changed: dict[str, Any] = {}
        for number, column in enumerate(shown_columns):
            if not editable(column["type"], row["values"][number]):
                continue  # shown, not edited
            # An input left empty sends nothing: the cell is cleared (null).
            after = typed(column["type"], data.get(f"{key}.c{number}"), f"row {row['id']}, {column['label']}")
            if not _same(column["type"], row["values"][number], after):
                changed[column["label"]] = after
        if changed:
            groups.setdefault(json.dumps(changed, sort_keys=True, default=str), (changed, []))[1].append(row["id"])
    if deleted and groups:
        raise invalid("one save is one change you can undo: delete rows, or edit them, in separate saves")
    if len(groups) > 1:
        raise invalid(f"one save is one change you can undo: {len(groups)} rows have different new values; "
                      "save one row (or rows given the same values) at a time")
    if deleted:
        return {"action": "rows-delete", "args": {"ids": deleted}}
    if groups:
        changed, ids = next(iter(groups.values()))
        return {"action": "rows-update", "args": {"set": changed, "ids": ids}}
    return {}


def new_row(columns: list[dict[str, Any]], data: dict[str, Any]) -> dict[str, Any]:
    """The row the person filled in (``new.c<number>``); an empty cell takes its default."""
    row = {}
    for number, column in enumerate(columns[:GRID_COLUMNS]):
        value = typed(column["type"], data.get(f"new.c{number}"), f"the new row's {column['label']}")
        if value is not None:
            row[column["label"]] = value
    if not row:
        raise invalid("fill in at least one cell of the new row")
    return row


def view_filter(columns: list[dict[str, Any]], data: dict[str, Any]) -> dict[str, Any] | None:
    """The filter the form asks for (one condition), or None for none."""
    label, op = data.get("filter.column") or "", data.get("filter.op") or ""
    if not label:
        return None
    kinds = {c["label"]: c["type"] for c in columns} | {"_id": "integer"}
    if label not in kinds:
        raise invalid(f"filter: there is no column {label!r}")
    if op not in OPS:
        raise invalid(f"filter: the operator is one of {', '.join(OPS)}")
    if op in ("is-null", "is-not-null"):
        return {"column": label, "op": op}
    value = typed(kinds[label], data.get("filter.value"), "the filter's value")
    if kinds[label] == "integer" and value is not None:
        value = int(value) if value.lstrip("+-").isdigit() and abs(int(value)) < 2 ** 53 else value
    return {"column": label, "op": op, "value": value}


def view_sort(columns: list[dict[str, Any]], data: dict[str, Any]) -> list[dict[str, str]] | None:
    label = data.get("sort.column") or ""
    if not label:
        return None
    if label != "_id" and label not in [c["label"] for c in columns]:
        raise invalid(f"sort: there is no column {label!r}")
    direction = data.get("sort.direction") or "asc"
    if direction not in ("asc", "desc"):
        raise invalid("sort: the direction is asc or desc")
    return [{"column": label, "direction": direction}]


def table_card(found: dict[str, Any] | None, view: dict[str, Any], page: dict[str, Any] | None,
               problem: str = "") -> dict[str, Any]:
    """The page of the table ``view`` names in the database ``found`` (``inspect``), with
    ``page`` its rows as ``rows-query`` answered (None when there is no table)."""
    body: list[dict[str, Any]] = []
    if found is None:
        body.append(_text("Tables: a table", size="large", weight="bolder"))
        body.append(_text(problem or "No database is open: open one on the page of your databases.",
                          isSubtle=True))
        return {"type": "AdaptiveCard", "version": "1.5", "body": body, "actions": []}
    rid = found["resourceId"]
    tables = found["tables"]
    current = next((t for t in tables if t["label"] == view.get("table")), tables[0] if tables else None)
    body.append(_text(_short(found["name"]), size="large", weight="bolder"))
    if tables:  # the tabs: one button a table, the open one marked
        body.append({"type": "ActionSet", "actions": [
            _execute(("▸ " if t is current else "") + _short(t["label"]), "pages-view",
                     {"resourceId": rid, "table": t["label"]}, style="positive" if t is current else "default")
            for t in tables[:20]]})
    if problem:
        body.append(_text(problem, color="attention"))
    if current is None or page is None:
        body.append(_text("No table yet: add one below.", isSubtle=True))
        body.append(_schema_forms(rid, None))
        return {"type": "AdaptiveCard", "version": "1.5", "body": body, "actions": []}
    columns = current["columns"]
    drawn = columns[:GRID_COLUMNS]
    facts = [{"title": "Revision", "value": f"schema {found['revision']['schema']}, data {found['revision']['data']}"},
             {"title": "Rows", "value": f"{view.get('offset', 0) + 1}–{view.get('offset', 0) + len(page['rows'])}"
              + (" (more follow)" if page.get("hasMore") else "") if page["rows"] else "none"},
             {"title": "Filter", "value": _short(view["filter"]) if view.get("filter") else "none"},
             {"title": "Sort", "value": _short(view["sort"]) if view.get("sort") else "by row id"}]
    if len(columns) > GRID_COLUMNS:
        facts.append({"title": "Columns", "value": f"the first {GRID_COLUMNS} of {len(columns)} are shown"})
    body.append({"type": "FactSet", "facts": facts})
    labels = [c["label"] for c in columns]
    body.append({"type": "ColumnSet", "columns": [
        {"type": "Column", "items": [
            {"type": "Input.ChoiceSet", "id": "filter.column", "label": "Filter: column", "placeholder": "none",
             "choices": _choices(["_id"] + labels), "value": (view.get("filter") or {}).get("column", "")},
            {"type": "Input.ChoiceSet", "id": "filter.op", "label": "Operator", "choices": _choices(list(OPS)),
             "value": (view.get("filter") or {}).get("op", "eq")},
            {"type": "Input.Text", "id": "filter.value", "label": "Value", "maxLength": 1000,
             "value": _short(shown("text", (view.get("filter") or {}).get("value")))[:1000]}]},
        {"type": "Column", "items": [
            {"type": "Input.ChoiceSet", "id": "sort.column", "label": "Sort by", "placeholder": "row id",
             "choices": _choices(["_id"] + labels), "value": ((view.get("sort") or [{}])[0]).get("column", "")},
            {"type": "Input.ChoiceSet", "id": "sort.direction", "label": "Direction",
             "choices": [{"title": "ascending", "value": "asc"}, {"title": "descending", "value": "desc"}],
             "value": ((view.get("sort") or [{}])[0]).get("direction", "asc")}]}]})
    at = {"resourceId": rid, "table": current["label"]}
    body.append({"type": "ActionSet", "actions": [
        _execute("Apply filter and sort", "pages-view", at | {"apply": True}, inputs=True),
        _execute("Clear", "pages-view", at)]})
    header = _cell(_text("row")), *[_cell(_text(f"{_short(c['label'])} ({c['type']})")) for c in drawn], \
        _cell(_text("delete"))
    grid_rows = [{"type": "TableRow", "cells": list(header)}]
    for row in page["rows"]:
        key = f"r{row['id']}"
        cells = [_cell(_text(str(row["id"])))]
        for number, column in enumerate(drawn):
            value = row["values"][number]
            if not editable(column["type"], value):
                cells.append(_cell(_text(_short(value))))  # too long for a one-line cell: shown, not edited
            else:
                cells.append(_cell(cell_input(column["type"], f"{key}.c{number}", value,
                                              f"row {row['id']}, {column['label']}")))
        cells.append(_cell({"type": "Input.Toggle", "id": f"{key}.del", "title": "delete",
                            "label": f"delete row {row['id']}"}))
        grid_rows.append({"type": "TableRow", "cells": cells})
    body.append({"type": "Table", "firstRowAsHeader": True, "columns": [{"width": 1} for _ in header],
                 "rows": grid_rows})
    if not page["rows"]:
        body.append(_text("No row matches." if view.get("filter") else "No row yet.", isSubtle=True))
    ids = [row["id"] for row in page["rows"]]
    paging = [_execute("Save changes", "pages-rows-save", at | {"revision": page["revision"], "ids": ids},
                       inputs=True, style="positive")] if ids else []
    if view.get("cursor") or view.get("offset"):
        paging.append(_execute("First page", "pages-view", at | {"keep": True}))
    if page.get("cursor"):
        paging.append(_execute("Next page", "pages-view", at | {"keep": True, "cursor": page["cursor"],
                                                               "offset": view.get("offset", 0) + len(ids)}))
    if paging:
        body.append({"type": "ActionSet", "actions": paging})
    body.append(_text("Add a row", weight="bolder"))
    body.append({"type": "Table", "firstRowAsHeader": True, "columns": [{"width": 1} for _ in drawn],
                 "rows": [{"type": "TableRow", "cells": [_cell(_text(_short(c["label"]))) for c in drawn]},
                          {"type": "TableRow", "cells": [
                              _cell(cell_input(c["type"], f"new.c{n}", None, f"new row, {c['label']}"))
                              for n, c in enumerate(drawn)]}]})
    body.append({"type": "ActionSet", "actions": [_execute("Add row", "pages-rows-add", at, inputs=True)]})
    body.append(_schema_forms(rid, current))
    return {"type": "AdaptiveCard", "version": "1.5", "body": body, "actions": []}


def _schema_forms(rid: str, current: dict[str, Any] | None) -> dict[str, Any]:
    """The schema's forms: add, rename and drop a column of the open table (with its
    rules: type, required, unique, default), and add a table."""
    items: list[dict[str, Any]] = [_text("Schema", weight="bolder")]
    if current is not None:
        at = {"resourceId": rid, "table": current["label"]}
        labels = [c["label"] for c in current["columns"]]
        items.append({"type": "FactSet", "facts": [
            {"title": _short(c["label"]), "value": ", ".join(
                [c["type"]] + (["required"] if c["required"] else []) + (["unique"] if c["unique"] else [])
                + ([f"default {_short(c['default'])}"] if c["default"] is not None else []))}
            for c in current["columns"]] or [{"title": "Columns", "value": "none"}]})
        items += [
            {"type": "Input.Text", "id": "add.label", "label": "New column", "maxLength": 64},
            {"type": "Input.ChoiceSet", "id": "add.type", "label": "Its type", "choices": _choices(list(TYPES)),
             "value": "text"},
            {"type": "Input.Toggle", "id": "add.required", "title": "required (a table with rows needs a default)"},
            {"type": "Input.Toggle", "id": "add.unique", "title": "unique"},
            {"type": "Input.Text", "id": "add.default", "label": "Its default (empty: none)", "maxLength": 1000},
            {"type": "ActionSet", "actions": [_execute("Add column", "pages-schema", at | {"op": "add"}, inputs=True)]}]
        if labels:
            items += [
                {"type": "Input.ChoiceSet", "id": "column", "label": "Column", "choices": _choices(labels),
                 "value": labels[0]},
                {"type": "Input.Text", "id": "rename.to", "label": "Its new label", "maxLength": 64},
                {"type": "ActionSet", "actions": [
                    _execute("Rename column", "pages-schema", at | {"op": "rename"}, inputs=True),
                    _execute("Drop column", "pages-schema", at | {"op": "drop"}, inputs=True, style="destructive")]}]
    items += [{"type": "Input.Text", "id": "table.new", "label": "New table", "maxLength": 64},
              {"type": "ActionSet", "actions": [_execute("Add table", "pages-schema",
                                                          {"resourceId": rid, "op": "table"}, inputs=True)]}]
    return {"type": "Container", "items": items}
