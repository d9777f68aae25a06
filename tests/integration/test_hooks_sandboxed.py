"""Hooks for real: declared in a manifest, run in the extension's sandboxed worker, and
applied on every path a tool call can take (a conformance matrix): the model's call, a
parallel batch, a person's direct call, `workbench call`, and a schedule's run (a
child process, `workbench runs exec`, under its run card)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commands import workbench

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.scheduler.card import CardGrant

GUARD = Path(__file__).resolve().parents[1] / "fixtures" / "extensions" / "guard"


def script(tmp_path, replies) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


@pytest.fixture
def installed(home):
    """The guard extension installed in the test's home (hooks are consented at install)."""
    done = workbench("ext", "install", str(GUARD), "--yes", "--allow-hook-rewrite")
    assert done.returncode == 0, done.stderr
    return home


async def via_model(tmp_path, calls):
    replies = [{"tool_calls": calls}, {"text": "done"}]
    async with Host.open(cwd=tmp_path, model=script(tmp_path, replies)) as host:
        result = await host.chats.send_prompt("go")
        rows = host.chats.messages(result.session_id)
        return {m["tool_call_id"]: json.loads(m["content"]) for m in rows if m["role"] == "tool"}, rows


async def via_direct(tmp_path, name, args):
    async with Host.open(cwd=tmp_path) as host:
        return (await host.tools.call(name, args, CallOptions(prompt=False))).to_json()


def via_cli(name, args):
    done = workbench("call", name, "--args", json.dumps(args), "--json")
    return json.loads(done.stdout)


async def via_schedule(tmp_path, calls, grants=(), cwd=None):
    """A schedule run now: its turn runs in a child process (``workbench runs exec``)
    under the schedule's run card, in ``cwd`` (else ``tmp_path``); returns the run and
    its tool results by call id."""
    replies = [{"tool_calls": calls}, {"text": "done"}]
    async with Host.open(cwd=cwd or tmp_path, model=script(tmp_path, replies)) as host:
        row = host.schedules.add_schedule(title="guarded", instruction="go", grants=list(grants),
                                schedule={"kind": "interval", "everyMinutes": 60})
        run = await host.schedules.run_schedule_now(row["id"])
        rows = host.chats.messages(run["session_id"])
        return run, {m["tool_call_id"]: json.loads(m["content"]) for m in rows if m["role"] == "tool"}


CASES = {
    "blocked": ("word_count", {"text": "some forbidden words"}),
    "rewritten": ("word_count", {"text": "rewrite me"}),
    "needs a grant": ("read_file", {"path": "rewrite me"}),
    "guard fails": ("explode", {}),
}


def check(case, outcome):
    if case == "blocked":
        assert outcome["ok"] is False and outcome["error"]["kind"] == "blocked"
        assert outcome["error"]["message"] == "blocked by a hook: forbidden words"
        assert outcome["hook_context"] == "[hook context]\nthe guard looked"
    elif case == "rewritten":
        assert outcome["ok"] and outcome["result"]["words"] == 3
        assert outcome["hook_context"] == "[hook context]\nrewritten"
    elif case == "needs a grant":
        # A hook ran (and let it through); the permission still applies after it.
        assert outcome["ok"] is False and outcome["error"]["kind"] == "permission"
    elif case == "guard fails":
        assert outcome["ok"] is False and outcome["error"]["kind"] == "blocked"
        assert "guard failed (ToolError)" in outcome["error"]["message"]


@pytest.mark.parametrize("case", list(CASES))
async def test_the_models_call(installed, tmp_path, case):
    name, args = CASES[case]
    results, _ = await via_model(tmp_path, [{"id": "c1", "name": name, "arguments": args}])
    check(case, results["c1"])


async def test_a_parallel_batch(installed, tmp_path):
    calls = [{"id": "p1", "name": "echo_safe", "arguments": {"text": "forbidden"}},
             {"id": "p2", "name": "echo_safe", "arguments": {"text": "rewrite me"}},
             {"id": "p3", "name": "echo_safe", "arguments": {"text": "plain"}}]
    results, _ = await via_model(tmp_path, calls)
    assert results["p1"]["error"]["kind"] == "blocked"
    assert results["p2"]["result"] == {"echo": {"text": "one two three"}}
    assert results["p3"]["result"] == {"echo": {"text": "plain"}} and "hook_context" not in results["p3"]


@pytest.mark.parametrize("case", list(CASES))
async def test_a_persons_direct_call(installed, tmp_path, case):
    check(case, await via_direct(tmp_path, *CASES[case]))


@pytest.mark.parametrize("case", list(CASES))
def test_a_headless_workbench_call(installed, case):
    check(case, via_cli(*CASES[case]))


async def test_a_hanging_guard_is_killed_at_its_budget_and_blocks(installed, tmp_path, home):
    home.config_file.write_text("[hooks]\nbudget_ms = 700\n")
    outcome = await via_direct(tmp_path, "hang", {})
    assert outcome["error"]["kind"] == "blocked" and "TimeoutError" not in outcome["error"]["message"]


async def test_result_hooks_replace_content_and_add_context(installed, tmp_path):
    outcome = await via_direct(tmp_path, "current_time", {})
    assert outcome["result"] == {"iso": "hidden"}
    assert outcome["hook_context"] == "[hook context]\nthe time was hidden"


async def test_session_start_context_is_a_hidden_message_before_the_first_prompt(installed, tmp_path):
    _, rows = await via_model(tmp_path, [{"id": "c1", "name": "word_count", "arguments": {"text": "a"}}])
    assert rows[0]["role"] == "system" and rows[0]["name"] == "hook_context"
    assert rows[0]["content"] == f"[hook context]\nsession new in {tmp_path}"
    assert rows[1]["role"] == "user"


async def test_without_hooks_tools_run_unwrapped(home, tmp_path):
    outcome = await via_direct(tmp_path, "word_count", {"text": "some forbidden words"})
    assert outcome == {"ok": True, "result": {"words": 3, "lines": 1, "characters": 20}}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_scheduled_run(installed, tmp_path, case):
    name, args = CASES[case]
    run, results = await via_schedule(tmp_path, [{"id": "c1", "name": name, "arguments": args}])
    assert run["pid"] and run["pid"] != os.getpid()
    check(case, results["c1"])
    if case == "needs a grant":
        # Outside its card: the run fails at once and records what it needed.
        assert run["status"] == "failed"
        assert [need["tool"] for need in run["needs"]] == ["builtin.read_file"]
    else:
        assert (run["status"], run["result"]) == ("ok", "done")


async def test_a_scheduled_runs_card_grants_what_it_names_and_the_hooks_still_hold(installed, tmp_path):
    project = tmp_path / "work"  # the schedule's folder: $project
    project.mkdir(exist_ok=True)
    notes = project / "notes.txt"
    notes.write_text("from the card")
    grants = [CardGrant("builtin.read_file", "read", str(project))]
    calls = [{"id": "r1", "name": "read_file", "arguments": {"path": str(notes)}},
             {"id": "b1", "name": "word_count", "arguments": {"text": "some forbidden words"}}]
    run, results = await via_schedule(tmp_path, calls, grants, cwd=project)
    assert run["status"] == "ok", run
    assert results["r1"]["ok"] and "from the card" in json.dumps(results["r1"]["result"])
    assert results["b1"]["error"]["kind"] == "blocked"
