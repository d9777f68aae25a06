"""Server-sent events cut anywhere, Retry-After, error bodies and masking (``agent/wire.py``)."""

from __future__ import annotations

import email.utils
import time

import pytest

from workbench.agent.grammar import AnswerStream, plain_messages, reply_schema
from workbench.agent.messages import ChatMessage, ToolCall, ToolSpec
from workbench.agent.wire import SSEDecoder, SSEEvent, error_message, mask, retry_after, safe_url

STREAM = ('event: message\r\ndata: {"text": "h\u00e9llo \u4e16\u754c \U0001f389"}\r\n\r\n'
          ": keep-alive\n\n"
          "data:{\"no\": \"space\"}\n\n"
          "data: first line\ndata: second line\n\n"
          "event: ping\rdata: {}\r\r"
          "data: [DONE]\n\n")

EXPECTED = [
    SSEEvent("message", '{"text": "h\u00e9llo \u4e16\u754c \U0001f389"}'),
    SSEEvent("message", '{"no": "space"}'),
    SSEEvent("message", "first line\nsecond line"),
    SSEEvent("ping", "{}"),
    SSEEvent("message", "[DONE]"),
]


def decode(pieces: list[bytes]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
    return events + decoder.close()


def test_whole_stream_decodes() -> None:
    assert decode([STREAM.encode()]) == EXPECTED


@pytest.mark.parametrize("cut", range(1, len(STREAM.encode())))
def test_every_cut_point_gives_the_same_events(cut: int) -> None:
    data = STREAM.encode()
    # Cuts inside a multi-byte character, inside "data:", between CR and LF.
    assert decode([data[:cut], data[cut:]]) == EXPECTED


def test_one_byte_at_a_time() -> None:
    data = STREAM.encode()
    assert decode([data[i:i + 1] for i in range(len(data))]) == EXPECTED


def test_a_last_event_without_its_blank_line_is_kept() -> None:
    assert decode([b"data: tail"]) == [SSEEvent("message", "tail")]


def test_retry_after_seconds_date_millis_and_backoff() -> None:
    assert retry_after({"retry-after": "3"}, 1) == 3.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}, 1) == 0.25
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after({"retry-after": soon}, 1) <= 31
    assert retry_after({}, 1) == 1.0 and retry_after({}, 3) == 4.0
    assert retry_after({"retry-after": "soon-ish"}, 2) == 2.0


def test_error_message_finds_the_human_part() -> None:
    assert error_message(b'{"error": {"message": "Invalid model", "type": "x"}}') == "Invalid model"
    assert error_message(b'{"error": "model not found"}') == "model not found"
    assert error_message(b'{"detail": "Not Found"}') == "Not Found"
    assert error_message(b"upstream timed out") == "upstream timed out"
    assert error_message(b"") == "(no message)"


def test_mask_and_safe_url() -> None:
    assert mask("key sk-abc123 and sk-abc123", ["sk-abc123", None, ""]) == "key *** and ***"
    assert safe_url("http://user:pw@host:1/v1") == "http://***@host:1/v1"
    assert safe_url("http://host/v1") == "http://host/v1"


# --- the local grammar ----------------------------------------------------------

WEATHER = ToolSpec("get_weather", "Weather for a city.",
                   {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def test_reply_schema_has_a_branch_per_tool_and_the_answer() -> None:
    schema = reply_schema([WEATHER])
    tool, answer = schema["anyOf"]
    assert tool["properties"]["tool"] == {"const": "get_weather"}
    assert tool["properties"]["arguments"]["required"] == ["city"]
    assert answer["required"] == ["answer"]
    assert reply_schema([WEATHER], loose=True)["anyOf"][0]["properties"]["arguments"] == {"type": "object"}


def test_plain_messages_write_calls_and_results_in_plain_roles() -> None:
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "weather?"),
                ChatMessage("assistant", "", tool_calls=[ToolCall("c1", "get_weather", {"city": "Oslo"})]),
                ChatMessage("tool", '{"sky": "clear"}', tool_call_id="c1", name="get_weather"),
                ChatMessage("assistant", "Clear.")]
    out = plain_messages(messages, [WEATHER])
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant"]
    assert out[0]["content"].startswith("Be brief.\n\n") and "get_weather" in out[0]["content"]
    assert out[2]["content"] == '{"tool": "get_weather", "arguments": {"city": "Oslo"}}'
    assert out[3]["content"] == 'Result of the tool get_weather: {"sky": "clear"}'
    assert out[4]["content"] == '{"answer": "Clear."}'


ANSWER = '{\n  "answer": "caf\\u00e9 \\"quoted\\" \\ud83c\\udf89 line\\nnext \\\\ end"\n}'


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 100])
def test_answer_stream_decodes_escapes_however_it_is_cut(size: int) -> None:
    stream = AnswerStream()
    shown = "".join(stream.feed(ANSWER[i:i + size]) for i in range(0, len(ANSWER), size))
    assert shown == 'caf\u00e9 "quoted" \U0001f389 line\nnext \\ end'
    assert stream.answering and stream.raw == ANSWER


def test_answer_stream_shows_nothing_of_a_tool_call() -> None:
    stream = AnswerStream()
    assert stream.feed('{"tool": "get_weather", "arguments": {"city": "x"}}') == ""
    assert not stream.answering
