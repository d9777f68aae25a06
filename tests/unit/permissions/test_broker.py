"""The broker: what a call asks for (required entries missing, optional ones never
decided), and how an answer with declined optional entries is kept, on a real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.events import PermissionAnswer, PermissionRequest, RequestDenied
from workbench.permissions.broker import Broker, Refusal
from workbench.permissions.requirements import Requirement
from workbench.store import Store

TOOL = "notes.search"
NOTES = Requirement("read", "/srv/notes", "Read your notes.")
ARCHIVE = Requirement("read", "/srv/archive", "Search old notes too.", optional=True)
TOKEN = Requirement("env", "NOTES_TOKEN", "Reach the sync service.", optional=True)
REQS = [NOTES, ARCHIVE, TOKEN]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "workbench.db")
    yield opened
    opened.close()


@pytest.fixture
def broker(store: Store) -> Broker:
    return Broker(store)


class Person:
    """Answers prompts from a list and keeps what it was asked."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest):
        self.asked.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, RequestDenied):
            raise answer
        return answer

    def keys(self, index: int = -1) -> list[tuple[str, bool]]:
        return [(p["key"], p["optional"]) for p in self.asked[index].permissions]


def test_pending_holds_missing_required_and_undecided_optional(broker: Broker) -> None:
    pending = broker.pending(TOOL, REQS, None)
    assert pending.required == [NOTES] and pending.optional == [ARCHIVE, TOKEN]
    assert [(e["key"], e["optional"]) for e in pending.shown()] == [
        ("read:/srv/notes", False), ("read:/srv/archive", True), ("env:NOTES_TOKEN", True)]
    # ``missing`` keeps its meaning: required entries only.
    assert broker.missing(TOOL, REQS, None) == [NOTES]


def test_optional_entries_alone_make_a_prompt(broker: Broker) -> None:
    broker.record(TOOL, [NOTES], "always", None)
    pending = broker.pending(TOOL, REQS, None)
    assert pending and pending.required == [] and pending.optional == [ARCHIVE, TOKEN]


def test_a_grant_or_denial_of_any_lasting_scope_decides_an_optional_entry(broker: Broker, store: Store) -> None:
    broker.record(TOOL, [ARCHIVE], "always", None)
    broker.record(TOOL, [TOKEN], "deny", None)
    assert broker.undecided(TOOL, REQS, None) == []
    # A denied optional entry never refuses the call; a denied required one does.
    assert broker.denied(TOOL, REQS, None) == []
    broker.record(TOOL, [NOTES], "deny", None)
    assert broker.denied(TOOL, REQS, None) == [NOTES]


def test_a_grant_for_this_call_alone_is_not_asked_for(broker: Broker) -> None:
    assert broker.pending(TOOL, REQS, None, extra=[("read", "*"), ("env", "NOTES_TOKEN")]).entries == []
    assert broker.granted(TOOL, REQS, None, extra=[("env", "NOTES_TOKEN")]) == [TOKEN]


async def test_declined_once_is_asked_again_and_not_granted(broker: Broker, store: Store) -> None:
    person = Person(PermissionAnswer("once", declined=("env:NOTES_TOKEN",)),
                    PermissionAnswer("once"))
    once = await broker.settle(TOOL, REQS, None, ask=person)
    assert once == {("read", "/srv/notes"), ("read", "/srv/archive")}
    assert store.list_grants(TOOL) == []
    once = await broker.settle(TOOL, REQS, None, ask=person)
    assert person.keys() == [("read:/srv/notes", False), ("read:/srv/archive", True),
                             ("env:NOTES_TOKEN", True)]
    assert ("env", "NOTES_TOKEN") in once


async def test_declined_for_the_session_is_not_asked_again_in_it(broker: Broker, store: Store) -> None:
    first, second = store.create_session("a")["id"], store.create_session("b")["id"]
    person = Person(PermissionAnswer("session", declined=("read:/srv/archive",)),
                    PermissionAnswer("once"))
    assert await broker.settle(TOOL, REQS, first, ask=person) == {("read", "/srv/notes"),
                                                                  ("env", "NOTES_TOKEN")}
    assert await broker.settle(TOOL, REQS, first, ask=person) == set()
    assert len(person.asked) == 1
    assert broker.granted(TOOL, REQS, first) == [NOTES, TOKEN]
    assert [r["state"] for r in broker.explain(TOOL, REQS, first)] == ["granted", "declined", "granted"]
    # Another session is asked about the declined entry (and what it has no grant for).
    await broker.settle(TOOL, REQS, second, ask=person)
    assert person.keys() == [("read:/srv/notes", False), ("read:/srv/archive", True),
                             ("env:NOTES_TOKEN", True)]


async def test_a_session_decline_is_kept_with_the_chat_across_processes(
        broker: Broker, store: Store, tmp_path: Path) -> None:
    chat = store.create_session("a")["id"]
    person = Person(PermissionAnswer("session", declined=("read:/srv/archive",)))
    await broker.settle(TOOL, REQS, chat, ask=person)
    # Another process: a new store and broker on the same file.
    with Store.open(tmp_path / "workbench.db") as other:
        again = Broker(other)
        assert again.undecided(TOOL, REQS, chat) == []
        assert [r["state"] for r in again.explain(TOOL, REQS, chat)][1] == "declined"
        # grants revoke drops it with the grants: asked again.
        again.forget(TOOL, "read")
        assert again.undecided(TOOL, REQS, chat) == [ARCHIVE]
    await broker.settle(TOOL, REQS, chat, ask=Person(PermissionAnswer("session",
                                                                      declined=("read:/srv/archive",))))
    store.delete_session(chat)
    assert store.list_declines(TOOL) == set()


