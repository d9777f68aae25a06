"""One checker for a form's answers, the TUI's and headless: count, option values (not
labels), accept/reject, table shape, optional questions left empty; each refusal names
the question."""

from __future__ import annotations

import json

import pytest

from workbench.core.answers import AnswerProblem, check_answers, check_proposal_answer
from workbench.events import AskUserRequest, RequestDenied, ScheduleProposalRequest
from workbench.headless.responder import HeadlessResponder, load_answers
from workbench.mcp.results import elicitation_answer, elicitation_questions

COLOUR = {"question": "Which colour?", "options": [{"label": "Red", "value": "r"},
                                                   {"label": "Green", "value": "g"}]}
TOGGLE = {"question": "Notify?", "options": [{"label": "Yes", "value": True},
                                             {"label": "No", "value": False}]}
TAGS = {"question": "Tags?", "multiselect": True, "options": [{"label": "A", "value": 1},
                                                              {"label": "B", "value": 2}]}
OWN = {"question": "Name?", "options": [{"label": "Ann", "value": "ann"}], "allowFreeformInput": True}
TEXT = {"question": "Why?"}
DIFF = {"question": "Apply this?", "kind": "diff", "before": "a", "after": "b"}
FILES = {"question": "Which file?", "kind": "files", "entries": [{"path": "/tmp/a.txt", "label": "A"}]}
IMAGE = {"question": "Keep it?", "kind": "image", "dataB64": "", "actions": [{"label": "Keep", "value": "k"}]}
TABLE = {"question": "Fix the rows", "kind": "table", "columns": ["name", "qty"], "rows": [["nut", "2"]]}
FORM = [COLOUR, TOGGLE, TAGS, OWN, TEXT, DIFF, FILES, IMAGE, TABLE]
GOOD = ["g", False, [2, 1], "Bob", "because", "reject", "/tmp/a.txt", "k",
        [{"name": "bolt", "qty": "3"}]]


def test_answers_that_fit_pass_as_they_are():
    assert check_answers(FORM, GOOD) == GOOD


@pytest.mark.parametrize("index, answer, message", [
    (0, "Red", "question 1 ('Which colour?'): \"Red\" is the label of an option; answer with its value, \"r\""),
    (0, "blue", "question 1 ('Which colour?'): \"blue\" is not one of the options (\"r\", \"g\")"),
    (1, 0, "question 2 ('Notify?'): 0 is not one of the options (true, false)"),
    (1, "Yes", "answer with its value, true"),
    (2, 1, "question 3 ('Tags?') takes several answers: give a list, not 1"),
    (2, [1, 3], "question 3 ('Tags?'): 3 is not one of the options (1, 2)"),
    (3, ["x"], "question 4 ('Name?') takes one answer, not a list"),
    (4, None, "question 5 ('Why?') needs an answer"),
    (4, 7, "question 5 ('Why?') is answered with text, not 7"),
    (5, "yes", "question 6 ('Apply this?'): a change is answered \"accept\" or \"reject\", not \"yes\""),
    (6, "/etc/passwd", "question 7 ('Which file?'): \"/etc/passwd\" is not one of the files offered"),
    (7, "Keep", "question 8 ('Keep it?'): \"Keep\" is the label of an option; answer with its value, \"k\""),
    (8, {"name": "x"}, "question 9 ('Fix the rows') is a table: answer with a list of rows"),
    (8, [{"name": "x"}], "question 9 ('Fix the rows'): row 1 has no 'qty'; the columns are name, qty"),
    (8, [{"name": "x", "qty": "1", "colour": "red"}], "row 1 has 'colour', not a column"),
    (8, [{"name": "x", "qty": 1}], "row 1's 'qty' must be text, not 1"),
])
def test_an_answer_that_does_not_fit_is_refused_naming_its_question(index, answer, message):
    answers = list(GOOD)
    answers[index] = answer
    with pytest.raises(AnswerProblem) as refused:
        check_answers(FORM, answers)
    assert message in refused.value.message
    assert refused.value.index == index


def test_the_count_must_match_the_questions():
    with pytest.raises(AnswerProblem, match="the form has 9 questions; 8 answers given"):
        check_answers(FORM, GOOD[:-1])
    with pytest.raises(AnswerProblem, match="a list, one per question"):
        check_answers(FORM, {"colour": "g"})


def test_an_optional_elicitation_field_may_be_left_empty():
    class Params:
        message = "Tell us"
        mode = "form"
        requested_schema = {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}

    questions = elicitation_questions("srv", Params())
    assert [q.get("optional", False) for q in questions] == [False, True]
    assert check_answers(questions, ["Ann", None]) == ["Ann", None]
    assert check_answers(questions, ["Ann", ""]) == ["Ann", None]
    assert elicitation_answer(questions, ["Ann", None]) == ("accept", {"name": "Ann"})
    with pytest.raises(AnswerProblem, match="question 1 .* needs an answer"):
        check_answers(questions, [None, "3"])


def test_a_schedule_proposal_is_accepted_edited_or_declined():
    draft = {"title": "news", "prompt": "summarize", "cron": "0 9 * * *"}
    assert check_proposal_answer(draft, True) == {"accepted": True, "draft": draft}
    assert check_proposal_answer(draft, {"accepted": True, "draft": {"title": "daily"}}) == {
        "accepted": True, "draft": {**draft, "title": "daily"}}
    assert check_proposal_answer(draft, False)["accepted"] is False
    with pytest.raises(AnswerProblem, match="has no field 'colour'; it has title, prompt, cron"):
        check_proposal_answer(draft, {"accepted": True, "draft": {"colour": "red"}})
    with pytest.raises(AnswerProblem, match="answered true, false or"):
        check_proposal_answer(draft, "yes")


async def test_headless_answers_forms_and_proposals_in_order_checked(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([["g"], {"accepted": True, "draft": {"title": "daily"}}, ["Red"]]))
    responder = HeadlessResponder(answers=load_answers(path))
    form = AskUserRequest(tool="t.pick", call_id="c", questions=[COLOUR])
    proposal = ScheduleProposalRequest(tool="t.plan", draft={"title": "news", "prompt": "p"})
    assert await responder.answer(form) == ["g"]
    assert await responder.answer(proposal) == {"accepted": True,
                                                "draft": {"title": "daily", "prompt": "p"}}
    with pytest.raises(RequestDenied, match="the answers file's answers to t.pick's form: "
                                            "question 1 .* is the label of an option"):
        await responder.answer(form)
    mixed = HeadlessResponder(answers=[["g"]])
    with pytest.raises(RequestDenied, match="next entry answers a form, but t.plan proposes a schedule"):
        await mixed.answer(proposal)
    with pytest.raises(RequestDenied, match="no answer for this schedule proposal"):
        await HeadlessResponder().answer(proposal)


async def test_a_delegate_answers_a_schedule_proposal(tmp_path):
    script = tmp_path / "delegate.py"
    script.write_text("import json, sys\nrequest = json.load(sys.stdin)\n"
                      "assert request['type'] == 'schedule_proposal'\n"
                      "print(json.dumps({'accepted': True, 'draft': {'title': request['draft']['title'] + '!'}}))\n")
    import sys
    responder = HeadlessResponder(f"delegate:{sys.executable} {script}")
    proposal = ScheduleProposalRequest(tool="t.plan", draft={"title": "news", "prompt": "p"})
    assert await responder.answer(proposal) == {"accepted": True, "draft": {"title": "news!", "prompt": "p"}}
