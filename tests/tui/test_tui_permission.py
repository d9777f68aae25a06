"""Pilot tests of the permission prompt (before a call and for a capability asked
mid-call) and of the review of a proposed schedule, each through a real host."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from textual.widgets import Button, Checkbox, Input, Select, Static, TextArea
from textual.widgets._select import SelectOverlay

from visible import settled, until_screen, until_shown

from workbench.events import PermissionAnswer, PermissionRequest, RequestDenied, ToolCallEnded
from workbench.tui.forms.schedule_screen import KINDS, MONTHS, ScheduleScreen
from workbench.tui.paths import shown_path
from workbench.tui.screens.permission import PermissionScreen
from workbench.tui.widgets.tool_call_card import ToolCallCard

SIZE = (80, 24)


def enable_samples(workdir: Path) -> None:
    home = workdir.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[extensions]\nsamples = true\n")


async def start(app, pilot, until, prompt: str = "go") -> list:
    """Wait for the extensions, send ``prompt``; returns the list the host's events go to."""
    await until(pilot, lambda: app.host.loading.loaded_at > 0)
    seen: list = []
    app.host.bus.subscribe(seen.append)
    await pilot.press(*prompt, "enter")
    return seen


def shown(screen) -> list[str]:
    """The prompt's lines as a person reads them; an optional entry's box as ☑ or ☐."""
    lines = []
    for static in screen.query(Static):
        if isinstance(static, Button):
            continue
        if isinstance(static, Checkbox):
            lines.append(("☑ " if static.value else "☐ ") + static.label.plain.strip())
        elif static.render().plain.strip():
            lines.append(static.render().plain)
    return lines


def ended(seen: list) -> list[ToolCallEnded]:
    return [event for event in seen if isinstance(event, ToolCallEnded)]


def read_twice(path: Path) -> list[dict]:
    call = {"name": "read_file", "arguments": {"path": str(path)}}
    return [{"tool_calls": [call]}, {"tool_calls": [call]}, {"text": "Read it twice."}]


@pytest.fixture
def notes(workdir: Path) -> Path:
    path = workdir / "notes.txt"
    path.write_text("the secret words", encoding="utf-8")
    return path


