"""Two small extensions for the pages' tests: ``planner``, whose pages are served by its
own tools (a board with a form, a hostile page whose card names tools that are not
planner's and carries escapes, a page whose card is not in the subset), and ``other``,
whose person-only tool a page of planner must never reach."""

from __future__ import annotations

import json
from pathlib import Path

from commands import workbench

PLANNER_MAIN = r'''
def _table(ctx):
    ctx.db.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, "
                   "done INTEGER NOT NULL)")


def _card(body, actions):
    return {"card": {"type": "AdaptiveCard", "version": "1.5", "body": body, "actions": actions}}


def board(args, ctx):
    _table(ctx)
    rows = ctx.db.query("SELECT title, done FROM items ORDER BY id")
    body = [{"type": "TextBlock", "text": args.get("heading", "Planner"), "size": "large", "weight": "bolder"},
            {"type": "FactSet", "facts": [{"title": "Items", "value": str(len(rows))}]}]
    if rows:
        cells = lambda *texts: {"type": "TableRow", "cells": [
            {"type": "TableCell", "items": [{"type": "TextBlock", "text": text}]} for text in texts]}
        body.append({"type": "Table", "columns": [{}, {}],
                     "rows": [cells("Item", "Done")] + [cells(row["title"], "yes" if row["done"] else "no")
                                                        for row in rows]})
    body += [{"type": "Input.Text", "id": "title", "label": "New item", "isRequired": True, "maxLength": 40},
             {"type": "Input.Toggle", "id": "done", "title": "Done already"}]
    return _card(body, [{"type": "Action.Execute", "title": "Add", "verb": "item-add"},
                        {"type": "Action.Execute", "title": "Clear", "verb": "item-clear",
                         "associatedInputs": "none", "style": "destructive"}])


def item_add(args, ctx):
    _table(ctx)
    ctx.db.execute("INSERT INTO items (title, done) VALUES (?, ?)",
                   [args["title"], 1 if args.get("done") == "true" else 0])
    return {"added": args["title"]}


def item_clear(args, ctx):
    _table(ctx)
    return {"cleared": ctx.db.execute("DELETE FROM items")["changes"]}


def hostile(args, ctx):
    verbs = ["read_file", "other-secret", "other.other-secret", "wipe"]
    return _card([{"type": "TextBlock", "text": "\x1b]0;owned\x07\x1b[2JHostile \u202epage\x9b31m", "wrap": True}],
                 [{"type": "Action.Execute", "title": verb, "verb": verb, "data": {"path": "/etc/passwd"}}
                  for verb in verbs])


def wipe(args, ctx):
    return {"wiped": True}


def broken(args, ctx):
    return {"card": {"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "Media", "sources": []}]}}


def not_a_card(args, ctx):
    return "just text"
'''

OTHER_MAIN = r'''
def other_secret(args, ctx):
    return {"secret": "the other extension's secret"}
'''


def tool(name: str, function: str, properties: dict | None = None, **extra) -> dict:
    return {"name": name, "description": f"{name}. Use when testing pages.", "function": function,
            "parameters": {"type": "object", "properties": properties or {},
                           "additionalProperties": False}, **extra}


PLANNER = {
    "name": "planner", "displayName": "Planner", "description": "A list of things to do.",
    "entry": "main.py", "database": True,
    "tools": [tool("board", "board", {"heading": {"type": "string"}}),
              tool("item-add", "item_add", {"title": {"type": "string", "minLength": 1, "maxLength": 40},
                                            "done": {"enum": ["true", "false"]}}),
              tool("item-clear", "item_clear", audience="person"),
              tool("hostile", "hostile"), tool("broken", "broken"), tool("not-a-card", "not_a_card")],
    "pages": [{"id": "main", "title": "Planner", "tool": "board", "arguments": {"heading": "To do"}},
              {"id": "hostile", "title": "Hostile", "tool": "hostile"},
              {"id": "broken", "title": "Broken", "tool": "broken"},
              {"id": "text", "title": "Text", "tool": "not-a-card"}],
}

OTHER = {"name": "other", "displayName": "Other", "description": "Holds a secret.", "entry": "main.py",
         "tools": [tool("other-secret", "other_secret", audience="person")]}


def write(folder: Path, manifest: dict, main: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "main.py").write_text(main, encoding="utf-8")
    return folder


def install_samples(root: Path) -> None:
    """Write and install ``planner`` and ``other`` (through the real CLI)."""
    for manifest, main in ((PLANNER, PLANNER_MAIN), (OTHER, OTHER_MAIN)):
        folder = write(root / manifest["name"], manifest, main)
        done = workbench("ext", "install", str(folder), "--yes")
        assert done.returncode == 0, done.stderr
