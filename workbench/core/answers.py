"""The answers to an ask-user form, checked against its questions.

One checker for both faces: the TUI form runs what its widgets hold through
``check_answers`` before sending, and ``workbench run`` runs the answers of
``--answers FILE`` or a delegate through it before a tool sees them. What it holds a
form to:

- one answer per question;
- ``choice``: an option's *value* (not its label; a label given is named as such), a
  list of values with ``multiselect``, or text when ``allowFreeformInput`` is set or
  there are no options;
- ``files``: one of the entries' paths (a list with ``multiselect``);
- ``diff``: ``"accept"`` or ``"reject"``;
- ``image``: one of the actions' values;
- ``table``: a list of rows, each an object with exactly the table's columns, of text;
- a question marked ``optional`` may be left empty (``null`` or ``""``), answered None.

A refusal is an ``AnswerProblem`` that names the question by its number and text.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.errors import WorkbenchError

DIFF_ANSWERS = ("accept", "reject")


class AnswerProblem(WorkbenchError):
    """An answer that does not fit its question; the message names the question."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values are: ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _name(question: dict[str, Any], index: int) -> str:
    text = str(question.get("question") or "").strip().splitlines()
    head = text[-1] if text else ""
    if len(head) > 60:
        head = head[:57] + "…"
    return f"question {index + 1} ({head!r})" if head else f"question {index + 1}"


def _options(question: dict[str, Any], key: str, value_key: str) -> list[tuple[str | None, Any]]:
    """``(label, value)`` of each entry under ``key``."""
    found = []
    for entry in question.get(key) or []:
        if isinstance(entry, dict):
            found.append((entry.get("label"), entry.get(value_key, entry.get("label"))))
    return found


def _pick(where: str, entries: list[tuple[str | None, Any]], answer: Any, freeform: bool,
          what: str = "options") -> Any:
    if any(_same(answer, value) for _, value in entries):
        return answer
    if freeform and isinstance(answer, str) and answer.strip():
        return answer
    for label, value in entries:
        if label is not None and _same(answer, label):
            raise AnswerProblem(f"{where}: {_shown(answer)} is the label of an option; "
                                f"answer with its value, {_shown(value)}")
    values = ", ".join(_shown(value) for _, value in entries) or "none"
    extra = " or your own text" if freeform else ""
    raise AnswerProblem(f"{where}: {_shown(answer)} is not one of the {what} ({values}){extra}")


def check_answer(question: dict[str, Any], answer: Any, index: int = 0) -> Any:
    """The answer to ``question`` as the tool is handed it.

    Raises:
        AnswerProblem: It does not fit (see the module docstring).
    """
    where = _name(question, index)
    if answer is None or answer == "" or answer == []:
        if question.get("optional"):
            return None
        if answer == [] and question.get("multiselect"):
            return []
        if answer is None or answer == "":
            raise AnswerProblem(f"{where} needs an answer")
    kind = question.get("kind") or "choice"
    if kind == "diff":
        if answer not in DIFF_ANSWERS:
            raise AnswerProblem(f"{where}: a change is answered \"accept\" or \"reject\", "
                                f"not {_shown(answer)}")
        return answer
    if kind == "image":
        actions = _options(question, "actions", "value")
        if not actions:
            raise AnswerProblem(f"{where}: the image has no actions to answer with")
        return _pick(where, actions, answer, False, "actions")
    if kind == "table":
        return _table(where, question, answer)
    if kind == "files":
        entries = [(e.get("label"), e.get("path")) for e in question.get("entries") or []
                   if isinstance(e, dict)]
        if not entries:
            raise AnswerProblem(f"{where}: there are no files to pick from")
        freeform = False
        what = "files offered"
    else:
        entries = _options(question, "options", "value")
        freeform = bool(question.get("allowFreeformInput")) or not entries
        what = "options"
    if question.get("multiselect") and entries:
        if not isinstance(answer, list):
            raise AnswerProblem(f"{where} takes several answers: give a list, not {_shown(answer)}")
        return [_pick(where, entries, item, freeform, what) for item in answer]
    if isinstance(answer, list):
        raise AnswerProblem(f"{where} takes one answer, not a list")
    if not entries:
        if not isinstance(answer, str):
            raise AnswerProblem(f"{where} is answered with text, not {_shown(answer)}")
        return answer
    return _pick(where, entries, answer, freeform, what)


def _table(where: str, question: dict[str, Any], answer: Any) -> list[dict[str, str]]:
    columns = [str(c) for c in question.get("columns") or []] if isinstance(
        question.get("columns"), list) else []
    if not isinstance(answer, list):
        raise AnswerProblem(f"{where} is a table: answer with a list of rows, not {_shown(answer)}")
    for number, row in enumerate(answer, 1):
        if not isinstance(row, dict):
            raise AnswerProblem(f"{where}: row {number} must be an object of the columns "
                                f"({', '.join(columns)})")
        missing = [c for c in columns if c not in row]
        extra = [k for k in row if k not in columns]
        if missing or extra:
            said = (f"has no {missing[0]!r}" if missing else f"has {extra[0]!r}, not a column")
            raise AnswerProblem(f"{where}: row {number} {said}; the columns are "
                                f"{', '.join(columns) or 'none'}")
        bad = next((k for k, v in row.items() if not isinstance(v, str)), None)
        if bad is not None:
            raise AnswerProblem(f"{where}: row {number}'s {bad!r} must be text, not {_shown(row[bad])}")
    return answer


def check_answers(questions: list[dict[str, Any]], answers: Any) -> list[Any]:
    """Every answer of a form, checked (see the module docstring).

    Raises:
        AnswerProblem: A count that differs from the questions', or the first answer
            that does not fit its question.
    """
    if not isinstance(answers, list):
        raise AnswerProblem(f"a form's answers are a list, one per question, not {_shown(answers)}")
    if len(answers) != len(questions):
        raise AnswerProblem(f"the form has {len(questions)} question"
                            f"{'' if len(questions) == 1 else 's'}; {len(answers)} answer"
                            f"{'' if len(answers) == 1 else 's'} given")
    checked = []
    for index, (question, answer) in enumerate(zip(questions, answers)):
        try:
            checked.append(check_answer(question, answer, index))
        except AnswerProblem as exc:
            raise AnswerProblem(exc.message, index) from None
    return checked


def check_proposal_answer(draft: dict[str, Any], answer: Any) -> dict[str, Any]:
    """The answer to a schedule proposal given headlessly: ``true``/``false``, or
    ``{"accepted": bool, "draft": {field: value}}`` whose fields change the proposed
    draft; returns ``{"accepted", "draft"}`` (the draft itself is checked on saving).

    Raises:
        AnswerProblem: Not one of those shapes, or a field the draft does not have.
    """
    if isinstance(answer, bool):
        return {"accepted": answer, "draft": dict(draft)}
    if not isinstance(answer, dict) or not isinstance(answer.get("accepted"), bool):
        raise AnswerProblem("a schedule proposal is answered true, false or "
                            f"{{\"accepted\": true, \"draft\": {{…}}}}, not {_shown(answer)}")
    edits = answer.get("draft") or {}
    if not isinstance(edits, dict):
        raise AnswerProblem("a schedule proposal's \"draft\" must be an object of fields")
    unknown = [key for key in edits if key not in draft]
    if unknown:
        raise AnswerProblem(f"the schedule proposal has no field {unknown[0]!r}; it has "
                            f"{', '.join(draft)}")
    return {"accepted": answer["accepted"], "draft": {**draft, **edits}}
