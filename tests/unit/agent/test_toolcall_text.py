"""Tool calls written as text: what counts as one and what stays text."""

from __future__ import annotations

import pytest

from workbench.agent.toolcall_text import could_be_tool_call, parse_tool_calls

TOOLS = {"get_weather", "word_count"}


def calls(text: str) -> list[tuple[str, dict]] | None:
    found = parse_tool_calls(text, TOOLS)
    return None if found is None else [(call.name, call.arguments) for call in found]


@pytest.mark.parametrize("text", [
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    '  {"name": "get_weather", "parameters": {"city": "Paris"}}\n',
    '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',
    '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    '```\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}',
    '{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}',
    '{"tool": "get_weather", "arguments": {"city": "Paris"}}',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}',
])
def test_each_written_form_is_a_call(text: str) -> None:
    assert calls(text) == [("get_weather", {"city": "Paris"})]


def test_a_list_gives_several_calls_with_fresh_ids() -> None:
    found = parse_tool_calls('[{"name": "get_weather", "arguments": {"city": "A"}},'
                             ' {"name": "word_count", "arguments": {"text": "a b"}}]', TOOLS)
    assert [(c.name, c.arguments) for c in found] == [("get_weather", {"city": "A"}),
                                                      ("word_count", {"text": "a b"})]
    assert found[0].id != found[1].id and found[0].id.startswith("call_")


def test_no_arguments_means_an_empty_object() -> None:
    assert calls('{"name": "word_count"}') == [("word_count", {})]
    assert calls('{"name": "word_count", "arguments": ""}') == [("word_count", {})]


@pytest.mark.parametrize("text", [
    "The weather in Paris is sunny.",
    'Sure! {"name": "get_weather", "arguments": {"city": "Paris"}}',          # prose around it
    '{"name": "get_weather", "arguments": {"city": "Paris"}} Done.',
    '{"name": "delete_everything", "arguments": {}}',                         # not on offer
    '[{"name": "get_weather", "arguments": {}}, {"name": "rm", "arguments": {}}]',
    '{"name": "get_weather", "arguments": ["Paris"]}',                        # not an object
    '{"name": "get_weather", "arguments": "not json"}',
    '{"name": "get_weather", "arguments": {}, "extra": 1}',                   # unknown field
    '{"answer": "Paris is sunny"}',
    '{"name": "get_weather", "arguments": {"city": "Paris"}',                 # cut short
    "```json\nnot json\n```",
    "[]",
])
def test_anything_else_stays_text(text: str) -> None:
    assert calls(text) is None


@pytest.mark.parametrize(("start", "held"), [
    ("", True), ("  ", True), ("{", True), ('{"na', True), ("{ \n", True), ("`", True), ("``", True),
    ("```", True), ("```js", True), ("```json", True), ('```json\n{"name', True), ("```\n", True),
    ("<tool", True), ("<tool_call>", True), ('<tool_call>\n{"', True), ("[", True), ("[ {", True),
    ("Hello", False), ("<b>", False), ("The answer", False), ("1.", False), ("[1] See", False),
    ("{x}", False), ("```python\n", False), ("```python", False), ("```json\nprint", False),
    ("``x", False), ("<tool_call>hi", False), ("[[", False),
])
def test_which_beginnings_are_held_back(start: str, held: bool) -> None:
    assert could_be_tool_call(start) is held
