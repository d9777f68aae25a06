"""The address book: search over every field ignoring case and accents, phone numbers
however spaced, lists that replace on update, the seed's limits, hostile input, the
vCard 3.0 export read back by vobject, and the pages as card documents."""

from __future__ import annotations

import json

import pytest
import vobject

from addon_modules import Ctx, addon_path, card_verbs, tools_module
from workbench.cards import parse_card

addon_path("contacts")

import book_contacts as book  # noqa: E402

contacts_tools = tools_module("contacts")


@pytest.fixture
def ctx(tmp_path):
    made = Ctx(tmp_path / "contacts.db")
    book.ready(made.db)
    return made


def names(ctx, query):
    return [c["name"] for c in book.search(book.every(ctx.db), query, 20)]


def test_search_ignores_case_and_accents_and_spacing_of_numbers(ctx):
    book.create(ctx.db, {"name": "Marco Rossi", "organisation": "Società Rossi",
                         "phones": [{"label": "mobile", "number": "+39 333 123 4567"}],
                         "emails": [{"label": "work", "address": "marco@rossi.example"}]})
    book.create(ctx.db, {"name": "Zoë Ångström", "address": "Rue de l'Église 3, Genève",
                         "phones": [{"label": "home", "number": "(022) 555-01.99"}],
                         "notes": "Met at the CAFÉ"})
    assert names(ctx, "marco") == ["Marco Rossi"]
    assert names(ctx, "SOCIETA") == ["Marco Rossi"]
    assert names(ctx, "zoe angstrom") == ["Zoë Ångström"]
    assert names(ctx, "eglise geneve") == ["Zoë Ångström"]
    assert names(ctx, "cafe") == ["Zoë Ångström"]
    assert names(ctx, "rossi.example") == ["Marco Rossi"]
    for spaced in ("3331234567", "333 123 4567", "+39-333-1234567", "393331234567", "555 0199", "0225550199"):
        assert len(names(ctx, spaced)) == 1, spaced
    assert names(ctx, "marco geneve") == []
    assert names(ctx, "mobile") == ["Marco Rossi"]  # labels are words too


def test_lists_replace_on_update_and_restore_undoes(ctx):
    made = book.create(ctx.db, {"name": "Anna", "emails": [{"label": "", "address": "anna@example.org"}],
                                "phones": [{"label": "mobile", "number": "111"}, {"label": "home", "number": "222"}]})
    before, after = book.update(ctx.db, made["id"], {"phones": [{"label": "work", "number": "333"}]})
    assert [p["number"] for p in after["phones"]] == ["333"]
    assert after["emails"] == made["emails"]  # a field not named stays
    _, cleared = book.update(ctx.db, made["id"], {"emails": None})
    assert cleared["emails"] == []
    book.restore(ctx.db, made["id"], before)
    assert [p["number"] for p in book.get(ctx.db, made["id"])["phones"]] == ["111", "222"]
    book.restore(ctx.db, made["id"], None)
    assert book.every(ctx.db) == []


@pytest.mark.parametrize(("values", "why"), [
    ({"name": ""}, "name is required"),
    ({"name": "n" * 201}, "at most 200"),
    ({"name": "a\x1b]0;owned\x07"}, "control character U\\+001B"),
    ({"name": "x", "phones": [{"number": str(i)} for i in range(11)]}, "at most 10 phones"),
    ({"name": "x", "emails": [{"address": f"a{i}@b.c"} for i in range(11)]}, "at most 10 emails"),
    ({"name": "x", "phones": [{"number": "call me"}]}, "is a phone number"),
    ({"name": "x", "phones": [{"number": "1" * 41}]}, "at most 40"),
    ({"name": "x", "phones": [{"number": "1", "label": "l" * 41}]}, "at most 40"),
    ({"name": "x", "emails": [{"address": "not an email"}]}, "email address"),
    ({"name": "x", "emails": [{"address": "a@" + "b" * 253}]}, "at most 254"),
    ({"name": "x", "birthday": "1990-02-30"}, "no day of the calendar"),
    ({"name": "x", "birthday": "May 1st"}, "YYYY-MM-DD, or --MM-DD"),
    ({"name": "x", "birthday": "--13-01"}, "no day of the calendar"),
    ({"name": "x", "address": "a" * 501}, "at most 500"),
    ({"name": "x", "notes": "n" * 4001}, "at most 4000"),
    ({"name": "x", "phones": "123"}, "is a list"),
])
def test_hostile_or_wrong_contacts_are_refused_naming_the_field(ctx, values, why):
    with pytest.raises(book.Refused, match=why):
        book.create(ctx.db, values)
    assert book.every(ctx.db) == []


