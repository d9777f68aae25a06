"""Results kept whole, progress as a fraction, and elicitation forms both ways."""

from __future__ import annotations

import pytest

from workbench.errors import ToolError
from workbench.mcp.results import (elicitation_answer, elicitation_questions, outcome,
                                   progress_fraction, progress_label, result_json)


def call_result(**fields):
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(text="hello")], **fields)


def test_structured_content_and_is_error_are_kept() -> None:
    data = result_json(call_result(structured_content={"t": 21}))
    assert data == {"content": [{"type": "text", "text": "hello"}], "structuredContent": {"t": 21},
                    "isError": False}
    assert outcome(call_result()) == {"content": [{"type": "text", "text": "hello"}], "isError": False}


def test_an_is_error_result_is_a_failed_call_carrying_the_whole_result() -> None:
    with pytest.raises(ToolError) as caught:
        outcome(call_result(is_error=True, structured_content={"code": 7}))
    error = caught.value.to_json()
    assert error["kind"] == "tool" and error["message"] == "hello" and error["isError"] is True
    assert error["content"] == [{"type": "text", "text": "hello"}]
    assert error["structuredContent"] == {"code": 7}


def test_progress_becomes_a_fraction_with_a_label() -> None:
    assert progress_fraction(2, 4) == 0.5 and progress_fraction(9, 4) == 1.0
    assert progress_fraction(0.25, None) == 0.25 and progress_fraction(40, None) == 1.0
    assert progress_label(2, 4, None) == "2/4" and progress_label(3, None, "copying") == "copying"


class Params:
    def __init__(self, **fields) -> None:
        self.mode, self.message = "form", "Tell me"
        self.__dict__.update(fields)


SCHEMA = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "title": "Name", "description": "Your name"},
    "agree": {"type": "boolean"},
    "age": {"type": "integer", "minimum": 1, "maximum": 120, "default": 30},
    "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
    "pet": {"type": "string", "oneOf": [{"const": "cat", "title": "Cat"}, {"const": "dog", "title": "Dog"}]},
    "hobbies": {"type": "array", "items": {"enum": ["chess", "golf"]}},
}}


def test_an_elicitation_form_becomes_one_choice_question_per_field() -> None:
    questions = elicitation_questions("srv", Params(requested_schema=SCHEMA))
    by_name = {q["name"]: q for q in questions}
    assert questions[0]["question"].startswith("MCP server srv asks: Tell me\n\nName: Your name")
    assert by_name["name"]["allowFreeformInput"] and "options" not in by_name["name"]
    assert by_name["agree"]["options"] == [{"label": "Yes", "value": True}, {"label": "No", "value": False}]
    assert by_name["agree"]["question"].endswith("(optional)")
    assert by_name["age"]["options"] == [{"label": "30 (default)", "value": 30}]
    assert by_name["size"]["options"] == [{"label": "Small", "value": "s"}, {"label": "Medium", "value": "m"}]
    assert [o["value"] for o in by_name["pet"]["options"]] == ["cat", "dog"]
    assert by_name["hobbies"]["multiselect"] is True


def test_answers_are_turned_back_into_the_typed_object() -> None:
    questions = elicitation_questions("srv", Params(requested_schema=SCHEMA))
    action, content = elicitation_answer(questions, ["Ada", True, "42", "m", "dog", ["chess"]])
    assert action == "accept"
    assert content == {"name": "Ada", "agree": True, "age": 42, "size": "m", "pet": "dog",
                       "hobbies": ["chess"]}
    with pytest.raises(ValueError, match="age"):
        elicitation_answer(questions, ["Ada", True, "old", "m", "dog", []])
    with pytest.raises(ValueError, match="outside"):
        elicitation_answer(questions, ["Ada", True, "500", "m", "dog", []])
    with pytest.raises(ValueError, match="expected 6 answers"):
        elicitation_answer(questions, ["Ada"])


def test_a_url_elicitation_asks_to_open_the_link() -> None:
    questions = elicitation_questions("srv", Params(mode="url", url="https://example.com/auth"))
    assert "https://example.com/auth" in questions[0]["question"]
    assert elicitation_answer(questions, ["accept"]) == ("accept", {})
    assert elicitation_answer(questions, ["decline"]) == ("decline", {})
