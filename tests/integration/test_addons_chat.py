"""The calendar and the address book as a new user meets them: installed by id with the
real CLI, their tools run in sandboxed workers, a chat with a model that calls them
("what is on Thursday?", "add dinner with Sam at 8", "what is Marco's number?", "add
Anna, anna@example.org"), the pages showing the same data, and the person undoing the
chat's writes newest first from the change list.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from commands import workbench

from workbench.core.calls import CallOptions
from workbench.core.host import Host

CAL = "addon__calendar__"
BOOK = "addon__contacts__"


def next_thursday(today: dt.date) -> dt.date:
    return today + dt.timedelta(days=(3 - today.weekday()) % 7 or 7)


def script(path: Path, replies: list[dict]) -> str:
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


class AtTheChat:
    """The person at an interactive chat (as the TUI's responder is): asked nothing here."""

    interactive = True

    async def answer(self, request):
        raise AssertionError(f"nothing should be asked: {request}")


async def person(host: Host, name: str, args: dict | None = None):
    outcome = await host.tools.call(name, args or {}, CallOptions(caller="person"))
    assert outcome.ok, outcome.error
    return outcome.result


def tool_results(host: Host, session_id: str) -> list[dict]:
    """The chat's tool results in order, as the model saw them."""
    found = []
    for message in host.chats.messages(session_id):
        if message.get("role") == "tool":
            found.append(json.loads(message["content"]))
    return found


@pytest.mark.slow
def test_a_chat_reads_and_changes_the_calendar_and_the_book_and_the_person_undoes(tmp_path):
    for addon in ("calendar", "contacts"):
        done = workbench("ext", "install", addon, "--yes")
        assert done.returncode == 0, done.stderr
    listed = json.loads(workbench("ext", "addons", "--json").stdout)
    assert {row["id"]: row["installed"] for row in listed}.items() >= {"calendar": True, "contacts": True}.items()
    rome = ZoneInfo("Europe/Rome")
    today = dt.datetime.now(rome).date()
    thursday = next_thursday(today).isoformat()
    model = script(tmp_path / "model.json", [
        {"tool_calls": [{"name": f"{CAL}events-list", "arguments": {"from": thursday, "to": thursday}}]},
        {"text": "On Thursday you have the team meeting at 10:00."},
        {"tool_calls": [{"name": f"{CAL}event-create",
                         "arguments": {"title": "Dinner with Sam", "start": f"{today}T20:00",
                                       "attendees": "Sam"}}]},
        {"text": "Added dinner with Sam at 20:00."},
        {"tool_calls": [{"name": f"{BOOK}contacts-search", "arguments": {"query": "Marco"}}]},
        {"text": "Marco's number is +39 333 123 4567."},
        {"tool_calls": [{"name": f"{BOOK}contact-create",
                         "arguments": {"name": "Anna", "emails": [{"label": "", "address": "anna@example.org"}]}}]},
        {"text": "Added Anna."},
        # A model trying the person's own tools is refused.
        {"tool_calls": [{"name": f"{BOOK}contact-restore", "arguments": {"id": 1, "before": None}}]},
        {"text": "I cannot undo that; only you can."},
    ])

    async def chat() -> tuple[str, list[dict]]:
        with Host.open(cwd=tmp_path / "work", model=model, responder=AtTheChat()) as host:
            await person(host, f"{CAL}zone-set", {"zone": "Europe/Rome"})
            await person(host, f"{CAL}event-create", {"title": "Team meeting", "start": f"{thursday}T10:00"})
            await person(host, f"{BOOK}contact-create", {
                "name": "Marco Rossi", "phones": [{"label": "mobile", "number": "+39 333 123 4567"}]})
            session = host.chats.new()["id"]
            # Installed, but off in a chat until the person switches it on there.
            offered = {spec.name for spec in host.chats.tool_specs(session, "what is on Thursday?")}
            assert not any(name.startswith(("addon__calendar__", "addon__contacts__")) for name in offered)
            off = await host.chats.call_for_model(session, f"{CAL}events-list", {})
            assert not off.ok and "switched off in this chat" in off.error["message"]
            for addon in ("calendar", "contacts"):
                host.switches.set_extension(session, addon, True)
            offered = {spec.name for spec in host.chats.tool_specs(session, "what is on Thursday?")}
            assert f"{CAL}events-list" in offered and f"{CAL}event-restore" not in offered
            prompts = ["what is on Thursday?", "add dinner with Sam at 8", "what is Marco's number?",
                       "add Anna, anna@example.org", "undo adding Anna"]
            for prompt in prompts:
                result = await host.chats.send_prompt(prompt, session_id=session)
                assert result.status == "done", result
            results = tool_results(host, session)
            # The pages show what the chat changed, opened and acted on as the person does.
            agenda = await host.pages.open("calendar", "agenda")
            assert "Dinner with Sam" in json.dumps(agenda.document, ensure_ascii=False)
            searched = await host.pages.act_on_card("contacts", "search", "page-search", {"query": "anna"})
            assert searched.outcome.ok and "anna@example.org" in json.dumps(searched.reopened.document)
            month = await host.pages.act_on_card("calendar", "month", "event-save",
                                                 {"title": "Lunch", "date": thursday, "time": "13:00"})
            assert month.outcome.ok, month.outcome.error
            assert "13:00 Lunch" in json.dumps(month.reopened.document, ensure_ascii=False) or thursday[:7] != (
                dt.datetime.now(rome).strftime("%Y-%m"))
            # The page's write is a change too, undone by the person at once.
            await host.changes.aundo(month.outcome.result["change_set"])
            return session, results

    session, results = asyncio.run(chat())
    listing, dinner, search, anna, refused = results
    assert [o["title"] for o in listing["result"]["occurrences"]] == ["Team meeting"]
    assert dinner["ok"] and dinner["result"]["event"]["start"] == f"{today}T20:00"
    assert dinner["result"]["change"]["undoable"] is True
    assert search["result"]["contacts"][0]["phones"][0]["number"] == "+39 333 123 4567"
    assert anna["result"]["contact"]["emails"] == [{"label": "", "address": "anna@example.org"}]
    assert not refused["ok"] and "run by the person only" in refused["error"]["message"]

    # A headless run switches an add-on on for its own chat only when asked to.
    for extra, expected in (((), False), (("--addon", "contacts"), True)):
        ran = workbench("run", "--jsonl", "--model", "echo", *extra, "hello", cwd=tmp_path / "work")
        assert ran.returncode == 0, ran.stderr
        chat = json.loads(ran.stdout.splitlines()[0])["session_id"]
        listed = json.loads(workbench("sessions", "tools", chat, "--json").stdout)["tools"]
        assert any(t["name"] == f"{BOOK}contacts-search" for t in listed) is expected
        assert not any(t["extension"] == "calendar" for t in listed)

    # The person undoes the chat's writes, newest first, from the one change list.
    rows = json.loads(workbench("changes", "list", "--session", session, "--json").stdout)
    assert [(r["kind"], r["extension"]) for r in rows] == [("outside", "contacts"), ("outside", "calendar")]
    assert rows[0]["command"] == "Added the contact Anna"
    for row in rows:
        done = workbench("changes", "undo", str(row["id"]))
        assert done.returncode == 0, done.stderr

    async def after() -> None:
        with Host.open(cwd=tmp_path / "work") as host:
            # Unattended (no one at an interactive chat), a write needs the act grant.
            for caller in ("model", "schedule", "agent"):
                alone = await host.tools.call(f"{CAL}event-create", {"title": "x", "start": "2026-12-04"},
                                              CallOptions(caller=caller, prompt=False))
                assert not alone.ok and alone.error["kind"] == "permission", alone
                assert "act" in alone.error["message"]
            granted = await host.tools.call(f"{BOOK}contact-create", {"name": "Bea"},
                                            CallOptions(caller="schedule", grants=(("act", ""),)))
            assert granted.ok, granted.error
            read = await host.tools.call(f"{BOOK}contacts-search", {"query": "bea"},
                                         CallOptions(caller="schedule"))
            assert read.ok and [c["name"] for c in read.result["contacts"]] == ["Bea"]
            left = await person(host, f"{BOOK}contacts-search", {"query": "anna"})
            assert left["contacts"] == []
            week = await person(host, f"{CAL}events-list", {"from": today.isoformat(), "days": 8})
            assert "Dinner with Sam" not in [o["title"] for o in week["occurrences"]]
            exported = await person(host, f"{CAL}calendar-export")
            assert "SUMMARY:Team meeting" in exported["ics"]

    asyncio.run(after())