class TestPrompt:
    async def test_the_tool_each_permission_and_its_reason(self, make_app, until, notes: Path) -> None:
        app = make_app(read_twice(notes)[1:])
        async with app.run_test(size=SIZE) as pilot:
            await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            screen = app.screen
            assert screen.query_one("#permission-dialog").border_title == "Permission needed"
            await until(pilot, lambda: len(shown(screen)) == 4)  # the entries mount a frame later
            assert shown(screen) == [
                "builtin.read_file asks for this:",
                f"• Read this project ({shown_path(notes.parent)})",
                "Read the files of the project this chat works in.",
                "This session or Always also lets edit_file, find_files, list_folder, search_text, "
                "write_file do the same in this project."]
            labels = [button.label.plain for button in screen.query(Button)]
            assert labels == ["Allow once", "This session", "Always", "Deny"]
            assert screen.focused is screen.query_one("#deny", Button)
            assert screen.query_one("#permission-dialog").region.bottom <= SIZE[1]
            await pilot.press("d")
            await until(pilot, lambda: not app.chat.busy)

    async def test_once_asks_again_at_the_next_call(self, make_app, until, notes: Path) -> None:
        app = make_app(read_twice(notes))
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            await pilot.press("o")
            await until(pilot, lambda: len(ended(seen)) == 1)
            await until_screen(pilot, PermissionScreen)
            await pilot.press("o")
            await until(pilot, lambda: not app.chat.busy)
            assert [event.ok for event in ended(seen)] == [True, True]
            assert app.host.store.list_grants("builtin.read_file") == []

    async def test_session_is_not_asked_again_in_the_session(self, make_app, until, notes: Path) -> None:
        app = make_app(read_twice(notes))
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            await pilot.press("s")
            await until(pilot, lambda: not app.chat.busy)
            assert [event.ok for event in ended(seen)] == [True, True]
            grants = app.host.store.list_grants("builtin.read_file")
            assert {(grant["kind"], grant["value"], grant["scope"]) for grant in grants} == {
                ("read", str(notes.parent), "session")}

    async def test_the_arrows_move_along_the_buttons(self, make_app, until, notes: Path) -> None:
        app = make_app(read_twice(notes))
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            screen = app.screen
            await until(pilot, lambda: screen.focused is screen.query_one("#deny", Button))
            await pilot.press("left")
            await until(pilot, lambda: screen.focused is screen.query_one("#always", Button))
            await pilot.press("left")
            await until(pilot, lambda: screen.focused is screen.query_one("#session", Button))
            await pilot.press("right", "left", "enter")
            await until(pilot, lambda: not app.chat.busy)
            assert [event.ok for event in ended(seen)] == [True, True]
            scopes = {grant["scope"] for grant in app.host.store.list_grants("builtin.read_file")}
            assert scopes == {"session"}

    async def test_always_with_the_mouse(self, make_app, until, notes: Path) -> None:
        app = make_app(read_twice(notes))
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            await pilot.click("#always")
            await until(pilot, lambda: not app.chat.busy)
            assert [event.ok for event in ended(seen)] == [True, True]
            scopes = {grant["scope"] for grant in app.host.store.list_grants("builtin.read_file")}
            assert scopes == {"always"}

    @pytest.mark.parametrize("key", ["d", "escape"])
    async def test_deny(self, make_app, until, notes: Path, key: str) -> None:
        app = make_app([{"tool_calls": [{"name": "read_file", "arguments": {"path": str(notes)}}]},
                        {"text": "Not allowed."}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            await pilot.press(key)
            await until(pilot, lambda: not app.chat.busy)
            [event] = ended(seen)
            assert not event.ok and event.error["kind"] == "permission"
            assert app.chat.query_one(ToolCallCard).outcome.startswith("✗ permission denied")

    async def test_tab_and_enter_press_a_button(self, make_app, until, notes: Path) -> None:
        app = make_app([{"tool_calls": [{"name": "read_file", "arguments": {"path": str(notes)}}]},
                        {"text": "ok"}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            await pilot.press("tab")  # from Deny round to Allow once
            assert app.screen.focused is app.screen.query_one("#once")
            await pilot.press("enter")
            await until(pilot, lambda: not app.chat.busy)
            assert ended(seen)[0].ok


class TestWhatIsAsked:
    async def test_optional_and_broad_permissions_stand_out(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            request = PermissionRequest(tool="demo.fetch", permissions=[
                {"kind": "read", "value": "/", "reason": "Index everything.", "optional": False},
                {"kind": "net", "value": "*:443", "reason": "Fetch pages.", "optional": True},
                {"kind": "net", "value": "example.com:80,443", "reason": "", "optional": False},
                {"kind": "memories", "value": "write", "reason": "Keep notes."},
                {"kind": "llm", "value": "", "reason": "Summarize.", "optional": True}])
            answer = asyncio.ensure_future(app.responder.answer(request))
            await until_screen(pilot, PermissionScreen)
            assert shown(app.screen) == [
                "demo.fetch asks for these 5:",
                "• Read /", "⚠ the whole file system", "Index everything.",
                "☑ Connect to any host, port 443  (optional)", "⚠ any host on the internet", "Fetch pages.",
                "• Connect to example.com port 80,443", "(no reason given)",
                "• Read and change your memories", "Keep notes.",
                "☑ Ask your model for completions  (optional)", "Summarize.",
                "Untick what it should do without (space)."]
            await pilot.press("a")
            await until(pilot, answer.done)
            assert answer.result() == PermissionAnswer("always")

    async def test_optional_boxes_are_reached_with_tab_and_unticked_with_space(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            request = PermissionRequest(tool="demo.fetch", permissions=[
                {"kind": "read", "value": "/srv/docs", "reason": "Index the docs.", "optional": False,
                 "key": "read:/srv/docs"},
                {"kind": "net", "value": "example.com:443", "reason": "Fetch pages.", "optional": True,
                 "key": "net:example.com:443"},
                {"kind": "env", "value": "DOCS_TOKEN", "reason": "Sign in.", "optional": True,
                 "key": "env:DOCS_TOKEN"}])
            answer = asyncio.ensure_future(app.responder.answer(request))
            await until_screen(pilot, PermissionScreen)
            screen = app.screen
            await pilot.press("tab")  # from Deny round to the first optional box
            assert screen.focused is screen.query_one("#optional-0", Checkbox)
            await pilot.press("tab", "space")
            assert screen.focused is screen.query_one("#optional-1", Checkbox)
            assert shown(screen)[3:7] == ["☑ Connect to example.com port 443  (optional)", "Fetch pages.",
                                          "☐ Read the environment variable DOCS_TOKEN  (optional)", "Sign in."]
            await pilot.press("s")
            await until(pilot, answer.done)
            assert answer.result() == PermissionAnswer("session", declined=("env:DOCS_TOKEN",))

    async def test_deny_with_boxes_is_still_a_refusal(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            request = PermissionRequest(tool="demo.fetch", permissions=[
                {"kind": "env", "value": "DOCS_TOKEN", "reason": "Sign in.", "optional": True}])
            answer = asyncio.ensure_future(app.responder.answer(request))
            await until_screen(pilot, PermissionScreen)
            await pilot.press("d")
            await until(pilot, answer.done)
            with pytest.raises(RequestDenied):
                answer.result()

    async def test_escape_is_a_refusal(self, make_app, until) -> None:
        app = make_app([])
        async with app.run_test(size=SIZE) as pilot:
            request = PermissionRequest(tool="demo.fetch", permissions=[
                {"kind": "llm", "value": "", "reason": "Summarize."}])
            answer = asyncio.ensure_future(app.responder.answer(request))
            await until_screen(pilot, PermissionScreen)
            await pilot.press("escape")
            await until(pilot, answer.done)
            with pytest.raises(RequestDenied):
                answer.result()

    async def test_a_capability_asked_mid_call_gets_the_same_prompt(self, make_app, until,
                                                                     until_screen,
                                                                     workdir: Path) -> None:
        enable_samples(workdir)
        app = make_app([{"tool_calls": [{"name": "sample_llm", "arguments": {"text": "Ferns like shade."}}]},
                        {"text": "Summarized."}])
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            # The call has started: the prompt comes from inside it, at the first use.
            assert app.chat.query_one(ToolCallCard).has_class("-running")
            expected = ["samples.sample_llm asks for this:", "• Ask your model for completions",
                        "Ask your model for a one-sentence summary of the text you give it."]
            # The entries are mounted into the prompt's list a frame after the prompt itself.
            await until(pilot, lambda: shown(app.screen) == expected)
            assert shown(app.screen) == expected
            await pilot.press("o")
            await until(pilot, lambda: not app.chat.busy)
            [event] = ended(seen)
            assert event.ok, event.error
            assert set(event.result) == {"summary"}


PEEK = """
import os

def peek(args, ctx):
    try:
        with open(args["path"]) as handle:
            text = handle.read()
    except OSError as exc:
        text = "refused: " + str(exc.strerror)
    return {"text": text, "token": os.environ.get("WORKBENCH_TEST_TOKEN")}
"""


def install_peek(app, workdir: Path) -> Path:
    """Install an extension whose ``peek`` needs a folder and may use a token."""
    docs = workdir / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("the docs", encoding="utf-8")
    folder = workdir / "peek-src"
    folder.mkdir()
    (folder / "main.py").write_text(PEEK)
    (folder / "package.json").write_text(json.dumps({"name": "peek", "version": "1.0.0"}))
    (folder / "loca.json").write_text(json.dumps({
        "name": "peek", "displayName": "Peek", "description": "Peek at a file.", "entry": "main.py",
        "tools": [{"name": "peek", "description": "Read a file. Use when asked to peek.",
                   "function": "peek", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                   "permissions": {"read": [{"path": str(docs), "reason": "Read the docs."}],
                                   "env": [{"key": "WORKBENCH_TEST_TOKEN", "optional": True,
                                            "reason": "Sign in when you have a token."}]}}]}))
    app.host.extensions.install(str(folder), lambda plan: True)
    return docs / "a.txt"


def peek_twice(path: Path) -> list[dict]:
    call = {"name": "peek", "arguments": {"path": str(path)}}
    return [{"tool_calls": [call]}, {"tool_calls": [call]}, {"text": "Peeked twice."}]


class TestOptional:
    async def test_unticking_an_optional_entry_runs_the_call_without_it(self, make_app, until, workdir: Path,
                                                                        monkeypatch) -> None:
        monkeypatch.setenv("WORKBENCH_TEST_TOKEN", "s3cret")
        app = make_app([])
        path = install_peek(app, workdir)
        (workdir / "replies.json").write_text(json.dumps(peek_twice(path)))
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            screen = app.screen
            assert shown(screen) == [
                "peek.peek asks for these 2:",
                f"• Read {shown_path(str(path.parent))}", "Read the docs.",
                "☑ Read the environment variable WORKBENCH_TEST_TOKEN  (optional)",
                "Sign in when you have a token.",
                "Untick what it should do without (space)."]
            await pilot.press("tab", "space", "s")
            await until(pilot, lambda: not app.chat.busy)
            first, second = ended(seen)
            assert first.ok, first.error
            assert first.result == {"text": "the docs", "token": None}
            # Declined for the session: the second call is not asked about it again.
            assert second.result == {"text": "the docs", "token": None}
            grants = app.host.store.list_grants("peek.peek")
            assert [(g["kind"], g["scope"]) for g in grants] == [("read", "session")]
            states = {row["kind"]: row["state"] for row in app.host.grants.explain("peek.peek")}
            assert states == {"read": "granted", "env": "declined"}

    async def test_a_ticked_optional_entry_is_granted(self, make_app, until, workdir: Path,
                                                      monkeypatch) -> None:
        monkeypatch.setenv("WORKBENCH_TEST_TOKEN", "s3cret")
        app = make_app([])
        path = install_peek(app, workdir)
        (workdir / "replies.json").write_text(json.dumps(peek_twice(path)[1:]))
        async with app.run_test(size=SIZE) as pilot:
            seen = await start(app, pilot, until)
            await until_screen(pilot, PermissionScreen)
            await pilot.press("o")
            await until(pilot, lambda: not app.chat.busy)
            [event] = ended(seen)
            assert event.result == {"text": "the docs", "token": "s3cret"}
            assert app.host.store.list_grants("peek.peek") == []


# --- the review of a proposed schedule ------------------------------------------------


def propose(title: str = "Stand-up", **arguments) -> list[dict]:
    return [{"tool_calls": [{"name": "sample_schedule",
                             "arguments": {"title": title, "instruction": "Summarize my day.", **arguments}}]},
            {"text": "Proposed."}]


async def open_review(app, pilot, until, workdir: Path, monkeypatch) -> tuple[list, ScheduleScreen]:
    monkeypatch.setenv("TZ", "UTC")
    seen = await start(app, pilot, until)
    return seen, await until_screen(pilot, ScheduleScreen)


async def retype(pilot, field, text: str) -> None:
    """Click ``field``, clear it and type ``text``."""
    await pilot.click(field)
    await pilot.press("end", "ctrl+u", *text)


async def choose(pilot, select: Select, labels: list[str], label: str) -> None:
    """Open ``select`` with the keyboard and pick ``label`` (``labels`` in order)."""
    select.focus()
    await pilot.press("enter")
    await until_shown(pilot, lambda: select.expanded)
    await pilot.press("home", *["down"] * labels.index(label), "enter")
    await until_shown(pilot, lambda: not select.expanded)
    await settled(pilot)  # the form has handled the choice (Select.Changed)


KIND_LABELS = [label for label, _ in KINDS]


class TestScheduleReview:
    async def test_the_draft_is_shown(self, make_app, until, workdir: Path, monkeypatch) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            _, screen = await open_review(app, pilot, until, workdir, monkeypatch)
            dialog = screen.query_one("#schedule-dialog")
            assert (dialog.border_title, dialog.border_subtitle) == (
                "Schedule a prompt?", "proposed by samples.sample_schedule")
            assert screen.query_one("#schedule-title", Input).value == "Stand-up"
            assert screen.query_one("#schedule-prompt", TextArea).text == "Summarize my day."
            assert screen.query_one("#schedule-kind", Select).value == "weekly"
            ticked = [box.label.plain for box in screen.query(".schedule--weekday").results(Checkbox) if box.value]
            assert ticked == ["Mon", "Tue", "Wed", "Thu", "Fri"]
            assert screen.query_one("#schedule-time", Input).value == "09:00"
            assert screen.query_one("#schedule-missed", Checkbox).value is False
            assert screen.query_one("#schedule-summary").render().plain == "→ Mon, Tue, Wed, Thu, Fri at 09:00"
            visible = [row.id for row in screen.query(".schedule--row") if row.id and row.display]
            assert visible == ["row-days", "row-time"]
            assert screen.query_one("#schedule-dialog").region.bottom <= SIZE[1]
            await pilot.press("escape")
            await until(pilot, lambda: not app.chat.busy)

    async def test_edited_and_saved(self, make_app, until, workdir: Path, monkeypatch) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            seen, screen = await open_review(app, pilot, until, workdir, monkeypatch)
            await pilot.press("end", *" (short)")
            await pilot.press("tab", "end", *" Be brief.")
            boxes = {box.label.plain: box for box in screen.query(".schedule--weekday").results(Checkbox)}
            await pilot.click(boxes["Fri"])
            await pilot.click(boxes["Sat"])
            await retype(pilot, screen.query_one("#schedule-time", Input), "07:30")
            await pilot.click(screen.query_one("#schedule-missed", Checkbox))
            assert screen.query_one("#schedule-summary").render().plain == \
                "→ Mon, Tue, Wed, Thu, Sat at 07:30"
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not app.chat.busy)
            draft = {"title": "Stand-up (short)", "instruction": "Summarize my day. Be brief.",
                     "schedule": {"kind": "weekly", "weekdays": [1, 2, 3, 4, 6], "hour": 7, "minute": 30},
                     "runMissed": True}
            [event] = ended(seen)
            assert event.result == {"accepted": True, "draft": draft}
            [saved] = app.host.store.list_schedules()
            assert (saved["title"], saved["instruction"], saved["schedule"], saved["run_missed"]) == (
                draft["title"], draft["instruction"], draft["schedule"], True)

    @pytest.mark.parametrize(("kind", "fields", "schedule"), [
        ("Monthly", {"#schedule-day": "31", "#schedule-time": "18:05"},
         {"kind": "monthly", "day": 31, "hour": 18, "minute": 5}),
        ("Every N minutes", {"#schedule-every": "45"}, {"kind": "interval", "everyMinutes": 45}),
        ("Once", {"#schedule-date": "2031-03-04", "#schedule-time": "06:15"},
         {"kind": "once", "atMs": int(dt.datetime(2031, 3, 4, 6, 15, tzinfo=ZoneInfo("UTC")).timestamp() * 1000)}),
    ])
    async def test_another_kind_of_schedule(self, make_app, until, workdir: Path, monkeypatch,
                                            kind: str, fields: dict, schedule: dict) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            seen, screen = await open_review(app, pilot, until, workdir, monkeypatch)
            await choose(pilot, screen.query_one("#schedule-kind", Select), KIND_LABELS, kind)
            for selector, text in fields.items():
                await retype(pilot, screen.query_one(selector, Input), text)
            await pilot.click("#schedule-save")
            await until(pilot, lambda: not app.chat.busy)
            [event] = ended(seen)
            assert event.result["accepted"] is True
            assert event.result["draft"]["schedule"] == schedule
            assert app.host.store.list_schedules()[0]["schedule"] == schedule

    async def test_a_time_in_the_past_is_pointed_out(self, make_app, until, workdir: Path,
                                                     monkeypatch) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            _, screen = await open_review(app, pilot, until, workdir, monkeypatch)
            await choose(pilot, screen.query_one("#schedule-kind", Select), KIND_LABELS, "Once")
            await retype(pilot, screen.query_one("#schedule-date", Input), "2001-02-03")
            summary = screen.query_one("#schedule-summary").render().plain
            assert summary == "→ once at 2001-02-03 09:00  ⚠ that is in the past"
            await pilot.press("escape")
            await until(pilot, lambda: not app.chat.busy)

    async def test_yearly(self, make_app, until, workdir: Path, monkeypatch) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            seen, screen = await open_review(app, pilot, until, workdir, monkeypatch)
            await choose(pilot, screen.query_one("#schedule-kind", Select), KIND_LABELS, "Yearly")
            visible = [row.id for row in screen.query(".schedule--row") if row.id and row.display]
            assert visible == ["row-month", "row-day", "row-time"]
            await choose(pilot, screen.query_one("#schedule-month", Select), MONTHS, "Feb")
            await retype(pilot, screen.query_one("#schedule-day", Input), "29")
            assert "Feb 28 in other years" in screen.query_one("#schedule-summary").render().plain
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not app.chat.busy)
            assert ended(seen)[0].result["draft"]["schedule"] == {
                "kind": "yearly", "month": 2, "day": 29, "hour": 9, "minute": 0}

    async def test_what_would_be_refused_is_not_saved(self, make_app, until, workdir: Path,
                                                      monkeypatch) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            seen, screen = await open_review(app, pilot, until, workdir, monkeypatch)
            await retype(pilot, screen.query_one("#schedule-time", Input), "25:00")
            assert screen.query_one("#schedule-summary").render().plain == \
                "✗ the time must be HH:MM, from 00:00 to 23:59"
            await pilot.press("ctrl+s")
            await until_shown(pilot, lambda: app.screen is screen and screen.problem.startswith("the time must be"))
            assert screen.query_one("#schedule-message").render().plain == \
                "Not saved: the time must be HH:MM, from 00:00 to 23:59"
            await retype(pilot, screen.query_one("#schedule-title", Input), "")
            await retype(pilot, screen.query_one("#schedule-time", Input), "08:00")
            await pilot.press("ctrl+s")
            await until_shown(pilot, lambda: app.screen is screen and screen.problem == "give it a title")
            assert screen.query_one("#schedule-message").render().plain == \
                "Not saved: give it a title"
            await retype(pilot, screen.query_one("#schedule-title", Input), "Morning")
            await pilot.press("ctrl+s")
            await until(pilot, lambda: not app.chat.busy)
            assert ended(seen)[0].result["draft"]["title"] == "Morning"

    async def test_no_cron_is_offered(self, make_app, until, workdir: Path, monkeypatch) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            _, screen = await open_review(app, pilot, until, workdir, monkeypatch)
            kind = screen.query_one("#schedule-kind", Select)
            kind.focus()
            await pilot.press("enter")
            await until_shown(pilot, lambda: kind.expanded)
            overlay = screen.query_one(SelectOverlay)
            offered = [str(overlay.get_option_at_index(index).prompt)
                       for index in range(overlay.option_count)]
            assert offered == KIND_LABELS == ["Once", "Every N minutes", "Weekly", "Monthly", "Yearly"]
            await pilot.press("escape", "escape")
            await until(pilot, lambda: not app.chat.busy)

    @pytest.mark.parametrize("how", ["escape", "click"])
    async def test_cancel_saves_nothing(self, make_app, until, workdir: Path, monkeypatch, how: str) -> None:
        enable_samples(workdir)
        app = make_app(propose())
        async with app.run_test(size=SIZE) as pilot:
            seen, _ = await open_review(app, pilot, until, workdir, monkeypatch)
            if how == "escape":
                await pilot.press("escape")
            else:
                await pilot.click("#schedule-cancel")
            await until(pilot, lambda: not app.chat.busy)
            assert ended(seen)[0].result == {"accepted": False}
            assert app.host.store.list_schedules() == []


def test_a_path_that_leads_elsewhere_says_where_and_is_judged_by_it(tmp_path: Path) -> None:
    from workbench.tui.screens.permission import describe

    verb, target, warning = describe({"kind": "read", "value": str(tmp_path / "docs"),
                                      "resolved": "/"})
    assert verb == "Read" and target.endswith("(leads to /)")
    assert warning == "the whole file system"
    assert describe({"kind": "write", "value": "/srv/out"}) == ("Write to", "/srv/out", "")
