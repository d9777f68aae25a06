"""The rules for combining hook handlers' answers, one test per rule of the format."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from workbench.hooks import dispatch
from workbench.hooks.registry import Hook

EVENT = {"tool_call_id": "c1", "tool_name": "ext.read", "args": {"path": "a", "limit": 10},
         "cwd": "/w", "session_id": "s"}


def hook(name: str, event: str = "on_tool_call") -> Hook:
    return Hook(extension=name, event=event, function="fn", folder=Path("/x"), entry=Path("/x/main.py"),
                runtime="python")


def runner(answers: dict):
    """Answers by extension name; an Exception instance is raised; calls are recorded."""
    seen = []

    async def run(h: Hook, event):
        seen.append((h.extension, event))
        answer = answers[h.extension]
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return await answer(event)
        return answer

    return run, seen


async def test_first_block_wins_and_later_handlers_do_not_run():
    run, seen = runner({"a": None, "b": {"block": "destructive command"}, "c": {"block": "other"}})
    decision = await dispatch.on_tool_call([hook("a"), hook("b"), hook("c")], EVENT, run)
    assert decision.blocked == "destructive command"
    assert [name for name, _ in seen] == ["a", "b"]


def test_block_reason_is_bounded():
    run, _ = runner({"a": {"block": "x" * 900}})
    decision = asyncio.run(dispatch.on_tool_call([hook("a")], EVENT, run))
    assert len(decision.blocked) == 500


async def test_last_replacement_wins_and_each_handler_sees_the_original_arguments():
    run, seen = runner({"a": {"replace_args": {"path": "a", "limit": 200}},
                        "b": {"replace_args": {"path": "b"}}, "c": "ok"})
    decision = await dispatch.on_tool_call([hook("a"), hook("b"), hook("c")], EVENT, run)
    assert decision.arguments == {"path": "b"} and decision.blocked is None
    assert all(event["args"] == {"path": "a", "limit": 10} for _, event in seen)


async def test_a_handler_that_mutates_its_event_does_not_change_the_next_ones():
    async def mutate(event):
        event["args"]["path"] = "/etc/shadow"
        return None
    run, seen = runner({"a": mutate, "b": None})
    decision = await dispatch.on_tool_call([hook("a"), hook("b")], EVENT, run)
    assert seen[1][1]["args"]["path"] == "a" and decision.arguments == EVENT["args"]


async def test_context_combines_with_replacement_and_survives_a_later_block():
    run, _ = runner({"a": {"replace_args": {"p": 1}, "additional_context": "first"},
                     "b": {"block": "no", "additional_context": "second"}, "c": {"additional_context": "x"}})
    decision = await dispatch.on_tool_call([hook("a"), hook("b"), hook("c")], EVENT, run)
    assert decision.blocked == "no" and decision.contexts == ["first", "second"]


@pytest.mark.parametrize("answer", [None, "ok", 42, ["block", "x"], {"block": ""}, {"block": 7},
                                    {"replace_args": "not a map"}, {"other": 1}])
async def test_any_other_answer_has_no_effect(answer):
    run, _ = runner({"a": answer})
    decision = await dispatch.on_tool_call([hook("a")], EVENT, run)
    assert decision.blocked is None and decision.arguments == EVENT["args"] and decision.contexts == []


@pytest.mark.parametrize("failure", [RuntimeError("boom"), asyncio.TimeoutError(), ValueError("x")])
async def test_a_failing_or_hanging_call_handler_blocks_the_call(failure, caplog):
    run, seen = runner({"a": {"additional_context": "kept"}, "b": failure, "c": None})
    decision = await dispatch.on_tool_call([hook("a"), hook("b"), hook("c")], EVENT, run)
    assert decision.blocked and "failed" in decision.blocked
    assert [name for name, _ in seen] == ["a", "b"] and decision.contexts == ["kept"]
    assert "ext.read" in caplog.text and type(failure).__name__ in caplog.text
    assert "limit" not in caplog.text  # the log never records the arguments


def result_event(result, is_error=False):
    return {"tool_call_id": "c1", "tool_name": "ext.bash", "args": {"command": "env"}, "result": result,
            "is_error": is_error, "cwd": "/w", "session_id": "s"}


async def test_result_replacement_last_wins_and_missing_details_keep_the_original():
    run, _ = runner({"a": {"replace": {"content": "[env output hidden]"}},
                     "b": {"replace": {"content": "[redacted]", "details": None}}})
    decision = await dispatch.on_tool_result([hook("a", "on_tool_result"), hook("b", "on_tool_result")],
                                             result_event("SECRET=1"), run, details={"lines": 3})
    assert decision.result == "[redacted]" and decision.details == {"lines": 3}


async def test_protected_receipts_cannot_be_added_removed_or_changed():
    original = {"changed_paths": ["/a"], "checkpoint_id": "k1", "title": "old"}
    run, _ = runner({"a": {"replace": {"details": {"title": "new", "changed_paths": [],
                                                   "checkpoint_ids": ["forged"], "oldText": "x"}}}})
    decision = await dispatch.on_tool_result([hook("a", "on_tool_result")], result_event("ok"), run,
                                             details=original)
    assert decision.details == {"title": "new", "changed_paths": ["/a"], "checkpoint_id": "k1"}
    run, _ = runner({"a": {"replace": {"details": "not a map"}}})
    kept = await dispatch.on_tool_result([hook("a", "on_tool_result")], result_event("ok"), run,
                                         details=original)
    assert kept.details == original


async def test_an_error_result_cannot_be_replaced_but_can_carry_context():
    run, _ = runner({"a": {"replace": {"content": "all good"}, "additional_context": "retry later"}})
    decision = await dispatch.on_tool_result([hook("a", "on_tool_result")],
                                             result_event({"kind": "tool", "message": "x"}, True), run)
    assert decision.result == {"kind": "tool", "message": "x"} and decision.contexts == ["retry later"]


async def test_a_failing_result_handler_keeps_the_original_and_adds_nothing():
    run, seen = runner({"a": RuntimeError("boom"), "b": {"additional_context": "b's"}})
    decision = await dispatch.on_tool_result([hook("a", "on_tool_result"), hook("b", "on_tool_result")],
                                             result_event("original"), run)
    assert decision.result == "original" and decision.contexts == ["b's"] and len(seen) == 2


def test_context_is_cleaned_and_capped_with_separators_and_ellipsis():
    assert dispatch.clean_context("  hi\x00\x07 there\u202e \n") == "hi there"
    assert dispatch.clean_context("   ") is None and dispatch.clean_context(5) is None
    assert dispatch.clean_context("\ud800") is None
    joined = dispatch.join_contexts(["a" * 3000, "b" * 3000])
    assert len(joined) == 4000 and joined.endswith("…") and "\n\n" in joined
    assert dispatch.join_contexts(["one", "two"]) == "one\n\ntwo"


async def test_session_start_joins_in_registration_order_not_completion_order():
    async def slow(event):
        await asyncio.sleep(0.2)
        return {"additional_context": "first registered"}
    run, _ = runner({"a": slow, "b": {"additional_context": "second"}, "c": RuntimeError("x")})
    hooks = [hook(n, "on_session_start") for n in "abc"]
    context = await dispatch.on_session_start(hooks, {"session_id": "s"}, run)
    assert context == "first registered\n\nsecond"


async def test_session_start_past_its_budget_discards_the_whole_context():
    async def hang(event):
        await asyncio.sleep(10)
    run, _ = runner({"a": {"additional_context": "done in time"}, "b": hang})
    hooks = [hook(n, "on_session_start") for n in "ab"]
    assert await dispatch.on_session_start(hooks, {"session_id": "s"}, run, budget_s=0.2) is None


async def test_observe_only_handlers_cannot_change_anything_and_failures_are_swallowed():
    run, seen = runner({"a": RuntimeError("x"), "b": {"block": "ignored"}})
    assert await dispatch.observe([hook("a", "on_turn_end"), hook("b", "on_turn_end")], {"m": 1}, run) is None
    assert len(seen) == 2
