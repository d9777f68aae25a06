"""The run card: frozen as JSON, applied to a run's session, and the responder that
refuses anything outside it at once."""

from __future__ import annotations

import pytest

from workbench.events import AskUserRequest, PermissionRequest, RequestDenied, ToolCallEnded
from workbench.scheduler.card import (CardGrant, CardResponder, RunCard, apply_card, grants_needed,
                                      need_of)
from workbench.store import Store

READ = PermissionRequest(tool="notes.read_file", permissions=[
    {"kind": "read", "value": "/srv/notes", "reason": "Read your notes."}])


def test_a_card_survives_json_and_adds_each_grant_once():
    card = RunCard(model="echo", extensions=("notes",), grants=(CardGrant("notes.read_file", "read", "/srv"),),
                   on_need="pause", cwd="/work", frozen_at=5)
    assert RunCard.from_json(card.to_json()) == card
    more = card.with_grants([CardGrant("notes.read_file", "read", "/srv"), CardGrant("notes.w", "write", "/x")])
    assert [g.tool for g in more.grants] == ["notes.read_file", "notes.w"]
    with pytest.raises(ValueError, match="on_need"):
        RunCard(model="echo", on_need="wait")


async def test_the_responder_refuses_at_once_and_says_what_was_needed():
    seen = []
    responder = CardResponder(on_need=seen.append)
    with pytest.raises(RequestDenied, match="outside this schedule's run card"):
        await responder.answer(READ)
    with pytest.raises(RequestDenied):
        await responder.answer(AskUserRequest(tool="notes.add", call_id="c1", questions=[{"question": "?"}]))
    assert [need["kind"] for need in responder.needs] == ["permission", "ask_user"]
    assert seen == responder.needs
    assert "read /srv/notes" in responder.needs[0]["summary"]
    assert grants_needed(responder.needs) == [CardGrant("notes.read_file", "read", "/srv/notes")]


def test_a_call_refused_without_asking_is_a_need_too():
    responder = CardResponder()
    responder.observe(ToolCallEnded(call_id="c", tool="notes.read_file", ok=False, error={
        "kind": "permission", "message": "permission refused earlier", "missing": READ.permissions}))
    responder.observe(ToolCallEnded(call_id="d", tool="x.y", ok=False, error={"kind": "tool", "message": "boom"}))
    assert len(responder.needs) == 1 and responder.needs[0]["tool"] == "notes.read_file"


def test_the_outcome_follows_the_card():
    responder = CardResponder()
    assert responder.outcome(on_need="fail", run_id=3, turn_status="done", turn_error=None) == ("ok", None)
    assert responder.outcome(on_need="fail", run_id=3, turn_status="error",
                             turn_error="model down") == ("failed", "model down")
    responder.needs.append(need_of(READ))
    status, error = responder.outcome(on_need="fail", run_id=3, turn_status="cancelled", turn_error=None)
    assert status == "failed" and error.startswith("needs approval: notes.read_file")
    status, error = responder.outcome(on_need="pause", run_id=3, turn_status="cancelled", turn_error=None)
    assert status == "paused" and "workbench runs resume 3 --approve" in error


def test_applying_a_card_switches_off_the_rest_and_grants_for_the_session(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        session = store.create_session(title="run", model="echo")["id"]
        other = store.create_session(title="chat", model="echo")["id"]
        card = RunCard(model="echo", extensions=("notes",),
                       grants=(CardGrant("notes.read_file", "read", "/srv/notes"),))
        apply_card(store, session, card, known={"notes", "web", "workbench", "calendar"},
                   always_on="workbench", default_off=frozenset({"notes", "calendar"}))
        # What the card names is on, a first-party add-on (off by default) too; the rest off.
        assert store.session_extensions(session) == {"web": False, "calendar": False, "notes": True}
        [grant] = store.list_grants("notes.read_file")
        assert (grant["scope"], grant["session_id"], grant["value"]) == ("session", session, "/srv/notes")
        assert store.list_grants("notes.read_file", session_id=other) == []