def test_birthdays_with_or_without_a_year_and_the_limit_of_contacts(ctx):
    assert book.create(ctx.db, {"name": "Leap", "birthday": "--02-29"})["birthday"] == "--02-29"
    assert book.create(ctx.db, {"name": "Year", "birthday": "1990-05-01"})["birthday"] == "1990-05-01"
    ctx.db.conn.execute("BEGIN")
    ctx.db.conn.executemany("INSERT INTO contacts (uid, name, created, updated) VALUES (?, 'c', '', '')",
                            [(f"u{i}",) for i in range(book.MAX_CONTACTS - 2)])
    ctx.db.conn.execute("COMMIT")
    with pytest.raises(book.Refused, match="2000 contacts"):
        book.create(ctx.db, {"name": "one more"})


def test_the_vcard_export_parses_back_with_vobject(ctx):
    contacts_tools.contact_create({
        "name": "Marco Rossi", "organisation": "Rossi, Bianchi; e Figli",
        "phones": [{"label": "mobile", "number": "+39 333 123 4567"},
                   {"label": "casa di mamma", "number": "06 1234"}],
        "emails": [{"label": "work", "address": "marco@rossi.example"}],
        "birthday": "1980-04-12", "address": "Via Roma 1\n00100 Roma", "notes": "Likes \\ backslashes, and commas"}, ctx)
    contacts_tools.contact_create({"name": "Anna", "emails": [{"address": "anna@example.org"}],
                                   "birthday": "--07-09", "notes": "é" * 60}, ctx)
    text = contacts_tools.contacts_export({}, ctx)["vcard"]
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    cards = {c.fn.value: c for c in vobject.readComponents(text)}
    assert set(cards) == {"Marco Rossi", "Anna"}
    marco = cards["Marco Rossi"]
    assert marco.version.value == "3.0"
    assert marco.n.value.family == "Rossi" and marco.n.value.given == "Marco"
    assert marco.org.value == ["Rossi, Bianchi; e Figli"]
    phones = {t.value: t for t in marco.contents["tel"]}
    assert set(phones) == {"+39 333 123 4567", "06 1234"}
    assert phones["+39 333 123 4567"].params["TYPE"] == ["mobile"]
    labels = [c.value for c in marco.contents.get("x-ablabel", [])]
    assert labels == ["casa di mamma"]
    assert marco.email.value == "marco@rossi.example" and marco.bday.value == "1980-04-12"
    assert marco.adr.value.street == "Via Roma 1\n00100 Roma"
    assert marco.note.value == "Likes \\ backslashes, and commas"
    anna = cards["Anna"]
    assert anna.bday.value == "--07-09" and anna.note.value == "é" * 60


def test_every_page_is_a_card_of_the_subset_and_the_form_saves(ctx):
    made = contacts_tools.contact_create({"name": "Marco", "phones": [{"label": "mobile", "number": "333"}]}, ctx)
    contact_id = made["contact"]["id"]
    declared = {t["name"] for t in json.loads((addon_path("contacts") / "loca.json").read_text())["tools"]}
    answers = [contacts_tools.page_detail({}, ctx), contacts_tools.page_search({"query": "marco"}, ctx),
               contacts_tools.page_search({}, ctx), contacts_tools.page_list({}, ctx),
               contacts_tools.page_detail({"id": contact_id}, ctx), contacts_tools.page_list({}, ctx),
               contacts_tools.page_form({}, ctx), contacts_tools.page_form({"id": contact_id}, ctx)]
    # A page opens again with its own arguments: the last search and the pick are kept.
    assert "Marco" in json.dumps(contacts_tools.page_search({}, ctx)["card"])
    assert "Change Marco" in json.dumps(contacts_tools.page_form({}, ctx)["card"])
    assert "333" in json.dumps(contacts_tools.page_detail({}, ctx)["card"])
    verbs = set()
    for answer in answers:
        verbs |= card_verbs(parse_card(answer["card"], where="contacts page"))
    assert verbs and verbs <= declared
    saved = contacts_tools.contact_save({"id": contact_id, "name": "Marco Rossi", "organisation": None,
                                         "phones": "mobile: +39 333\nwork: 06 99", "emails": "m@r.example",
                                         "birthday": None, "address": None, "notes": None}, ctx)
    assert saved["contact"]["phones"] == [{"label": "mobile", "number": "+39 333"},
                                          {"label": "work", "number": "06 99"}]
    assert saved["contact"]["emails"] == [{"label": "", "address": "m@r.example"}]
    assert saved["change"]["undo"]["arguments"]["before"]["name"] == "Marco"
    parse_card(saved["card"])
    assert "New contact" in json.dumps(contacts_tools.page_form({}, ctx)["card"])
