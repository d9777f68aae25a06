"""The address book's pages as Adaptive Cards 1.5 documents (the subset the host
draws): search, the list, one contact's detail, the form to add or change one.

Each action names a tool of this add-on by its own name; the form's phones and emails
are one per line, ``label: value``. A page opens again after each action with its own
arguments: "Open" records the contact picked, which the search, list and detail pages
show, and "Change" the one the form shows.
"""

from __future__ import annotations

from typing import Any

from book_contacts import LIMITS, MAX_ITEMS

LISTED = 200
"""The most contacts a page lists (it says when there are more)."""


def card(body: list[dict[str, Any]], actions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "AdaptiveCard", "version": "1.5", "body": body}
    if actions:
        out["actions"] = actions
    return out


def line(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **extra}


def heading(text: str) -> dict[str, Any]:
    return line(text, size="large", weight="bolder")


def execute(title: str, verb: str, data: dict[str, Any] | None = None, *,
            inputs: bool = False, style: str = "default") -> dict[str, Any]:
    action: dict[str, Any] = {"type": "Action.Execute", "title": title, "verb": verb,
                              "data": data or {}, "associatedInputs": "auto" if inputs else "none"}
    if style != "default":
        action["style"] = style
    return action


def _reach(contact: dict[str, Any]) -> str:
    first = [p["number"] for p in contact["phones"][:1]] + [e["address"] for e in contact["emails"][:1]]
    return " · ".join(first)


def _rows(contacts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for contact in contacts[:LISTED]:
        title = contact["name"] + (f" ({contact['organisation']})" if contact["organisation"] else "")
        out.append({"type": "Container", "items": [
            line(title, weight="bolder"), line(_reach(contact) or "—", isSubtle=True),
            {"type": "ActionSet", "actions": [execute("Open", "page-detail", {"id": contact["id"]})]}]})
    if len(contacts) > LISTED:
        out.append(line(f"{len(contacts) - LISTED} more not listed: search to narrow.", color="warning"))
    return out


def _detail_body(contact: dict[str, Any]) -> list[dict[str, Any]]:
    facts = []
    if contact["organisation"]:
        facts.append({"title": "Organisation", "value": contact["organisation"]})
    for phone in contact["phones"]:
        facts.append({"title": phone["label"] or "Phone", "value": phone["number"]})
    for email in contact["emails"]:
        facts.append({"title": email["label"] or "Email", "value": email["address"]})
    if contact["birthday"]:
        facts.append({"title": "Birthday", "value": contact["birthday"]})
    if contact["address"]:
        facts.append({"title": "Address", "value": contact["address"]})
    body: list[dict[str, Any]] = [line(contact["name"], size="medium", weight="bolder")]
    if facts:
        body.append({"type": "FactSet", "facts": facts})
    if contact["notes"]:
        body.append(line(contact["notes"]))
    body.append({"type": "ActionSet", "actions": [
        execute("Change (on the Form page)", "page-form", {"id": contact["id"]}),
        execute("Delete", "contact-delete", {"id": contact["id"]}, style="destructive")]})
    return [{"type": "Container", "style": "emphasis", "items": body}]


def search_page(query: str, found: list[dict[str, Any]], picked: dict[str, Any] | None) -> dict[str, Any]:
    body = [heading("Search contacts"),
            {"type": "Input.Text", "id": "query", "label": "Words or a number", "value": query,
             "maxLength": 200, "placeholder": "name, email, phone, place…"}]
    if picked is not None:
        body += _detail_body(picked)
    if query:
        body.append(line(f"{len(found)} found for “{query}”." if found else f"Nothing found for “{query}”.",
                         isSubtle=True))
        body += _rows(found)
    return card(body, [execute("Search", "page-search", inputs=True, style="positive"),
                       execute("New contact (on the Form page)", "page-form", {"id": None})])


def list_page(contacts: list[dict[str, Any]], picked: dict[str, Any] | None) -> dict[str, Any]:
    body = [heading(f"Contacts ({len(contacts)})")]
    if picked is not None:
        body += _detail_body(picked)
    body += _rows(contacts) if contacts else [line("No contacts yet.", isSubtle=True)]
    return card(body, [execute("New contact (on the Form page)", "page-form", {"id": None}),
                       execute("Export (vCard)", "contacts-export")])


def detail_page(contact: dict[str, Any] | None) -> dict[str, Any]:
    if contact is None:
        return card([heading("Contact"), line("Pick a contact on the Search or List page (Open).",
                                              isSubtle=True)])
    return card([heading(contact["name"]), *_detail_body(contact)[0]["items"][1:]])


def _lines(items: list[dict[str, str]], key: str) -> str:
    return "\n".join(f"{item['label']}: {item[key]}" if item["label"] else item[key] for item in items)


def form_page(contact: dict[str, Any] | None) -> dict[str, Any]:
    value = (lambda field: contact[field] or "") if contact else (lambda field: "")
    body = [
        heading(f"Change {contact['name']}" if contact else "New contact"),
        {"type": "Input.Text", "id": "name", "label": "Name", "isRequired": True,
         "maxLength": LIMITS["name"], "value": value("name")},
        {"type": "Input.Text", "id": "organisation", "label": "Organisation",
         "maxLength": LIMITS["organisation"], "value": value("organisation")},
        {"type": "Input.Text", "id": "phones", "label": f"Phones, one a line (label: number), up to {MAX_ITEMS}",
         "isMultiline": True, "maxLength": 1000, "placeholder": "mobile: +39 333 123 4567",
         "value": _lines(contact["phones"], "number") if contact else ""},
        {"type": "Input.Text", "id": "emails", "label": f"Emails, one a line (label: address), up to {MAX_ITEMS}",
         "isMultiline": True, "maxLength": 3000, "placeholder": "work: anna@example.org",
         "value": _lines(contact["emails"], "address") if contact else ""},
        {"type": "Input.Text", "id": "birthday", "label": "Birthday (YYYY-MM-DD, or --MM-DD)",
         "maxLength": 10, "value": value("birthday")},
        {"type": "Input.Text", "id": "address", "label": "Address", "isMultiline": True,
         "maxLength": LIMITS["address"], "value": value("address")},
        {"type": "Input.Text", "id": "notes", "label": "Notes", "isMultiline": True,
         "maxLength": LIMITS["notes"], "value": value("notes")},
    ]
    data = {"id": contact["id"]} if contact else {}
    actions = [execute("Save", "contact-save", data, inputs=True, style="positive")]
    if contact:
        actions.append(execute("New contact instead", "page-form", {"id": None}))
    return card(body, actions)
