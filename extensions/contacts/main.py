"""The Contacts add-on's tools: one address book for the person, in this add-on's private
database (``ctx.db``). Each tool runs in its own sandboxed worker with no other grant.

Reads answer at once; every write also answers a ``change`` (what the person sees and
the person-only ``contact-restore`` that undoes it), which the host keeps in its change
list. The ``page-*`` tools answer the pages' card documents; ``contact-save`` takes the
form's fields as the page sends them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import book_contacts as book  # noqa: E402
import book_pages as pages  # noqa: E402
import book_vcard  # noqa: E402

Refused = book.Refused


def _db(ctx: Any) -> Any:
    book.ready(ctx.db)
    return ctx.db


def _change(summary: str, contact_id: int, before: dict[str, Any] | None) -> dict[str, Any]:
    return {"summary": summary[:300],
            "undo": {"tool": "contact-restore", "arguments": {"id": contact_id, "before": before}}}


# --- reads ---------------------------------------------------------------------------


def contacts_search(args, ctx):
    query = args.get("query", "")
    if not isinstance(query, str) or not query.strip():
        raise Refused("query is the words (or the number) to look for")
    limit = args.get("limit") or 20
    found = book.search(book.every(_db(ctx)), query[:200], limit)
    return {"query": query, "contacts": [book.card_of(c) for c in found], "more": len(found) >= limit}


def contact_get(args, ctx):
    return {"contact": book.public(book.get(_db(ctx), args.get("id")))}


def contacts_export(args, ctx):
    every = book.every(_db(ctx))
    return {"filename": "contacts.vcf", "contacts": len(every), "vcard": book_vcard.export(every)}


# --- writes --------------------------------------------------------------------------


def contact_create(args, ctx):
    made = book.create(_db(ctx), args)
    return {"contact": book.public(made),
            "change": _change(f"Added the contact {made['name']}", made["id"], None)}


def contact_update(args, ctx):
    values = {k: v for k, v in args.items() if k != "id"}
    if not values:
        raise Refused("name at least one field to change")
    before, after = book.update(_db(ctx), args.get("id"), values)
    return {"contact": book.public(after),
            "change": _change(f"Changed the contact {after['name']}", after["id"], before)}


def contact_delete(args, ctx):
    before = book.delete(_db(ctx), args.get("id"))
    return {"deleted": before["id"],
            "change": _change(f"Deleted the contact {before['name']}", before["id"], before)}


def contact_restore(args, ctx):
    """The undo of a write (person only): puts the contact back as it was."""
    book.restore(_db(ctx), args.get("id"), args.get("before"))
    return {"restored": args.get("id"), "exists": args.get("before") is not None}


def _pairs(text: Any, key: str, field: str) -> list[dict[str, str]]:
    """``label: value`` lines of the form (a line with no label is the value alone)."""
    if text in (None, ""):
        return []
    if not isinstance(text, str):
        raise Refused(f"{field} is text, one a line")
    out = []
    for raw in text.splitlines():
        entry = raw.strip()
        if not entry:
            continue
        label, sep, value = entry.partition(":")
        out.append({"label": label.strip(), key: value.strip()} if sep else {"label": "", key: entry})
    return out


def contact_save(args, ctx):
    """The form's Save (person only): adds the contact, or changes the one of ``id``."""
    values = {"name": args.get("name"), "organisation": args.get("organisation"),
              "phones": _pairs(args.get("phones"), "number", "phones"),
              "emails": _pairs(args.get("emails"), "address", "emails"),
              "birthday": args.get("birthday"), "address": args.get("address"), "notes": args.get("notes")}
    if args.get("id") is None:
        answer = contact_create(values, ctx)
    else:
        answer = contact_update({"id": args["id"], **values}, ctx)
    _view(ctx.db, "form", None, save=True)  # the form offers a new contact next
    _view(ctx.db, "contact", answer["contact"]["id"], save=True)
    answer["card"] = pages.detail_page(book.get(ctx.db, answer["contact"]["id"]))
    return answer


# --- pages ---------------------------------------------------------------------------


def _view(db: Any, key: str, value: Any = None, *, save: bool = False) -> Any:
    """What a page shows, kept between its openings (a page reopens with its own
    arguments after each action: a search or a pick records what it chose here)."""
    if save:
        db.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                   "SET value = excluded.value", [f"view.{key}", json.dumps(value)])
        return value
    rows = db.query("SELECT value FROM settings WHERE key = ?", [f"view.{key}"])
    return json.loads(rows[0]["value"]) if rows else None


def _picked(db: Any) -> dict[str, Any] | None:
    chosen = _view(db, "contact")
    if chosen is None:
        return None
    try:
        return book.get(db, chosen)
    except Refused:
        return None  # deleted since


def page_search(args, ctx):
    """The search box and what it found; ``query`` given records it (the page opens with
    none and shows the last search), and the contact picked last below."""
    db = _db(ctx)
    query = _view(db, "query", args.get("query") or "", save=True) if "query" in args else (_view(db, "query") or "")
    found = book.search(book.every(db), query[:200], pages.LISTED + 1) if query.strip() else []
    return {"card": pages.search_page(query, found, _picked(db))}


def page_list(args, ctx):
    db = _db(ctx)
    return {"card": pages.list_page(book.every(db), _picked(db))}


def page_detail(args, ctx):
    """The contact ``id`` (recorded as picked), or the one picked last."""
    db = _db(ctx)
    if args.get("id") is not None:
        book.get(db, args["id"])
        _view(db, "contact", args["id"], save=True)
    return {"card": pages.detail_page(_picked(db))}


def page_form(args, ctx):
    """The form for the contact ``id`` (``id`` null: a new one); with no ``id``, the one a
    last action chose (the Form page opens with no arguments)."""
    db = _db(ctx)
    target = _view(db, "form", args.get("id"), save=True) if "id" in args else _view(db, "form")
    try:
        contact = book.get(db, target) if target is not None else None
    except Refused:
        contact = None
    return {"card": pages.form_page(contact)}
