"""The samples extension end to end: each tool through a real Host and its sandboxed workers.

A scripted person answers every request the tools raise (forms by kind, permissions
once, schedule proposals edited), and each test checks both the call's result and
the events the host published while it ran.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from commands import workbench

from workbench.core.extensions import SAMPLES_DIR
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import (AskUserRequest, DisplayBubble, PermissionAnswer, PermissionRequest,
                              RequestDenied, ScheduleProposalRequest, ToolCallEnded, ToolCallLog,
                              ToolCallProgress)
from workbench.tools.loader import load_extension

SAMPLE_TOOLS = ["sample_choice", "sample_diff", "sample_files", "sample_image", "sample_table",
                "sample_display", "sample_memory", "sample_database", "sample_llm", "sample_tts",
                "sample_stt", "sample_schedule"]
SUMMARY = "Ferns want damp soil and indirect light."


class Person:
    """A responder that answers like a person would, and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list = []
        self.decision = "once"

    async def answer(self, request):
        self.asked.append(request)
        if isinstance(request, PermissionRequest):
            return PermissionAnswer(self.decision)
        if isinstance(request, AskUserRequest):
            return [self.fill(question) for question in request.questions]
        if isinstance(request, ScheduleProposalRequest):
            edited = {**request.draft, "schedule": {**request.draft["schedule"], "hour": 7, "minute": 30}}
            return {"accepted": True, "draft": edited}
        raise RequestDenied(f"no answer for {request.kind}")

    @staticmethod
    def fill(question: dict):
        kind = question.get("kind", "choice")
        if kind == "choice":
            values = [option["value"] for option in question["options"]]
            return values[1:] if question.get("multiselect") else values[1]
        if kind == "diff":
            return "accept"
        if kind == "files":
            return question["entries"][-1]["path"]
        if kind == "image":
            return question["actions"][0]["value"]
        if kind == "table":
            return [dict(zip(question["columns"], [row[0], "Ana"])) for row in question["rows"]]
        raise AssertionError(f"unexpected question kind {kind}")

    def kinds(self, request_type) -> list[str]:
        """The question kinds (AskUserRequest) or permission kinds (PermissionRequest) asked for."""
        found = [r for r in self.asked if isinstance(r, request_type)]
        if request_type is AskUserRequest:
            return [q.get("kind", "choice") for r in found for q in r.questions]
        return [p["kind"] for r in found for p in r.permissions]


