"""The Host's schedule operations (what the CLI and the Tasks screen call): making,
reading, editing, pausing and removing schedules, their run cards, a tool's proposal,
and a run made now."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from workbench.core.host import Host
from workbench.errors import ExitCode, WorkbenchError
from workbench.events import ScheduleProposalRequest
from workbench.scheduler.card import CardGrant
from workbench.tools.context import ToolContext

EVERY_5 = {"kind": "interval", "everyMinutes": 5}


class Reviewer:
    """A person who accepts every proposal as it is."""

    async def answer(self, request):
        assert isinstance(request, ScheduleProposalRequest)
        return {"accepted": True, "draft": request.draft}


@pytest.fixture
def host(workdir):
    with Host.open(cwd=workdir, model="echo") as opened:
        yield opened


def test_a_schedule_made_here_freezes_its_card_and_has_its_next_time(host, workdir):
    before = host.store.clock()
    row = host.schedules.add_schedule(title=" Stand-up ", instruction="Summarize my day.", schedule=EVERY_5,
                            run_missed=True, grants=[CardGrant("workbench.extensions_status", "x", "y")])
    assert row["title"] == "Stand-up" and row["run_missed"] and row["enabled"]
    assert row["description"] == "every 5 minutes" and row["source"] == "person"
    assert before + 5 * 60_000 <= row["next_due_at"] <= host.store.clock() + 5 * 60_000
    card = row["card"]
    assert (card["model"], card["cwd"], card["on_need"], card["frozen_by"]) == ("echo", str(workdir), "fail", "person")
    assert card["extensions"] == sorted({e["name"] for e in host.loading.extensions})
    assert card["grants"] == [{"tool": "workbench.extensions_status", "kind": "x", "value": "y"}]
    assert [s["id"] for s in host.schedules()] == [row["id"]]
    assert host.schedules.schedule(row["id"])["runs"] == [] and host.schedules.schedule(row["id"])["last_run"] is None


def test_editing_pausing_resuming_and_removing(host):
    row = host.schedules.add_schedule(title="t", instruction="i", schedule=EVERY_5, model="echo")
    edited = host.schedules.edit_schedule(row["id"], title="New", schedule={"kind": "weekly", "weekdays": [1],
                                                                  "hour": 9, "minute": 0},
                                run_missed=True, on_need="pause", extensions=[])
    assert (edited["title"], edited["run_missed"], edited["description"]) == ("New", True, "Mon at 09:00")
    assert edited["card"]["on_need"] == "pause" and edited["card"]["extensions"] == []
    assert dt.datetime.fromtimestamp(edited["next_due_at"] / 1000).weekday() == 0
    paused = host.schedules.pause_schedule(row["id"])
    assert not paused["enabled"] and paused["next_due_at"] is None
    resumed = host.schedules.resume_schedule(row["id"])
    assert resumed["enabled"] and resumed["next_due_at"] == edited["next_due_at"]
    assert resumed["last_due_at"] >= paused["updated_at"]  # what passed while paused is not missed
    assert host.schedules.remove_schedule(row["id"]) and host.schedules() == []
    with pytest.raises(WorkbenchError, match="no schedule"):
        host.schedules.schedule(row["id"])


@pytest.mark.parametrize(("change", "message"), [
    ({"title": "  "}, "title cannot be empty"),
    ({"instruction": ""}, "prompt cannot be empty"),
    ({"on_need": "wait"}, "on_need"),
    ({"schedule": {"kind": "hourly"}}, "schedule.kind"),
    ({"schedule": {"kind": "once", "atMs": 1_000}}, "that time has passed"),
])
def test_invalid_values_are_usage_errors(host, change, message):
    row = host.schedules.add_schedule(title="t", instruction="i", schedule=EVERY_5)
    with pytest.raises(WorkbenchError, match=message) as caught:
        host.schedules.edit_schedule(row["id"], **change)
    assert caught.value.exit_code == ExitCode.USAGE


def test_card_grants_read_tool_kind_value_flags(host):
    with pytest.raises(WorkbenchError, match="TOOL:KIND"):
        host.schedules.card_grants(["extensions_status"])
    with pytest.raises(WorkbenchError, match="declares no 'read' permission"):
        host.schedules.card_grants(["extensions_status:read"])
    assert host.schedules.card_grants([]) == []


async def test_a_tools_proposal_gets_its_card_when_it_is_accepted(host):
    host.answer_with(Reviewer())
    tool = SimpleNamespace(qualified_name="samples.sample_schedule")
    ctx = ToolContext(sink=lambda kind, data: None, asker=None, requester=host.responder.answer)
    draft = {"title": "Weekly", "instruction": "Plan the week.", "runMissed": False,
             "schedule": {"kind": "weekly", "weekdays": [1], "hour": 9, "minute": 0}}
    assert (await host.services.schedule_prompt(tool, draft, ctx))["accepted"]
    [row] = host.schedules()
    assert row["last_due_at"] is None
    assert row["next_due_at"] > host.store.clock()  # reckoned as a supervisor would
    card = row["card"]
    assert (card["model"], card["grants"]) == ("echo", [])
    assert host.schedules.schedule(row["id"])["card"] == card


async def test_run_now_runs_under_the_card_in_a_child_process(host):
    row = host.schedules.add_schedule(title="Echo", instruction="hello there", schedule=EVERY_5, model="echo")
    run = await host.schedules.run_schedule_now(row["id"])
    assert (run["status"], run["fired_by"], run["result"]) == ("ok", "manual", "You said: hello there")
    assert run["pid"] and run["session_id"]
    session = host.chats.get(run["session_id"])
    assert session["title"] == "⏱ Echo"
    assert host.schedules.run(run["id"])["log"].endswith(f"runs/{run['id']}.log")
    assert host.schedules.schedule(row["id"])["last_run"]["id"] == run["id"]
    with pytest.raises(WorkbenchError, match="only a paused run"):
        await host.schedules.resume_run(run["id"])
    assert host.schedules.notifications() == []
