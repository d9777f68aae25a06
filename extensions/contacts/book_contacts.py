"""The address book's contacts in the add-on's private database (``ctx.db``): checking
what a tool is given, reading and writing contacts, and the search that ignores case
and accents and matches a phone number however it is spaced.

Every write returns what the host records as a change (``change``), naming the
person-only ``contact-restore`` with the contact as it was (``null``: it did not exist).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
import uuid
from typing import Any

LIMITS = {"name": 200, "organisation": 200, "label": 40, "phone": 40, "email": 254,
          "address": 500, "notes": 4000}
"""The longest text of each field, in characters."""
MAX_ITEMS = 10
"""Phones, and emails, a contact keeps at most."""
MAX_CONTACTS = 2000

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS contacts (
        id INTEGER PRIMARY KEY, uid TEXT NOT NULL, name TEXT NOT NULL,
        organisation TEXT NOT NULL DEFAULT '', phones TEXT NOT NULL DEFAULT '[]',
        emails TEXT NOT NULL DEFAULT '[]', birthday TEXT, address TEXT NOT NULL DEFAULT '',
        notes TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, updated TEXT NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)
FIELDS = ("name", "organisation", "phones", "emails", "birthday", "address", "notes")

_PHONE = re.compile(r"^[0-9+()./\- ]+$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_BIRTHDAY = re.compile(r"^(?:(\d{4})|-)-(\d{2})-(\d{2})$")


BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The embeddings, overrides and isolates that reorder the text around them (they can make
it read as other text): refused in every field."""


class Refused(ValueError):
    """Input the address book does not take; the message says what and why."""


def ready(db: Any) -> None:
    for statement in SCHEMA:
        db.execute(statement)


def _stamp() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def text(value: Any, field: str, *, lines: bool = False, limit: str | None = None) -> str:
    """A free-text field: at most its limit, no control characters (``lines``: new lines
    and tabs allowed)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refused(f"{field} is text")
    most = LIMITS[limit or field]
    if len(value) > most:
        raise Refused(f"{field} has {len(value)} characters; at most {most}")
    for char in value:
        if char in BIDI_CONTROLS:
            raise Refused(f"{field} holds the bidirectional control U+{ord(char):04X}, which can "
                          "make text read as other text")
        if unicodedata.category(char) in ("Cc", "Cs") and not (lines and char in "\n\t"):
            raise Refused(f"{field} holds the control character U+{ord(char):04X}"
                          + ("" if lines else " (it is one line)"))
    return value if lines else value.strip()


def birthday(value: Any) -> str | None:
    """``YYYY-MM-DD``, or ``--MM-DD`` when the year is not known."""
    if value in (None, ""):
        return None
    match = _BIRTHDAY.match(value) if isinstance(value, str) else None
    if match is None:
        raise Refused("birthday is YYYY-MM-DD, or --MM-DD when the year is not known")
    year = int(match.group(1)) if match.group(1) else 2000  # a leap year: --02-29 is a day
    try:
        day = dt.date(year, int(match.group(2)), int(match.group(3)))
    except ValueError:
        raise Refused(f"birthday {value} is no day of the calendar") from None
    if match.group(1) and not 1850 <= year <= dt.date.today().year:
        raise Refused("birthday's year is from 1850 to this year")
    return value if match.group(1) else f"--{day.month:02d}-{day.day:02d}"


def _items(value: Any, field: str, key: str, check) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refused(f"{field} is a list of {{label, {key}}}")
    if len(value) > MAX_ITEMS:
        raise Refused(f"a contact keeps at most {MAX_ITEMS} {field}; {len(value)} given")
    out = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            item = {key: item}
        if not isinstance(item, dict) or set(item) - {"label", key}:
            raise Refused(f"{field}[{index}] is {{label, {key}}}")
        label = text(item.get("label"), f"{field}[{index}].label", limit="label")
        found = check(text(item.get(key), f"{field}[{index}].{key}", limit=field[:-1]), f"{field}[{index}]")
        out.append({"label": label, key: found})
    return out


def _phone(value: str, where: str) -> str:
    if not value or not _PHONE.match(value) or not any(c.isdigit() for c in value):
        raise Refused(f"{where} is a phone number: digits, spaces and + ( ) - . /")
    return value


def _email(value: str, where: str) -> str:
    if not _EMAIL.match(value):
        raise Refused(f"{where} is an email address such as anna@example.org")
    return value


def build(values: dict[str, Any]) -> dict[str, Any]:
    """A contact's fields, every one checked (``Refused`` says which)."""
    name = text(values.get("name"), "name")
    if not name:
        raise Refused("name is required")
    return {"name": name, "organisation": text(values.get("organisation"), "organisation"),
            "phones": _items(values.get("phones"), "phones", "number", _phone),
            "emails": _items(values.get("emails"), "emails", "address", _email),
            "birthday": birthday(values.get("birthday")),
            "address": text(values.get("address"), "address", lines=True).strip(),
            "notes": text(values.get("notes"), "notes", lines=True)}


def _from_row(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "organisation": row["organisation"],
            "phones": json.loads(row["phones"]), "emails": json.loads(row["emails"]),
            "birthday": row["birthday"], "address": row["address"], "notes": row["notes"],
            "uid": row["uid"], "created": row["created"], "updated": row["updated"]}


