"""The approval card of a proposal, as an Adaptive Card 1.5 document.

Drawn from the stored proposal alone (never from a model's words): the add-on, the
database, the operation, the exact count, a bounded sample, the expiry and the
state. Confirm and Cancel are ``Action.Execute`` actions naming the person-only
tools ``proposals-confirm`` and ``proposals-cancel``; Confirm carries the digest
the card displays. A proposal that is not pending gets no actions and says why.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

SAMPLE_ROWS = 10
CELL = 80
STATES = {"expired": "it expired before anyone confirmed it", "applied": "it was confirmed and applied",
          "cancelled": "it was cancelled", "stale": "the database changed after its preview, so it was refused",
          "rejected": "the database refused it"}


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= CELL else text[:CELL - 1] + "…"


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _sample_table(sample: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not sample:
        return None
    first = sample[0]
    if "before" in first:
        heads = ["row"] + [f"{k} (before → after)" for k in first["before"]]
        body = [[str(s["id"])] + [f"{_short(s['before'].get(k))} → {_short(s['after'].get(k))}"
                                  for k in first["before"]] for s in sample]
    else:
        keys = list(first.get("values", {}))
        heads = ["row"] + keys
        body = [[str(s["id"])] + [_short(s["values"].get(k)) for k in keys] for s in sample]

    def row(cells: list[str]) -> dict[str, Any]:
        return {"type": "TableRow", "cells": [{"type": "TableCell", "items": [
            {"type": "TextBlock", "text": c, "wrap": True}]} for c in cells]}

    return {"type": "Table", "firstRowAsHeader": True, "columns": [{"width": 1} for _ in heads],
            "rows": [row(heads)] + [row(r) for r in body[:SAMPLE_ROWS]]}


def proposal_card(item: dict[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """The card of the stored proposal ``item`` (``Tables.proposal``)."""
    now = time.time() if now is None else now
    preview = item["preview"]
    facts = [{"title": "Add-on", "value": "Tables"},
             {"title": "Database", "value": _short(item.get("name", item["resourceId"]))},
             {"title": "Operation", "value": item["action"]},
             {"title": "Effect", "value": _short(preview.get("summary", ""))},
             {"title": "Count", "value": str(preview.get("count", 0))},
             {"title": "Proposed by", "value": item.get("consumer", "")},
             {"title": "Expires", "value": _when(item["expiresAt"])},
             {"title": "State", "value": item["state"]}]
    loss = preview.get("dataLoss")
    if loss:
        facts.append({"title": "Data lost", "value": ", ".join(f"{k} {v}" for k, v in loss.items())})
    body: list[dict[str, Any]] = [
        {"type": "TextBlock", "text": "A change waits for your confirmation", "size": "medium",
         "weight": "bolder", "wrap": True},
        {"type": "FactSet", "facts": facts}]
    table = _sample_table(preview.get("sample") or [])
    if table is not None:
        body.append({"type": "TextBlock", "text": f"Sample (first {min(len(preview['sample']), SAMPLE_ROWS)})",
                     "isSubtle": True})
        body.append(table)
    card: dict[str, Any] = {"type": "AdaptiveCard", "version": "1.5", "body": body, "actions": []}
    state = item["state"]
    if state == "pending" and item["expiresAt"] > now:
        data = {"resourceId": item["resourceId"], "proposalId": item["proposalId"], "digest": item["digest"]}
        card["actions"] = [
            {"type": "Action.Execute", "title": "Confirm", "verb": "proposals-confirm", "data": data},
            {"type": "Action.Execute", "title": "Cancel", "verb": "proposals-cancel",
             "data": {"resourceId": item["resourceId"], "proposalId": item["proposalId"]}}]
    else:
        why = STATES.get(state, f"it is {state}")
        body.append({"type": "TextBlock", "text": f"Nothing to confirm: {why}.", "color": "attention",
                     "wrap": True})
    return card


MAX_WAITING = 10


def approvals_card(items: list[dict[str, Any]], *, now: float | None = None) -> dict[str, Any]:
    """The page of the changes that wait for the person: each one's approval card, newest
    first (at most ``MAX_WAITING``), with its own Confirm and Cancel."""
    body: list[dict[str, Any]] = [{"type": "TextBlock", "text": "Changes waiting for your confirmation",
                                   "size": "large", "weight": "bolder", "wrap": True}]
    if not items:
        body.append({"type": "TextBlock", "text": "Nothing waits for your confirmation.", "isSubtle": True})
    for item in items[:MAX_WAITING]:
        one = proposal_card(item, now=now)
        parts = list(one["body"][1:])
        if one["actions"]:
            parts.append({"type": "ActionSet", "actions": one["actions"]})
        body.append({"type": "Container", "style": "emphasis", "items": parts})
    if len(items) > MAX_WAITING:
        body.append({"type": "TextBlock", "text": f"{len(items) - MAX_WAITING} more wait; confirm or cancel "
                                                  "these first.", "isSubtle": True, "wrap": True})
    return {"type": "AdaptiveCard", "version": "1.5", "body": body, "actions": []}


def databases_card(listed: list[dict[str, Any]], selected: dict[str, str] | None = None) -> dict[str, Any]:
    """The page of the databases: each with its id, revision, tables and an Open button
    (its tables on the page ``table``); which database each chat selected, and the form
    that selects one for a chat (``databases-select``)."""
    selected = selected or {}
    body: list[dict[str, Any]] = [{"type": "TextBlock", "text": "Your databases", "size": "large",
                                   "weight": "bolder"}]
    if not listed:
        body.append({"type": "TextBlock", "text": "No database yet: ask a chat to create one.", "isSubtle": True})
    for found in listed:
        tables = ", ".join(f"{_short(t['label'])} ({len(t['columns'])} columns)" for t in found["tables"]) or "none"
        chats = sorted(session for session, rid in selected.items() if rid == found["resourceId"])
        facts = [{"title": "Id", "value": found["resourceId"]},
                 {"title": "Revision", "value": f"schema {found['revision']['schema']}, "
                                                f"data {found['revision']['data']}"},
                 {"title": "Tables", "value": tables}]
        if chats:
            facts.append({"title": "Selected in", "value": _short(", ".join(chats[:5]) + (" …" if len(chats) > 5
                                                                                         else ""))})
        body.append({"type": "Container", "items": [
            {"type": "TextBlock", "text": _short(found["name"]), "weight": "bolder", "wrap": True},
            {"type": "FactSet", "facts": facts},
            {"type": "ActionSet", "actions": [
                {"type": "Action.Execute", "title": f"Open {_short(found['name'])}", "verb": "pages-view",
                 "data": {"resourceId": found["resourceId"]}, "associatedInputs": "none"}]}]})
    if listed:
        body += [{"type": "TextBlock", "text": "The database a chat uses", "weight": "bolder"},
                 {"type": "Input.Text", "id": "sessionId", "label": "The chat's session id (workbench sessions list)",
                  "maxLength": 64, "isRequired": True},
                 {"type": "Input.ChoiceSet", "id": "resourceId", "label": "Database", "isRequired": True,
                  "choices": [{"title": f"{_short(d['name'])} ({d['resourceId']})", "value": d["resourceId"]}
                              for d in listed[:100]]},
                 {"type": "ActionSet", "actions": [{"type": "Action.Execute", "title": "Select for that chat",
                                                    "verb": "databases-select"}]}]
    return {"type": "AdaptiveCard", "version": "1.5", "body": body, "actions": []}
