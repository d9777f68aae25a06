"""The gateway: every call resolved, validated, authorized, bounded, recorded and published."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest

from waits import until

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import (AskUserRequest, DisplayBubble, PermissionAnswer, PermissionRequest,
                              RequestDenied, ToolCallEnded, ToolCallLog, ToolCallProgress, ToolCallStarted)
from workbench.tools.loader import load_extension

TOOLS = {
    "echo_args": ({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}, {}),
    "boom": ({"type": "object"}, {}),
    "sleepy": ({"type": "object"}, {}),
    "huge": ({"type": "object"}, {}),
    "chatty": ({"type": "object"}, {}),
    "asks": ({"type": "object"}, {}),
    "reads": ({"type": "object"}, {"read": [{"path": "$extension/data", "reason": "Read its data."}],
                                   "env": [{"key": "LANG", "reason": "Locale.", "optional": True}]}),
    "not_json": ({"type": "object"}, {}),
}

CODE = '''
import asyncio, time

def echo_args(args, ctx):
    return {"n": args["n"] * 2}

def boom(args, ctx):
    raise RuntimeError("the disk is on fire")

async def sleepy(args, ctx):
    await asyncio.sleep(10)

def huge(args, ctx):
    return "x" * 5000

def chatty(args, ctx):
    ctx.set_progress(0.5, "half", "halfway there")
    ctx.log("warn", "careful")
    ctx.display.table(["a"], [["1"]])
    ctx.display.markdown("**hi**")
    return ctx.get_chat_context()

async def asks(args, ctx):
    answers = await ctx.ask_user([{"question": "Pick", "options": [{"label": "A", "value": "a"}]}])
    return {"answers": answers}

def reads(args, ctx):
    return "read"

def not_json(args, ctx):
    return {1, 2}
'''


class Scripted:
    """A responder that answers from a list and remembers what it was asked."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    async def answer(self, request):
        self.asked.append(request)
        if not self.answers:
            raise RequestDenied("nothing scripted")
        answer = self.answers.pop(0)
        if isinstance(answer, float):
            await asyncio.sleep(answer)
            return ["slow"]
        return answer


@pytest.fixture
async def host(tmp_path):
    folder = tmp_path / "testext"
    folder.mkdir()
    manifest = {"name": "testext", "displayName": "Test", "description": "Tools for tests.",
                "entry": "main.py",
                "tools": [{"name": name, "description": f"{name} tool", "parameters": params,
                           "function": name, "permissions": perms}
                          for name, (params, perms) in TOOLS.items()]}
    manifest["tools"][2]["timeoutMs"] = 200
    (folder / "loca.json").write_text(json.dumps(manifest))
    (folder / "main.py").write_text(textwrap.dedent(CODE))
    async with Host.open(cwd=tmp_path) as host:
        host.gateway.max_output_bytes = 1000
        assert load_extension(host.registry, folder) , host.registry.load_errors
        host.seen = []
        host.bus.subscribe(host.seen.append)
        yield host


async def test_ok_call_is_published_and_recorded(host):
    outcome = await host.tools.call("echo_args", {"n": 21})
    assert outcome.to_json() == {"ok": True, "result": {"n": 42}}
    kinds = [type(e) for e in host.seen]
    assert kinds == [ToolCallStarted, ToolCallEnded]
    row = host.store.list_tool_calls()[0]
    assert (row["tool"], row["status"], row["caller"]) == ("testext.echo_args", "ok", "person")
    actions = [a["action"] for a in host.store.list_audit()]
    assert "tool.call" in actions and "tool.ok" in actions


async def test_unknown_tool_and_bad_arguments_are_refused_before_running(host):
    missing = await host.tools.call("nope", {})
    assert missing.error["kind"] == "not_found"
    bad = await host.tools.call("echo_args", {"n": "seven"})
    assert bad.error["kind"] == "invalid_arguments" and bad.error["pointer"] == "/n"
    assert host.store.list_tool_calls() == []
    actions = {a["action"] for a in host.store.list_audit()}
    assert {"tool.refused.invalid_arguments", "tool.refused.not_found"} <= actions


async def test_a_tool_that_raises_reaches_the_caller_as_an_error_with_its_message(host):
    outcome = await host.tools.call("boom", {})
    assert outcome.error == {"kind": "tool", "message": "RuntimeError: the disk is on fire"}
    assert host.store.list_tool_calls()[0]["status"] == "error"


