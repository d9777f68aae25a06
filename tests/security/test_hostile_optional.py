"""Optional permissions a person left out are really out of the tool's reach.

Each tool declares an optional entry next to (or instead of) a required one; the
person answers the prompt through the real gateway, and the sandboxed worker must
reach exactly what was accepted, whatever it tries.
"""

from __future__ import annotations

import pytest

from workbench.core.gateway import CallOptions
from workbench.events import PermissionAnswer, PermissionRequest, RequestDenied

pytestmark = pytest.mark.security

CODE = r'''
import os

def peek(args, ctx):
    seen = {}
    for name, path in args["paths"].items():
        try:
            with open(path) as handle:
                seen[name] = handle.read()
        except OSError as exc:
            seen[name] = f"refused: {exc.strerror}"
    return seen

def token(args, ctx):
    return {"token": os.environ.get("WORKBENCH_TEST_TOKEN"), "keys": sorted(os.environ)}
'''


class Person:
    """Answers each prompt from a list; keeps every request it was shown."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def answer(self, request):
        self.asked.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture
def folders(tmp_path):
    public, private = tmp_path / "public", tmp_path / "private"
    for folder, text in ((public, "the shared page"), (private, "the diary")):
        folder.mkdir()
        (folder / "note.txt").write_text(text)
    return public, private


def declare(lab, public, private) -> None:
    lab.extension("optional", CODE, {
        "peek": {"permissions": {"read": [
            {"path": str(public), "reason": "Read the shared notes."},
            {"path": str(private), "reason": "Read your diary too.", "optional": True}]}},
        "token": {"permissions": {"env": [
            {"key": "WORKBENCH_TEST_TOKEN", "reason": "Sign in when you have a token.",
             "optional": True}]}}})


def paths(public, private) -> dict:
    return {"paths": {"public": str(public / "note.txt"), "private": str(private / "note.txt")}}


async def test_a_declined_optional_path_is_unreadable_while_the_required_one_works(lab, folders):
    public, private = folders
    declare(lab, public, private)
    person = Person(PermissionAnswer("once", declined=(f"read:{private}",)),
                    PermissionAnswer("once"),
                    PermissionAnswer("once", declined=(f"read:{private}",)))
    lab.host.answer_with(person)
    declined = await lab.host.tools.call("peek", paths(public, private))
    assert declined.ok, declined.error
    assert declined.result["public"] == "the shared page"
    assert declined.result["private"].startswith("refused:") and "diary" not in str(declined.result)
    assert [(p["key"], p["optional"]) for p in person.asked[0].permissions] == [
        (f"read:{public}", False), (f"read:{private}", True)]
    # Declined once: asked again; accepted, the worker reads it; declined again, it
    # cannot (no worker started for the wider policy is reused).
    accepted = await lab.host.tools.call("peek", paths(public, private))
    assert accepted.result == {"public": "the shared page", "private": "the diary"}
    again = await lab.host.tools.call("peek", paths(public, private))
    assert again.result["private"].startswith("refused:")
    assert len(person.asked) == 3


async def test_declined_always_stays_out_of_reach_without_asking(lab, folders):
    public, private = folders
    declare(lab, public, private)
    person = Person(PermissionAnswer("always", declined=(f"read:{private}",)))
    lab.host.answer_with(person)
    for _ in range(2):
        outcome = await lab.host.tools.call("peek", paths(public, private))
        assert outcome.result["public"] == "the shared page"
        assert outcome.result["private"].startswith("refused:")
    assert len(person.asked) == 1
    states = {row["value"]: row["state"] for row in lab.host.grants.explain("optional.peek")}
    assert states == {str(public): "granted", str(private): "denied"}


async def test_an_optional_env_key_is_seen_only_when_accepted(lab, folders, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_TOKEN", "s3cret")
    declare(lab, *folders)
    person = Person(PermissionAnswer("once", declined=("env:WORKBENCH_TEST_TOKEN",)),
                    PermissionAnswer("once"))
    lab.host.answer_with(person)
    declined = await lab.host.tools.call("token", {})
    assert declined.ok, declined.error
    assert declined.result["token"] is None and "WORKBENCH_TEST_TOKEN" not in declined.result["keys"]
    assert "s3cret" not in str(declined.result)
    accepted = await lab.host.tools.call("token", {})
    assert accepted.result["token"] == "s3cret"


async def test_denying_a_prompt_of_optional_entries_runs_the_tool_without_them(lab, folders, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_TOKEN", "s3cret")
    declare(lab, *folders)
    session = lab.host.store.create_session("chat")["id"]
    person = Person(RequestDenied("you chose Deny"))
    lab.host.answer_with(person)
    for _ in range(2):
        outcome = await lab.host.tools.call("token", {}, CallOptions(session_id=session))
        assert outcome.ok, outcome.error
        assert outcome.result["token"] is None
    assert len(person.asked) == 1  # remembered for the session


async def test_denying_with_a_required_entry_refuses_the_call(lab, folders):
    public, private = folders
    declare(lab, public, private)
    lab.host.answer_with(Person(RequestDenied("you chose Deny")))
    outcome = await lab.host.tools.call("peek", paths(public, private))
    assert not outcome.ok and outcome.error["kind"] == "permission"
    assert [m["value"] for m in outcome.error["missing"]] == [str(public)]


async def test_a_grant_flag_grants_an_optional_entry_and_none_leaves_it_out(lab, folders, monkeypatch):
    monkeypatch.setenv("WORKBENCH_TEST_TOKEN", "s3cret")
    public, private = folders
    declare(lab, public, private)
    without = await lab.host.tools.call("token", {}, CallOptions(prompt=False))
    assert without.ok and without.result["token"] is None
    flags = lab.host.grants.from_flags("token", ["env:WORKBENCH_TEST_TOKEN"])
    granted = await lab.host.tools.call("token", {}, CallOptions(grants=flags, prompt=False))
    assert granted.result["token"] == "s3cret"
    every = lab.host.grants.from_flags("peek", [], grant_all=True)
    both = await lab.host.tools.call("peek", paths(public, private), CallOptions(grants=every, prompt=False))
    assert both.result == {"public": "the shared page", "private": "the diary"}
    required = lab.host.grants.from_flags("peek", [f"read:{public}"])
    one = await lab.host.tools.call("peek", paths(public, private), CallOptions(grants=required, prompt=False))
    assert one.result["public"] == "the shared page" and one.result["private"].startswith("refused:")
