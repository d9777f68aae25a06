"""``workbench.testing``: the mock ctx extension authors test their tools with."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
import threading

import pytest

from workbench.sandbox import worker
from workbench.testing import (GROUPS, Bubble, CtxError, CtxPermissionDenied, MockContext, MockDatabase,
                               MockMemories, MockSignal, ProgressUpdate, UnstubbedMember,
                               WorkbenchMockContext, run_tool)

ANSWERING_CALLS = {
    "ask_user": lambda ctx: ctx.ask_user([{"question": "?"}]),
    "schedule_prompt": lambda ctx: ctx.schedule_prompt({"title": "t"}),
    "get_chat_context": lambda ctx: ctx.get_chat_context(),
    "memories.list": lambda ctx: ctx.memories.list(),
    "memories.get": lambda ctx: ctx.memories.get("t"),
    "memories.get_file": lambda ctx: ctx.memories.get_file("t", "n"),
    "memories.write": lambda ctx: ctx.memories.write("t", "c"),
    "memories.edit": lambda ctx: ctx.memories.edit("t", "a", "b"),
    "db.query": lambda ctx: ctx.db.query("SELECT 1"),
    "db.execute": lambda ctx: ctx.db.execute("SELECT 1"),
    "llm.complete": lambda ctx: ctx.llm.complete({"prompt": "p"}),
    "tts.speak": lambda ctx: ctx.tts.speak("t"),
    "stt.transcribe": lambda ctx: ctx.stt.transcribe({"dataB64": ""}),
}


def _public(obj) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_the_mock_has_exactly_the_members_of_the_real_python_ctx():
    channel = type("Channel", (), {"aborted": threading.Event()})()
    real = worker.Context(channel, {})
    mock = MockContext()
    records = {"calls", "unstubbed", "progress_updates", "progress", "logs", "bubbles"}
    assert _public(mock) - records == _public(real)
    for group in GROUPS:
        assert _public(getattr(mock, group)) == _public(getattr(real, group)), group
    assert _public(mock.display) == _public(real.display)
    assert {"aborted", "wait", "throw_if_aborted"} <= _public(mock.signal)
    assert WorkbenchMockContext is MockContext


# --- failing loudly -------------------------------------------------------------


@pytest.mark.parametrize("member", sorted(ANSWERING_CALLS))
def test_every_unstubbed_member_fails_naming_itself(member):
    ctx = MockContext()
    with pytest.raises(UnstubbedMember, match=rf"^ctx\.{member} was called but not stubbed") as failed:
        ANSWERING_CALLS[member](ctx)
    assert isinstance(failed.value, AssertionError) and failed.value.member == member
    assert ctx.unstubbed == [member]


@pytest.mark.parametrize("member", sorted(ANSWERING_CALLS))
async def test_unstubbed_members_fail_at_the_call_inside_an_event_loop_too(member):
    with pytest.raises(UnstubbedMember):
        ANSWERING_CALLS[member](MockContext())


def test_the_message_says_how_to_stub_the_member():
    with pytest.raises(UnstubbedMember, match=r"pass llm=\{'complete': \.\.\.\} to MockContext"):
        MockContext().llm.complete({"prompt": "p"})
    with pytest.raises(UnstubbedMember, match=r"pass ask_user=\.\.\. to MockContext"):
        MockContext().ask_user([{"question": "?"}])


def test_a_tool_that_swallows_the_failure_still_fails_the_run():
    def careless(args, ctx):
        try:
            ctx.db.query("SELECT 1")
        except Exception:
            pass
        return {"ok": True}

    def careless_then_broken(args, ctx):
        try:
            ctx.tts.speak("hi")
        except Exception:
            pass
        raise RuntimeError("later")

    with pytest.raises(UnstubbedMember, match="ctx.db.query"):
        run_tool(careless, {}, MockContext())
    with pytest.raises(UnstubbedMember, match="ctx.tts.speak"):
        run_tool(careless_then_broken, {}, MockContext())


def test_stubbing_an_unknown_member_is_refused():
    with pytest.raises(TypeError, match="ctx has no member ask"):
        MockContext(ask=lambda q: [])
    with pytest.raises(TypeError, match="ctx.db has no member select"):
        MockContext(db={"select": lambda sql: []})
    with pytest.raises(TypeError, match="ctx.display has no member video"):
        MockContext(display={"video": print})


def test_a_partly_stubbed_group_fails_for_the_rest():
    ctx = MockContext(memories={"get": lambda title: {"title": title, "content": "x"}})
    assert ctx.memories.get("a") == {"title": "a", "content": "x"}
    with pytest.raises(UnstubbedMember, match="ctx.memories.write"):
        ctx.memories.write("a", "b")


def test_an_object_stubs_a_group_by_its_attributes():
    class Speaker:
        def speak(self, text):
            return {"dataB64": "", "mime": "audio/wav", "sampleRate": 1}

    ctx = MockContext(tts=Speaker(), stt=object())
    assert ctx.tts.speak("hi")["mime"] == "audio/wav"
    with pytest.raises(UnstubbedMember, match="ctx.stt.transcribe"):
        ctx.stt.transcribe({"dataB64": ""})


# --- sync and async, like the real ctx ------------------------------------------


def _sync_tool(args, ctx):
    return {"answers": ctx.ask_user([{"question": "Pick"}]), "rows": ctx.db.query("SELECT 1")}


async def _async_tool(args, ctx):
    answers = ctx.ask_user([{"question": "Pick"}])
    rows = ctx.db.query("SELECT 1")
    assert inspect.isawaitable(answers) and inspect.isawaitable(rows)
    return {"answers": await answers, "rows": await rows}


async def _slow_rows(sql):
    await asyncio.sleep(0)
    return [{"n": 1}]


@pytest.mark.parametrize("tool", [_sync_tool, _async_tool])
@pytest.mark.parametrize("rows_stub", [lambda sql: [{"n": 1}], _slow_rows, [{"n": 1}]],
                         ids=["function", "coroutine", "value"])
def test_every_kind_of_stub_serves_sync_and_async_tools(tool, rows_stub):
    ctx = MockContext(ask_user=lambda questions: ["a"], db={"query": rows_stub})
    assert run_tool(tool, {}, ctx) == {"answers": ["a"], "rows": [{"n": 1}]}
    assert [c.member for c in ctx.calls] == ["ask_user", "db.query"]
    assert ctx.calls[1].args == ("SELECT 1",)


async def test_run_tool_works_from_an_async_test_for_a_sync_tool():
    ctx = MockContext(ask_user=["a"], db={"query": []})
    assert run_tool(_sync_tool, {}, ctx) == {"answers": ["a"], "rows": []}


async def test_inside_a_loop_a_refusal_surfaces_when_awaited():
    ctx = MockContext(tts={"speak": CtxError("unavailable", "Text-to-Speech is off")})
    pending = ctx.tts.speak("hi")
    assert inspect.isawaitable(pending)
    with pytest.raises(CtxError, match="is off") as refused:
        await pending
    assert refused.value.kind == "unavailable"


def test_a_refusal_is_raised_at_once_in_plain_code():
    ctx = MockContext(llm={"complete": CtxPermissionDenied("llm was not granted")})
    with pytest.raises(PermissionError, match="not granted") as refused:
        ctx.llm.complete({"prompt": "p"})
    assert refused.value.kind == "permission"


def test_a_value_stub_is_copied_so_the_tool_cannot_change_it():
    rows = [{"n": 1}]
    ctx = MockContext(db={"query": rows})
    ctx.db.query("SELECT 1")[0]["n"] = 99
    assert ctx.db.query("SELECT 1") == [{"n": 1}] and rows == [{"n": 1}]


def test_the_chat_context_is_filled_out_like_the_hosts():
    ctx = MockContext(get_chat_context={"userMessage": "count these words"})
    assert ctx.get_chat_context() == {"userMessage": "count these words", "sessionId": None, "locale": None}


# --- checks the host would make -----------------------------------------------


def test_a_malformed_form_is_refused_as_the_host_refuses_it():
    ctx = MockContext(ask_user=["x"])
    for questions, message in (([], "non-empty list"), ([{"kind": "diff"}], "needs a `question`"),
                               ([{"question": "?", "kind": "video"}], "unknown kind 'video'")):
        with pytest.raises(CtxError, match=message) as refused:
            ctx.ask_user(questions)
        assert refused.value.kind == "invalid_arguments"


def test_an_ask_user_stub_must_answer_every_question():
    ctx = MockContext(ask_user=["only one"])
    with pytest.raises(AssertionError, match="one answer per question"):
        ctx.ask_user([{"question": "a"}, {"question": "b"}])


def test_a_result_that_is_not_json_is_refused():
    with pytest.raises(TypeError, match="not JSON"):
        run_tool(lambda args, ctx: {1, 2}, {}, MockContext())


# --- what is recorded ------------------------------------------------------------


def test_progress_logs_and_bubbles_are_recorded_in_the_hosts_shapes():
    seen = []
    ctx = MockContext(set_progress=lambda *a: seen.append(a), display={"table": lambda c, r: seen.append(c)})
    ctx.set_progress(0.5, "half", "halfway there")
    ctx.set_progress(1)
    ctx.log("warn", "careful")
    ctx.display.markdown("**hi**")
    ctx.display.table(["n"], [[1], [2]])
    ctx.display.image("AAAA", "image/png")
    ctx.display.diff("a", "b", "t")
    assert ctx.progress == [0.5, 1.0]
    assert ctx.progress_updates[0] == ProgressUpdate(0.5, "half", "halfway there")
    assert ctx.logs == [("warn", "careful")]
    assert ctx.bubbles == [
        Bubble("markdown", {"text": "**hi**"}),
        Bubble("table", {"columns": ["n"], "rows": [["1"], ["2"]]}),
        Bubble("image", {"dataB64": "AAAA", "mime": "image/png", "alt": None}),
        Bubble("diff", {"before": "a", "after": "b", "title": "t"}),
    ]
    assert seen == [(0.5, "half", "halfway there"), (1, None, None), ["n"]]
    assert ctx.calls == []


def test_progress_outside_zero_to_one_and_unknown_log_levels_are_refused():
    ctx = MockContext()
    with pytest.raises(ValueError, match="from 0 to 1"):
        ctx.set_progress(1.5)
    with pytest.raises(ValueError, match="log level"):
        ctx.log("verbose", "x")


# --- the signal ------------------------------------------------------------------


def test_the_signal_trips_once_aborted():
    signal = MockSignal()
    assert not signal.aborted and not signal.wait(0)
    signal.throw_if_aborted()
    signal.abort("timeout")
    assert signal.aborted and signal.wait(0) and signal.reason == "timeout"
    with pytest.raises(asyncio.CancelledError):
        signal.throw_if_aborted()


def test_an_async_tool_that_checks_the_signal_stops_when_it_fires():
    async def spin(args, ctx):
        for step in range(1, 1000):
            ctx.signal.throw_if_aborted()
            ctx.set_progress(step / 1000)
            await asyncio.sleep(0.01)
        return "finished"

    ctx = MockContext()
    ctx.signal.abort_after(0.1)
    with pytest.raises(asyncio.CancelledError):
        run_tool(spin, {}, ctx)
    # It stopped when the signal fired, before its end (a loaded machine may run no step
    # in the first 0.1 s, so the count of steps proves only that it did not finish).
    assert ctx.signal.aborted and len(ctx.progress) < 999


# --- the fakes ---------------------------------------------------------------------


def test_the_mock_database_answers_like_the_host():
    db = MockDatabase()
    assert db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)") == {"changes": 0, "lastInsertRowId": 0}
    assert db.execute("INSERT INTO t (body) VALUES (?), (?)", ["a", None]) == {"changes": 2, "lastInsertRowId": 2}
    assert db.query("SELECT id, body FROM t ORDER BY id") == [{"id": 1, "body": "a"}, {"id": 2, "body": None}]
    with pytest.raises(CtxError, match="database error") as broken:
        db.query("SELECT nope FROM t")
    assert broken.value.kind == "tool"
    with pytest.raises(CtxError, match="params must be") as bad:
        db.execute("INSERT INTO t (body) VALUES (?)", [{"a": 1}])
    assert bad.value.kind == "invalid_arguments"


def test_the_mock_memories_answer_like_the_host():
    memories = MockMemories({"Mine": "one two"}, shipped={"guide": "# Guide",
                                                          "skill": {"SKILL.md": "steps", "ref.md": "ref"}})
    assert [(m["title"], m["kind"], m["readOnly"]) for m in memories.list()] == [
        ("Mine", "knowledge", False), ("guide", "knowledge", True), ("skill", "skill", True)]
    assert memories.get("skill")["content"] == "steps"
    assert memories.get_file("skill", "ref.md") == {"title": "skill", "name": "ref.md", "content": "ref",
                                                    "encoding": "text", "mimeType": "text/markdown",
                                                    "size": 3}
    assert memories.write("New", "x") == {"title": "New", "before": None, "after": "x", "created": True}
    assert memories.edit("Mine", "two", "2") == {"title": "Mine", "before": "one two", "after": "one 2"}
    for call, kind in ((lambda: memories.write("guide", "x"), "permission"),
                       (lambda: memories.edit("Mine", "zz", "0"), "tool"),
                       (lambda: memories.get("nothing"), "not_found"),
                       (lambda: memories.get_file("guide", "a.md"), "not_found")):
        with pytest.raises(CtxError) as refused:
            call()
        assert refused.value.kind == kind


# --- importable anywhere -------------------------------------------------------------


def test_importing_it_loads_nothing_but_the_standard_library_and_the_ctx_spec():
    code = ("import sys, workbench.testing\n"
            "ours = sorted(m for m in sys.modules if m.split('.')[0] == 'workbench')\n"
            "heavy = [m for m in ('textual', 'pydantic', 'jsonschema', 'rich') if m in sys.modules]\n"
            "print(ours, heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "['workbench', 'workbench.ctx_spec', 'workbench.testing'] []", \
        done.stderr