def public(contact: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in contact.items() if k not in ("uid", "created", "updated")}


def card_of(contact: dict[str, Any]) -> dict[str, Any]:
    """The short card a search gives: who, and how to reach them."""
    return {"id": contact["id"], "name": contact["name"], "organisation": contact["organisation"],
            "phones": contact["phones"], "emails": contact["emails"]}


def get(db: Any, contact_id: Any) -> dict[str, Any]:
    if isinstance(contact_id, bool) or not isinstance(contact_id, int):
        raise Refused("id is the number of a contact (contacts-search gives it)")
    rows = db.query("SELECT * FROM contacts WHERE id = ?", [contact_id])
    if not rows:
        raise Refused(f"there is no contact {contact_id}")
    return _from_row(rows[0])


def every(db: Any) -> list[dict[str, Any]]:
    return [_from_row(row) for row in db.query("SELECT * FROM contacts ORDER BY name COLLATE NOCASE, id")]


def _write(db: Any, contact: dict[str, Any]) -> None:
    db.execute(
        "INSERT OR REPLACE INTO contacts (id, uid, name, organisation, phones, emails, birthday, "
        "address, notes, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [contact["id"], contact["uid"], contact["name"], contact["organisation"],
         json.dumps(contact["phones"], ensure_ascii=False), json.dumps(contact["emails"], ensure_ascii=False),
         contact["birthday"], contact["address"], contact["notes"], contact["created"], contact["updated"]])


def create(db: Any, values: dict[str, Any]) -> dict[str, Any]:
    contact = build(values)
    [count] = db.query("SELECT COUNT(*) AS n FROM contacts")
    if count["n"] >= MAX_CONTACTS:
        raise Refused(f"the address book holds {MAX_CONTACTS} contacts, the most it keeps")
    contact.update(id=None, uid=f"{uuid.uuid4()}@workbench-contacts", created=_stamp(), updated=_stamp())
    added = db.execute(
        "INSERT INTO contacts (uid, name, organisation, phones, emails, birthday, address, notes, "
        "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [contact["uid"], contact["name"], contact["organisation"],
         json.dumps(contact["phones"], ensure_ascii=False), json.dumps(contact["emails"], ensure_ascii=False),
         contact["birthday"], contact["address"], contact["notes"], contact["created"], contact["updated"]])
    contact["id"] = int(added["lastInsertRowId"])
    return contact


def update(db: Any, contact_id: Any, values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The contact before and after; a field absent stays, a list given replaces the
    whole list, ``null`` clears a field."""
    before = get(db, contact_id)
    merged = {field: before[field] for field in FIELDS}
    merged.update({field: values[field] for field in FIELDS if field in values})
    after = build(merged)
    after.update(id=before["id"], uid=before["uid"], created=before["created"], updated=_stamp())
    _write(db, after)
    return before, after


def delete(db: Any, contact_id: Any) -> dict[str, Any]:
    before = get(db, contact_id)
    db.execute("DELETE FROM contacts WHERE id = ?", [before["id"]])
    return before


def restore(db: Any, contact_id: Any, snapshot: Any) -> None:
    """Put a contact back as ``snapshot`` had it (None: remove it) — the undo of a write."""
    if isinstance(contact_id, bool) or not isinstance(contact_id, int):
        raise Refused("id is the number of a contact")
    if snapshot is None:
        db.execute("DELETE FROM contacts WHERE id = ?", [contact_id])
        return
    if not isinstance(snapshot, dict) or snapshot.get("id") != contact_id:
        raise Refused("before is the contact as it was, with the same id")
    contact = build(snapshot)
    contact.update(id=contact_id, uid=str(snapshot.get("uid") or f"{uuid.uuid4()}@workbench-contacts"),
                   created=str(snapshot.get("created") or _stamp()),
                   updated=str(snapshot.get("updated") or _stamp()))
    _write(db, contact)


# --- search ---------------------------------------------------------------------------


def fold(value: str) -> str:
    """Text as search compares it: accents dropped, case folded."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def matches(contact: dict[str, Any], words: list[str]) -> bool:
    """Every word is in some field (case and accents ignored); a word of digits also
    matches a phone number whatever its spacing and punctuation."""
    haystack = fold(" ".join([contact["name"], contact["organisation"], contact["address"],
                              contact["notes"], contact["birthday"] or "",
                              *(p["number"] + " " + p["label"] for p in contact["phones"]),
                              *(e["address"] + " " + e["label"] for e in contact["emails"])]))
    numbers = [_digits(p["number"]) for p in contact["phones"]]
    for word in words:
        if fold(word) in haystack:
            continue
        digits = _digits(word)
        if len(digits) >= 3 and not any(c.isalpha() for c in word) and any(
                digits in number for number in numbers):
            continue
        return False
    return True


def search(contacts: list[dict[str, Any]], query: str, limit: int) -> list[dict[str, Any]]:
    words = query.split()
    # A number typed with spaces ("333 123 4567") is also tried as one number.
    joined = "".join(words) if words and all(not any(c.isalpha() for c in w) for w in words) else None
    found = []
    for contact in contacts:
        if matches(contact, words) or (joined and matches(contact, [joined])):
            found.append(contact)
            if len(found) >= limit:
                break
    return found