async def test_timeout_and_output_bounds_refuse_never_cut(host):
    slow = await host.tools.call("sleepy", {})
    assert slow.error["kind"] == "timeout"
    big = await host.tools.call("huge", {})
    assert big.error["kind"] == "output_too_large" and "5002 bytes" in big.error["message"]
    odd = await host.tools.call("not_json", {})
    assert odd.error["kind"] == "tool" and "not JSON" in odd.error["message"]


async def test_progress_logs_and_bubbles_become_events(host):
    outcome = await host.tools.call("chatty", {}, CallOptions(user_message="hello", session_id=None))
    assert outcome.result == {"userMessage": "hello", "sessionId": None, "locale": None,
                              "projectFolder": None, "reviewWrites": True, "consumer": "person",
                              "dataFolder": None}
    progress = [e for e in host.seen if isinstance(e, ToolCallProgress)]
    assert (progress[0].progress, progress[0].label) == (0.5, "half")
    assert [e.level for e in host.seen if isinstance(e, ToolCallLog)] == ["warn"]
    assert [e.display for e in host.seen if isinstance(e, DisplayBubble)] == ["table", "markdown"]


async def test_ask_user_pauses_the_timeout(host):
    class HoldsTheForm(Scripted):
        """Keeps the form open longer than the whole limit, however long the call took
        to reach it: without the pause, the limit passes while the form is open."""

        async def answer(self, request):
            self.asked.append(request)
            await asyncio.sleep(limit_s + 0.2)
            return ["slow"]

    # A first call starts the tool's worker, so that the timed call finds the next one
    # warm: the limit then covers two messages to a running worker, not a process start.
    host.answer_with(Scripted(["warm"]))
    assert (await host.tools.call("asks", {})).ok
    limit_s = 1.0
    responder = HoldsTheForm()
    host.answer_with(responder)
    object.__setattr__(host.registry.resolve("asks"), "timeout_ms", int(limit_s * 1000))
    outcome = await host.tools.call("asks", {})
    assert outcome.to_json() == {"ok": True, "result": {"answers": ["slow"]}}
    assert isinstance(responder.asked[0], AskUserRequest)


async def test_missing_permission_without_prompt_names_it_and_its_reason(host):
    outcome = await host.tools.call("reads", {}, CallOptions(prompt=False))
    assert outcome.error["kind"] == "permission"
    assert "Read its data." in outcome.error["message"]
    assert [m["kind"] for m in outcome.error["missing"]] == ["read"]


async def test_permission_request_lists_required_then_undecided_optional_and_always_is_kept(host):
    responder = Scripted(PermissionAnswer("always"))
    host.answer_with(responder)
    assert (await host.tools.call("reads", {})).ok
    request = responder.asked[0]
    assert isinstance(request, PermissionRequest) and request.tool == "testext.reads"
    assert [(p["kind"], p["optional"], p["key"]) for p in request.permissions] == [
        ("read", False, f"read:{host.registry.resolve('reads').folder / 'data'}"),
        ("env", True, "env:LANG")]
    assert (await host.tools.call("reads", {})).ok
    assert len(responder.asked) == 1


async def test_once_asks_again_and_deny_is_remembered(host):
    responder = Scripted(PermissionAnswer("once"), PermissionAnswer("deny"))
    host.answer_with(responder)
    assert (await host.tools.call("reads", {})).ok
    denied = await host.tools.call("reads", {})
    assert denied.error["kind"] == "permission"
    again = await host.tools.call("reads", {})
    assert again.error["kind"] == "permission" and "refused earlier" in again.error["message"]
    assert len(responder.asked) == 2


async def test_a_grant_for_one_tool_is_not_shared_with_a_sibling(host):
    host.broker.record("testext.reads", host.gateway.requirements(host.registry.resolve("reads")),
                       "always", None)
    sibling = host.registry.resolve("echo_args")
    object.__setattr__(sibling, "permissions", host.registry.resolve("reads").permissions)
    outcome = await host.tools.call("echo_args", {"n": 1}, CallOptions(prompt=False))
    assert outcome.error["kind"] == "permission"


async def test_cancelling_a_call_records_it_as_cancelled(host):
    task = asyncio.ensure_future(host.tools.call("asks", {}))
    responder = Scripted(5.0)
    host.answer_with(responder)
    await until(lambda: responder.asked, "the call's question asked")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert host.store.list_tool_calls()[0]["status"] == "cancelled"