def enable_samples(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[extensions]\nsamples = true\n")


@pytest.fixture
def person() -> Person:
    return Person()


@pytest.fixture
def host(tmp_path: Path, person: Person):
    enable_samples(tmp_path / "home")
    script = tmp_path / "model.json"
    script.write_text(json.dumps([{"text": f" {SUMMARY} "}]))
    with Host.open(cwd=tmp_path / "work", model=f"scripted:{script}", responder=person) as host:
        host.seen = []
        host.bus.subscribe(host.seen.append)
        yield host


async def call(host: Host, name: str, args: dict | None = None, **options):
    return await host.tools.call(name, args or {}, CallOptions(prompt=True, **options))


def events(host: Host, outcome, kind) -> list:
    return [e for e in host.seen if isinstance(e, kind) and e.call_id == outcome.call_id]


def assert_finished(host: Host, outcome) -> None:
    """The call succeeded, its last progress was 1, and its end was published."""
    assert outcome.ok, outcome.error
    progress = [e.progress for e in events(host, outcome, ToolCallProgress)]
    assert progress and progress[-1] == 1.0
    [ended] = events(host, outcome, ToolCallEnded)
    assert ended.ok and ended.result == outcome.result


# --- loading ------------------------------------------------------------------------


async def test_the_samples_load_with_their_knowledge_and_skill(host):
    [samples] = [e for e in host.loading.extensions if e["name"] == "samples"]
    assert samples["tools"] == SAMPLE_TOOLS and samples["scope"] == "development"
    assert Path(samples["path"]) == SAMPLES_DIR
    shipped = {m["title"]: m for m in host.memories.library.list() if m.get("extension") == "samples"}
    assert shipped["Samples overview"]["kind"] == "knowledge"
    assert shipped["write-a-tool"]["kind"] == "skill" and shipped["write-a-tool"]["summary"].startswith("Write")


async def test_the_samples_stay_out_unless_the_setting_is_on(tmp_path):
    with Host.open(cwd=tmp_path / "work") as plain:
        outcome = await call(plain, "sample_display")
    assert outcome.error["kind"] == "not_found"


# --- asking the person ----------------------------------------------------------------


async def test_every_kind_of_question_reaches_the_person_and_comes_back(host, person):
    choice = await call(host, "sample_choice", {"options": ["tea", "cake", "fruit"], "multiselect": True})
    assert choice.result == {"question": "Pick a favorite color.", "answer": ["cake", "fruit"]}
    assert_finished(host, choice)

    diff = await call(host, "sample_diff", {"text": "one  \n\n\n\ntwo\n"})
    assert diff.result == {"changed": True, "accepted": True, "text": "one\n\ntwo\n"}

    files = await call(host, "sample_files")
    assert files.result["file"] == "write-a-tool/ctx-reference.md"
    assert files.result["heading"] == "ctx reference (Python names)"
    assert_finished(host, files)

    image = await call(host, "sample_image", {"color": "#00aa55"})
    assert image.result == {"color": "#00aa55", "action": "keep"}

    table = await call(host, "sample_table", {"tasks": ["Sweep", "Cook"]})
    assert table.result == {"rows": [{"task": "Sweep", "owner": "Ana"}, {"task": "Cook", "owner": "Ana"}],
                            "unassigned": []}

    assert person.kinds(AskUserRequest) == ["choice", "diff", "files", "image", "table"]
    [read] = [r for r in person.asked if isinstance(r, PermissionRequest)]
    assert read.tool == "samples.sample_files"
    assert read.permissions[0]["kind"] == "read"
    assert read.permissions[0]["value"] == str(SAMPLES_DIR / "memories")


class Nobody:
    """A front-end with no one at it: every request is refused."""

    async def answer(self, request):
        raise RequestDenied("walked away")


async def test_a_form_nobody_answers_ends_the_call_as_cancelled(host):
    host.answer_with(Nobody())
    outcome = await call(host, "sample_choice")
    assert outcome.error["kind"] == "cancelled" and "walked away" in outcome.error["message"]


# --- showing a result ---------------------------------------------------------------------


async def test_display_publishes_one_bubble_of_each_kind_with_progress_and_a_log(host, person):
    outcome = await call(host, "sample_display", {"title": "Tour"})
    assert outcome.result == {"shown": ["markdown", "image", "table", "diff"]}
    assert_finished(host, outcome)
    bubbles = events(host, outcome, DisplayBubble)
    assert [b.display for b in bubbles] == ["markdown", "image", "table", "diff"]
    assert bubbles[0].payload["text"].startswith("## Tour")
    assert bubbles[1].payload["mime"] == "image/png" and bubbles[1].payload["alt"] == "A blue swatch"
    assert bubbles[2].payload["columns"] == ["kind", "shows"] and len(bubbles[2].payload["rows"]) == 4
    assert bubbles[3].payload == {"before": "colour: blue\n", "after": "color: blue\n", "title": "Spelling"}
    progress = events(host, outcome, ToolCallProgress)
    assert [p.progress for p in progress] == [0.25, 0.5, 0.75, 1.0]
    assert progress[0].label == "Showed the markdown"
    logs = [(e.level, e.message) for e in events(host, outcome, ToolCallLog)]
    assert ("info", "showed 4 bubbles") in logs
    assert person.asked == []


# --- reaching capabilities --------------------------------------------------------------


async def test_memory_writes_reads_back_edits_and_reads_a_skill_file(host, person):
    written = await call(host, "sample_memory", {"action": "write", "title": "Plants",
                                                 "content": "Water the fern on Mondays."})
    assert written.result == {"title": "Plants", "created": True}
    assert_finished(host, written)
    read = await call(host, "sample_memory", {"action": "read", "title": "Plants"})
    assert read.result == {"title": "Plants", "content": "Water the fern on Mondays."}
    edited = await call(host, "sample_memory", {"action": "edit", "title": "Plants",
                                                "find": "Mondays", "replace": "Thursdays"})
    assert edited.result == {"title": "Plants", "content": "Water the fern on Thursdays."}
    assert host.store.get_memory("Plants")["content"] == "Water the fern on Thursdays."
    listed = await call(host, "sample_memory", {"action": "list"})
    titles = {m["title"] for m in listed.result["memories"]}
    assert {"Plants", "Samples overview", "write-a-tool"} <= titles
    skill_file = await call(host, "sample_memory", {"action": "file", "title": "write-a-tool",
                                                    "name": "ctx-reference.md"})
    assert skill_file.result["content"].startswith("# ctx reference")
    # Granted "once", the memories permission is asked for at each call's first use.
    assert person.kinds(PermissionRequest) == ["memories"] * 5
    assert {p["value"] for r in person.asked for p in r.permissions} == {"write"}


async def test_memory_of_a_shipped_title_is_read_only(host):
    outcome = await call(host, "sample_memory", {"action": "write", "title": "Samples overview", "content": "x"})
    assert outcome.error["kind"] == "permission" and "read-only" in outcome.error["message"]


async def test_memory_arguments_are_checked_before_the_tool_runs(host, person):
    outcome = await call(host, "sample_memory", {"action": "edit", "title": "Plants"})
    assert outcome.error["kind"] == "invalid_arguments" and "find" in outcome.error["message"]
    assert person.asked == []


async def test_the_private_database_lasts_across_calls(host):
    first = await call(host, "sample_database", {"note": "buy milk"})
    assert first.result == {"added": 1, "count": 1, "latest": ["buy milk"]}
    assert_finished(host, first)
    second = await call(host, "sample_database", {"note": "call mum"})
    assert second.result == {"added": 2, "count": 2, "latest": ["call mum", "buy milk"]}
    assert host.databases.path("samples").is_file()


async def test_an_extension_without_a_database_is_refused_one(host, tmp_path):
    folder = tmp_path / "nodb"
    folder.mkdir()
    (folder / "main.py").write_text(textwrap.dedent('''
        def peek(args, ctx):
            return ctx.db.query("SELECT 1 AS one")
    '''))
    (folder / "loca.json").write_text(json.dumps({
        "name": "nodb", "displayName": "No database", "description": "Has no private database.",
        "entry": "main.py", "tools": [{"name": "peek", "description": "Peek.", "function": "peek",
                                       "parameters": {"type": "object"}}]}))
    assert load_extension(host.registry, folder), host.registry.load_errors
    outcome = await call(host, "peek")
    assert outcome.error["kind"] == "permission"
    assert '"database": true' in outcome.error["message"]
    assert not host.databases.path("nodb").exists()


async def test_llm_returns_the_scripted_models_text(host, person):
    outcome = await call(host, "sample_llm", {"text": "Ferns grow best in damp, shaded places..."})
    assert outcome.result == {"summary": SUMMARY}
    assert_finished(host, outcome)
    assert person.kinds(PermissionRequest) == ["llm"]


async def test_llm_in_a_chat_reaches_that_chats_own_model(host, person, tmp_path):
    other = tmp_path / "other-model.json"
    other.write_text(json.dumps([{"text": "Ferns like shade."}]))
    chat = host.chats.new()["id"]
    host.chats.set_model(chat, f"scripted:{other}")
    outcome = await call(host, "sample_llm", {"text": "Ferns grow best in damp, shaded places..."},
                         session_id=chat)
    assert outcome.result == {"summary": "Ferns like shade."}
    # Outside that chat, the host's model answers.
    outside = await call(host, "sample_llm", {"text": "Ferns grow best in damp, shaded places..."})
    assert outside.result == {"summary": SUMMARY}


async def test_llm_refused_by_the_person_fails_with_permission(host, person):
    person.decision = "deny"
    outcome = await call(host, "sample_llm", {"text": "anything"})
    assert outcome.error["kind"] == "permission"


@pytest.mark.parametrize(("tool", "args", "setting"), [
    ("sample_tts", {"text": "hello there"}, "Text-to-Speech is off"),
    ("sample_stt", {"dataB64": "UklGRg=="}, "Speech-to-Text is off"),
])
async def test_speech_that_is_switched_off_is_unavailable(host, person, tool, args, setting):
    outcome = await call(host, tool, args)
    assert outcome.error["kind"] == "unavailable"
    assert setting in outcome.error["message"] and "workbench config set speech." in outcome.error["message"]
    assert person.kinds(PermissionRequest) == [tool.removeprefix("sample_")]


async def test_the_accepted_schedule_is_saved_as_the_person_edited_it(host, person):
    outcome = await call(host, "sample_schedule", {"title": "Stand-up", "instruction": "Summarize my day.",
                                                   "weekdays": [1, 3], "hour": 9})
    edited = {"kind": "weekly", "weekdays": [1, 3], "hour": 7, "minute": 30}
    assert outcome.result == {"accepted": True, "draft": {"title": "Stand-up", "instruction": "Summarize my day.",
                                                          "schedule": edited, "runMissed": False}}
    assert_finished(host, outcome)
    [proposal] = [r for r in person.asked if isinstance(r, ScheduleProposalRequest)]
    assert proposal.tool == "samples.sample_schedule" and proposal.draft["schedule"]["hour"] == 9
    [saved] = host.store.list_scheduled_prompts()
    assert (saved["title"], saved["schedule"], saved["source"]) == ("Stand-up", edited, "samples.sample_schedule")


# --- from the command line ------------------------------------------------------------


def workbench_call(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"WORKBENCH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    return workbench("call", *args, "--json", env=env, cwd=tmp_path / "work")


def test_workbench_call_runs_samples_headlessly(tmp_path):
    enable_samples(tmp_path / "home")
    table = workbench_call(tmp_path, "sample_table")
    assert table.returncode == 4, table.stderr
    answer = json.loads(table.stdout)
    assert answer["ok"] is False and answer["error"]["kind"] == "cancelled"
    assert "the form was not answered" in answer["error"]["message"]

    first = workbench_call(tmp_path, "sample_database", "--args", '{"note": "from the shell"}')
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"ok": True, "result": {"added": 1, "count": 1,
                                                               "latest": ["from the shell"]}}
    second = workbench_call(tmp_path, "sample_database")
    assert json.loads(second.stdout) == {"ok": True, "result": {"added": None, "count": 1,
                                                                "latest": ["from the shell"]}}