async def test_declined_always_is_a_lasting_denial_that_revoke_takes_back(broker: Broker, store: Store) -> None:
    person = Person(PermissionAnswer("always", declined=("env:NOTES_TOKEN",)))
    await broker.settle(TOOL, REQS, None, ask=person)
    assert {(g["kind"], g["value"], g["scope"]) for g in store.list_grants(TOOL)} == {
        ("read", "/srv/notes", "always"), ("read", "/srv/archive", "always"),
        ("env", "NOTES_TOKEN", "deny")}
    assert await broker.settle(TOOL, REQS, None, ask=person) == set()
    assert broker.granted(TOOL, REQS, None) == [NOTES, ARCHIVE]
    assert [r["state"] for r in broker.explain(TOOL, REQS)] == ["granted", "granted", "denied"]
    store.revoke_grants(TOOL, "env")
    assert broker.undecided(TOOL, REQS, None) == [TOKEN]


async def test_deny_with_a_required_entry_refuses_and_keeps_every_denial(broker: Broker, store: Store) -> None:
    person = Person(PermissionAnswer("deny"))
    with pytest.raises(Refusal) as refused:
        await broker.settle(TOOL, REQS, None, ask=person)
    assert refused.value.state == "denied" and refused.value.requirements == [NOTES]
    assert {g["scope"] for g in store.list_grants(TOOL)} == {"deny"}
    with pytest.raises(Refusal, match="refused earlier"):
        await broker.settle(TOOL, REQS, None, ask=person)


async def test_deny_of_optional_entries_alone_runs_without_them_and_is_remembered(broker: Broker,
                                                                                  store: Store) -> None:
    broker.record(TOOL, [NOTES], "always", None)
    person = Person(PermissionAnswer("deny"))
    assert await broker.settle(TOOL, REQS, None, ask=person) == set()
    assert broker.granted(TOOL, REQS, None) == [NOTES]
    assert await broker.settle(TOOL, REQS, None, ask=person) == set()
    assert len(person.asked) == 1


async def test_no_answer_refuses_required_entries_and_declines_optional_ones_for_the_session(
        broker: Broker, store: Store) -> None:
    session = store.create_session("c")["id"]
    person = Person(RequestDenied("closed"), RequestDenied("closed"))
    with pytest.raises(Refusal, match="denied"):
        await broker.settle(TOOL, REQS, session, ask=person)
    assert store.list_grants(TOOL) == []
    broker.record(TOOL, [NOTES], "always", None)
    assert await broker.settle(TOOL, REQS, session, ask=person) == set()
    assert broker.undecided(TOOL, REQS, session) == []
    assert store.list_grants(TOOL)[0]["scope"] == "always" and len(store.list_grants(TOOL)) == 1
    broker.forget(TOOL, "read")
    assert broker.undecided(TOOL, REQS, session) == [ARCHIVE]


async def test_declining_a_required_entry_refuses_the_call(broker: Broker, store: Store) -> None:
    person = Person(PermissionAnswer("always", declined=("read:/srv/notes",)))
    with pytest.raises(Refusal, match="declined"):
        await broker.settle(TOOL, REQS, None, ask=person)
    assert store.list_grants(TOOL) == []


async def test_without_a_prompt_optional_entries_are_left_out(broker: Broker) -> None:
    person = Person()
    with pytest.raises(Refusal, match="not granted"):
        await broker.settle(TOOL, REQS, None, ask=person, prompt=False)
    assert await broker.settle(TOOL, REQS, None, ask=person, prompt=False,
                               extra=[("read", "/srv/notes")]) == set()
    assert person.asked == []


# --- pinned paths ----------------------------------------------------------------


async def test_a_granted_path_is_pinned_when_asked_and_kept_with_its_grant(broker, store, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    req = Requirement("read", str(folder), "Read your notes.")
    person = Person(PermissionAnswer("always"))
    await broker.settle(TOOL, [req], None, ask=person)
    [grant] = store.list_grants(TOOL)
    assert (grant["resolved"], grant["device"], grant["inode"]) == (
        str(folder), folder.stat().st_dev, folder.stat().st_ino)
    [granted] = broker.granted(TOOL, [req], None)
    assert granted.standing and granted.pin is not None and granted.pin.inode == folder.stat().st_ino
    assert "resolved" not in person.asked[0].permissions[0]


async def test_a_once_answer_pins_its_call_alone(broker, store, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    req = Requirement("read", str(folder), "Read your notes.")
    once = await broker.settle(TOOL, [req], None, ask=Person(PermissionAnswer("once")))
    assert store.list_grants(TOOL) == []
    [granted] = broker.granted(TOOL, [req], None, once)
    assert not granted.standing and granted.pin.inode == folder.stat().st_ino
    # Taken by that call: a later call with the same pair and no answer pins afresh.
    [later] = broker.granted(TOOL, [req], None, once)
    assert later.pin is None


async def test_the_prompt_shows_where_a_linked_path_leads(broker, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    req = Requirement("write", str(tmp_path / "alias"), "Save there.")
    person = Person(PermissionAnswer("once"))
    await broker.settle(TOOL, [req], None, ask=person)
    assert person.asked[0].permissions[0]["resolved"] == str(tmp_path / "real")


def test_a_denial_keeps_no_pin_and_other_kinds_have_none(broker, store, tmp_path):
    broker.record(TOOL, [Requirement("env", "HOME", "x")], "always", None)
    [granted] = broker.granted(TOOL, [Requirement("env", "HOME", "x")], None)
    assert granted.pin is None and granted.standing
    broker.record(TOOL, [NOTES], "deny", None)
    assert [g["resolved"] for g in store.list_grants(TOOL) if g["kind"] == "read"] == [None]
