"""The whole address book as one vCard 3.0 file (RFC 2426).

Each contact is a ``VCARD`` with ``FN`` and ``N`` (the last word of the name taken as
the family name), ``ORG``, a ``TEL`` per phone and an ``EMAIL`` per address (a label
that is one word is their ``TYPE``; another is an ``X-ABLabel`` of a grouped
property, as address books write it), ``BDAY`` (``--MM-DD`` without a year, which
some programs do not read), the address as ``ADR``'s street, and ``NOTE``. Text is
escaped and lines folded at 75 octets, ended with CRLF.
"""

from __future__ import annotations

import re
from typing import Any

PRODID = "-//Workbench//Contacts add-on//EN"
_TOKEN = re.compile(r"^[A-Za-z0-9-]{1,40}$")


def escape(value: str) -> str:
    return (value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n"))


def fold(line: str) -> str:
    out, current, size = [], "", 0
    for char in line:
        width = len(char.encode("utf-8"))
        if size + width > 75:
            out.append(current)
            current, size = " ", 1
        current += char
        size += width
    out.append(current)
    return "\r\n".join(out)


def _labelled(kind: str, label: str, value: str, group: list[int], extra: str = "") -> list[str]:
    if not label:
        return [f"{kind}{extra}:{escape(value)}"]
    if _TOKEN.match(label):
        return [f"{kind}{extra};TYPE={label}:{escape(value)}"]
    group[0] += 1
    name = f"item{group[0]}"
    return [f"{name}.{kind}{extra}:{escape(value)}", f"{name}.X-ABLabel:{escape(label)}"]


def vcard(contact: dict[str, Any]) -> list[str]:
    name = contact["name"]
    given, _, family = name.rpartition(" ")
    if not given:
        given, family = family, ""
    lines = ["BEGIN:VCARD", "VERSION:3.0", f"PRODID:{PRODID}", f"UID:{escape(contact['uid'])}",
             f"FN:{escape(name)}", f"N:{escape(family)};{escape(given)};;;"]
    if contact["organisation"]:
        lines.append(f"ORG:{escape(contact['organisation'])}")
    group = [0]
    for phone in contact["phones"]:
        lines += _labelled("TEL", phone["label"], phone["number"], group)
    for email in contact["emails"]:
        lines += _labelled("EMAIL", email["label"], email["address"], group, ";TYPE=INTERNET")
    if contact["birthday"]:
        lines.append(f"BDAY:{contact['birthday']}")
    if contact["address"]:
        lines.append(f"ADR:;;{escape(contact['address'])};;;;")
    if contact["notes"]:
        lines.append(f"NOTE:{escape(contact['notes'])}")
    if contact.get("updated"):
        lines.append(f"REV:{contact['updated']}")
    lines.append("END:VCARD")
    return lines


def export(contacts: list[dict[str, Any]]) -> str:
    return "".join(fold(line) + "\r\n" for contact in contacts for line in vcard(contact))
