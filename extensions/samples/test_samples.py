"""Tests of every sample tool, run with a mock ctx and no workbench.

Each test stubs only what its tool touches; anything else the tool reached would
fail the test with ``UnstubbedMember``. Run them with ``pytest extensions/samples``.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import io
import struct
import wave
import zlib
from pathlib import Path

import pytest

from workbench.testing import CtxError, MockContext, MockDatabase, MockMemories, MockSignal, run_tool


def _load_samples():
    """Import main.py by path, under a name no other extension's main.py can take."""
    spec = importlib.util.spec_from_file_location("samples_main", Path(__file__).with_name("main.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


samples = _load_samples()


def _wav(seconds: float = 0.5, rate: int = 16000) -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"\x00\x00" * int(seconds * rate))
    return base64.b64encode(buffer.getvalue()).decode()


# --- asking the person ----------------------------------------------------------


def test_choice_asks_one_question_and_returns_the_pick():
    asked = []
    ctx = MockContext(ask_user=lambda questions: asked.append(questions) or ["blue"])
    result = run_tool(samples.sample_choice, {}, ctx)
    assert result == {"question": "Pick a favorite color.", "answer": "blue"}
    [question] = asked[0]
    assert [o["value"] for o in question["options"]] == ["red", "blue", "green"]
    assert question["multiselect"] is False and "kind" not in question
    assert ctx.progress[-1] == 1


def test_choice_with_multiselect_returns_every_pick():
    ctx = MockContext(ask_user=[["tea", "cake"]])
    result = run_tool(samples.sample_choice,
                      {"question": "What should we bring?", "options": ["tea", "cake", "fruit"],
                       "multiselect": True}, ctx)
    assert result["answer"] == ["tea", "cake"]
    assert ctx.calls[0].args[0][0]["multiselect"] is True


def test_diff_returns_the_tidy_text_only_when_accepted():
    messy = "line one   \n\n\n\nline two\t\n"
    accepted = MockContext(ask_user=["accept"])
    assert run_tool(samples.sample_diff, {"text": messy}, accepted) == {
        "changed": True, "accepted": True, "text": "line one\n\nline two\n"}
    [question] = accepted.calls[0].args[0]
    assert (question["kind"], question["before"]) == ("diff", messy)
    rejected = MockContext(ask_user=["reject"])
    assert run_tool(samples.sample_diff, {"text": messy}, rejected)["text"] == messy
    assert rejected.progress[-1] == 1


def test_diff_of_tidy_text_asks_nothing():
    ctx = MockContext()  # ask_user is not stubbed: asking would fail the test
    assert run_tool(samples.sample_diff, {"text": "tidy\n"}, ctx) == {
        "changed": False, "accepted": False, "text": "tidy\n"}
    assert ctx.progress == [1.0]


def test_files_offers_the_shipped_notes_and_describes_the_pick():
    def pick_skill(questions):
        [question] = questions
        assert question["kind"] == "files"
        return [next(e["path"] for e in question["entries"] if e["label"] == "write-a-tool/SKILL.md")]

    ctx = MockContext(ask_user=pick_skill)
    result = run_tool(samples.sample_files, {}, ctx)
    assert result["file"] == "write-a-tool/SKILL.md"
    assert result["heading"] == "Write a tool" and result["lines"] > 10
    labels = [e["label"] for e in ctx.calls[0].args[0][0]["entries"]]
    assert labels == ["samples-overview.md", "write-a-tool/SKILL.md", "write-a-tool/ctx-reference.md"]
    assert ctx.progress[-1] == 1


def test_files_refuses_a_path_it_did_not_offer():
    ctx = MockContext(ask_user=["/etc/passwd"])
    with pytest.raises(ValueError, match="not one of the files offered"):
        run_tool(samples.sample_files, {}, ctx)


def test_image_shows_a_real_png_and_returns_the_action():
    ctx = MockContext(ask_user=["another"])
    assert run_tool(samples.sample_image, {"color": "#FF8800"}, ctx) == {"color": "#ff8800", "action": "another"}
    [question] = ctx.calls[0].args[0]
    png = base64.b64decode(question["dataB64"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and question["mime"] == "image/png"
    width, height = struct.unpack(">II", png[16:24])
    pixels = zlib.decompress(png[png.index(b"IDAT") + 4:])
    assert (width, height) == (32, 32) and pixels[1:4] == bytes((0xFF, 0x88, 0x00))
    assert [a["value"] for a in question["actions"]] == ["keep", "another"]


def test_table_returns_the_edited_rows_and_what_is_unassigned():
    edited = [{"task": "Paint the fence", "owner": "Sam"}, {"task": "Fix the tap", "owner": " "}]
    ctx = MockContext(ask_user=[edited])
    result = run_tool(samples.sample_table, {"tasks": ["Paint the fence", "Fix the tap"]}, ctx)
    assert result == {"rows": edited, "unassigned": ["Fix the tap"]}
    [question] = ctx.calls[0].args[0]
    assert question["columns"] == ["task", "owner"]
    assert question["rows"] == [["Paint the fence", ""], ["Fix the tap", ""]]
    assert ctx.progress[-1] == 1


# --- showing a result -------------------------------------------------------------


def test_display_shows_each_kind_of_bubble_and_ends_at_one():
    ctx = MockContext()
    assert run_tool(samples.sample_display, {"title": "Hello"}, ctx) == {
        "shown": ["markdown", "image", "table", "diff"]}
    assert [b.kind for b in ctx.bubbles] == ["markdown", "image", "table", "diff"]
    assert ctx.bubbles[0].payload["text"].startswith("## Hello")
    assert ctx.bubbles[2].payload["columns"] == ["kind", "shows"]
    assert ctx.progress == [0.25, 0.5, 0.75, 1.0]
    assert ctx.logs == [("info", "showed 4 bubbles")]


def test_display_stops_when_the_signal_fires():
    signal = MockSignal()
    ctx = MockContext(signal=signal, display={"image": lambda *shown: signal.abort()})
    with pytest.raises(asyncio.CancelledError):
        run_tool(samples.sample_display, {}, ctx)
    assert [b.kind for b in ctx.bubbles] == ["markdown", "image"]
    assert ctx.progress == [0.25, 0.5]


# --- reaching capabilities --------------------------------------------------------


def test_memory_writes_reads_back_and_edits():
    memories = MockMemories()
    ctx = MockContext(memories=memories)
    assert run_tool(samples.sample_memory, {"action": "write", "title": "Plants",
                                            "content": "Water the fern on Mondays."}, ctx) == {
        "title": "Plants", "created": True}
    assert run_tool(samples.sample_memory, {"action": "read", "title": "Plants"}, ctx) == {
        "title": "Plants", "content": "Water the fern on Mondays."}
    assert run_tool(samples.sample_memory, {"action": "edit", "title": "Plants", "find": "Mondays",
                                            "replace": "Thursdays"}, ctx) == {
        "title": "Plants", "content": "Water the fern on Thursdays."}
    assert run_tool(samples.sample_memory, {"action": "list"}, ctx) == {
        "memories": [{"title": "Plants", "kind": "knowledge"}]}
    assert [c.member for c in ctx.calls] == ["memories.write", "memories.get", "memories.edit", "memories.list"]
    assert ctx.progress[-1] == 1


def test_memory_reads_a_file_a_skill_ships_and_reports_a_refused_edit():
    ctx = MockContext(memories={
        "get_file": lambda title, name: {"title": title, "name": name, "content": "# ctx reference"},
        "edit": CtxError("tool", "edit needs exactly one occurrence of the text to find; found 2"),
    })
    assert run_tool(samples.sample_memory, {"action": "file", "title": "write-a-tool",
                                            "name": "ctx-reference.md"}, ctx)["content"] == "# ctx reference"
    with pytest.raises(CtxError, match="found 2") as refused:
        run_tool(samples.sample_memory, {"action": "edit", "title": "t", "find": "a", "replace": "b"}, ctx)
    assert refused.value.kind == "tool"


def test_database_keeps_notes_across_calls():
    db = MockDatabase()
    first = run_tool(samples.sample_database, {"note": "buy milk"}, MockContext(db=db))
    assert first == {"added": 1, "count": 1, "latest": ["buy milk"]}
    second_ctx = MockContext(db=db)
    second = run_tool(samples.sample_database, {"note": "call mum"}, second_ctx)
    assert second == {"added": 2, "count": 2, "latest": ["call mum", "buy milk"]}
    assert run_tool(samples.sample_database, {}, MockContext(db=db))["added"] is None
    assert second_ctx.progress == [0.5, 1.0]


def test_llm_sends_a_summary_request_and_returns_the_text():
    requests = []

    async def complete(request):
        requests.append(request)
        return {"text": " A fern needs water. \n"}

    ctx = MockContext(llm={"complete": complete})
    assert run_tool(samples.sample_llm, {"text": "Ferns like moist soil..."}, ctx) == {
        "summary": "A fern needs water."}
    assert requests[0]["prompt"] == "Ferns like moist soil..."
    assert requests[0]["maxTokens"] == 60 and requests[0]["systemPrompt"]
    assert ctx.progress[-1] == 1


def test_tts_reports_the_length_of_the_audio():
    audio = {"dataB64": _wav(seconds=0.5, rate=22050), "mime": "audio/wav", "sampleRate": 22050}
    ctx = MockContext(tts={"speak": lambda text: audio})
    result = run_tool(samples.sample_tts, {"text": "hello"}, ctx)
    assert result["seconds"] == 0.5 and result["sampleRate"] == 22050 and result["mime"] == "audio/wav"
    assert ctx.calls[0].args == ("hello",)


def test_tts_lets_an_unavailable_engine_surface():
    ctx = MockContext(tts={"speak": CtxError("unavailable", "Text-to-Speech is off")})
    with pytest.raises(CtxError) as refused:
        run_tool(samples.sample_tts, {"text": "hello"}, ctx)
    assert refused.value.kind == "unavailable" and ctx.progress == []


def test_stt_passes_the_recording_and_counts_the_words():
    data = _wav()
    ctx = MockContext(stt={"transcribe": lambda request: {"text": "turn on the lights"}})
    assert run_tool(samples.sample_stt, {"dataB64": data, "language": "en-US"}, ctx) == {
        "text": "turn on the lights", "words": 4}
    assert ctx.calls[0].args[0] == {"dataB64": data, "mime": "audio/wav", "language": "en-US"}
    assert ctx.progress[-1] == 1


def test_schedule_reports_the_draft_the_person_saved():
    def review(draft):
        assert draft["schedule"] == {"kind": "weekly", "weekdays": [1, 2, 3, 4, 5], "hour": 9, "minute": 0}
        return {"accepted": True, "draft": {**draft, "schedule": {**draft["schedule"], "hour": 8}}}

    ctx = MockContext(schedule_prompt=review)
    result = run_tool(samples.sample_schedule, {"title": "Stand-up", "instruction": "Summarize my day."}, ctx)
    assert result["accepted"] is True and result["draft"]["schedule"]["hour"] == 8
    declined = MockContext(schedule_prompt={"accepted": False})
    assert run_tool(samples.sample_schedule, {"title": "t", "instruction": "i", "weekdays": [0]},
                    declined) == {"accepted": False}
