"""Headless answers: the deny, allowlisted and delegate policies, and answers files."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from workbench.errors import WorkbenchError
from workbench.events import AskUserRequest, PermissionAnswer, PermissionRequest, RequestDenied
from workbench.headless.responder import HeadlessResponder, load_answers, parse_policy

PERMISSION = PermissionRequest(tool="builtin.read_file",
                               permissions=[{"kind": "read", "value": "/home/x", "reason": "r"}])
FORM = AskUserRequest(tool="samples.sample_choice", call_id="c1",
                      questions=[{"question": "Pick", "options": [{"label": "A", "value": "a"}]}])


def delegate(tmp_path, body: str) -> str:
    script = tmp_path / "delegate.py"
    script.write_text(textwrap.dedent(body))
    return f"delegate:{sys.executable} {script}"


async def test_deny_is_the_default_and_records_why():
    seen = []
    responder = HeadlessResponder(record=lambda r, o: seen.append(o))
    with pytest.raises(RequestDenied, match="policy is deny"):
        await responder.answer(PERMISSION)
    assert seen == [{"denied": "the approvals policy is deny; pass --approvals or --grant"}]


async def test_allowlisted_grants_listed_tools_once_and_denies_others():
    responder = HeadlessResponder("allowlisted", allowlist=["read_file"])
    assert (await responder.answer(PERMISSION)).decision == "once"
    other = PermissionRequest(tool="builtin.list_folder", permissions=[])
    with pytest.raises(RequestDenied, match="not in headless.allowlist"):
        await responder.answer(other)


async def test_delegate_reads_the_request_and_answers(tmp_path):
    policy = delegate(tmp_path, """
        import json, sys
        request = json.load(sys.stdin)
        assert request["type"] == "permission" and request["tool"] == "builtin.read_file"
        print(json.dumps({"decision": "session"}))
    """)
    assert (await HeadlessResponder(policy).answer(PERMISSION)).decision == "session"


@pytest.mark.parametrize("body, reason", [
    ("import time; time.sleep(30)", "did not answer within"),
    ("import sys; sys.exit(3)", "exited with status 3"),
    ("print('yes please')", "not JSON"),
    ("print('{\"decision\": \"maybe\"}')", "not a decision"),
    ("print('{\"decision\": \"deny\"}')", "denied it"),
])
async def test_delegate_failures_mean_deny(tmp_path, body, reason):
    responder = HeadlessResponder(delegate(tmp_path, body), delegate_timeout=0.5)
    with pytest.raises(RequestDenied, match=reason):
        await responder.answer(PERMISSION)


async def test_delegate_that_cannot_start_means_deny(tmp_path):
    responder = HeadlessResponder(f"delegate:{tmp_path}/missing-program")
    with pytest.raises(RequestDenied, match="could not start"):
        await responder.answer(PERMISSION)


async def test_forms_answered_in_order_from_answers_then_refused(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([["a"], ["b"]]))
    responder = HeadlessResponder(answers=load_answers(path))
    assert await responder.answer(FORM) == ["a"]
    with pytest.raises(RequestDenied, match=r"question 1 \('Pick'\): \"b\" is not one of the options \(\"a\"\)"):
        await responder.answer(FORM)
    with pytest.raises(RequestDenied, match="no answers left"):
        await responder.answer(FORM)


async def test_delegate_answers_forms(tmp_path):
    policy = delegate(tmp_path, """
        import json, sys
        request = json.load(sys.stdin)
        print(json.dumps({"answers": [q["options"][0]["value"] for q in request["questions"]]}))
    """)
    assert await HeadlessResponder(policy).answer(FORM) == ["a"]


def test_answers_file_errors_name_the_place(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text('[["a"],\n {"x": 1}]')
    with pytest.raises(WorkbenchError) as info:
        load_answers(path)
    assert info.value.where == f"{path}#/1"
    path.write_text("[[")
    with pytest.raises(WorkbenchError) as info:
        load_answers(path)
    assert info.value.where.startswith(f"{path}:1:")


def test_unknown_policy_is_a_usage_error():
    with pytest.raises(WorkbenchError) as info:
        parse_policy("sometimes")
    assert int(info.value.exit_code) == 2
    assert parse_policy("delegate: ./approve --fast") == ("delegate", "./approve --fast")


# --- optional entries ----------------------------------------------------------------

OPTIONAL_ONLY = PermissionRequest(tool="notes.search", permissions=[
    {"kind": "env", "value": "NOTES_TOKEN", "reason": "Sync.", "optional": True, "key": "env:NOTES_TOKEN"},
    {"kind": "read", "value": "/srv/archive", "reason": "Old notes.", "optional": True,
     "key": "read:/srv/archive"}])
MIXED = PermissionRequest(tool="notes.search", permissions=[
    {"kind": "read", "value": "/srv/notes", "reason": "Notes.", "optional": False, "key": "read:/srv/notes"},
    *OPTIONAL_ONLY.permissions])


async def test_deny_declines_optional_entries_for_this_call_and_refuses_required_ones():
    seen = []
    responder = HeadlessResponder(record=lambda r, o: seen.append(o))
    answer = await responder.answer(OPTIONAL_ONLY)
    assert answer == PermissionAnswer("once", declined=("env:NOTES_TOKEN", "read:/srv/archive"))
    assert seen == [{"answer": "once", "declined": ["env:NOTES_TOKEN", "read:/srv/archive"]}]
    with pytest.raises(RequestDenied, match="policy is deny"):
        await responder.answer(MIXED)


async def test_allowlisted_accepts_optional_entries_of_listed_tools_only():
    listed = HeadlessResponder("allowlisted", allowlist=["notes.search"])
    assert await listed.answer(MIXED) == PermissionAnswer("once")
    other = HeadlessResponder("allowlisted", allowlist=["read_file"])
    assert (await other.answer(OPTIONAL_ONLY)).declined == ("env:NOTES_TOKEN", "read:/srv/archive")
    with pytest.raises(RequestDenied, match="not in headless.allowlist"):
        await other.answer(MIXED)


async def test_a_delegate_sees_optional_entries_and_may_decline_them(tmp_path):
    policy = delegate(tmp_path, """
        import json, sys
        request = json.load(sys.stdin)
        optional = [p["key"] for p in request["permissions"] if p["optional"]]
        print(json.dumps({"decision": "always", "declined": optional[:1]}))
    """)
    assert await HeadlessResponder(policy).answer(MIXED) == PermissionAnswer(
        "always", declined=("env:NOTES_TOKEN",))


async def test_a_delegate_declining_something_else_than_keys_is_a_refusal(tmp_path):
    policy = delegate(tmp_path, """print('{"decision": "once", "declined": "env:NOTES_TOKEN"}')""")
    with pytest.raises(RequestDenied, match="declined must be a list"):
        await HeadlessResponder(policy).answer(MIXED)
