"""Which widget asks which kind of question (``kind``; absent means ``choice``)."""

from __future__ import annotations

from typing import Any

from workbench.tui.forms.action_question import DiffQuestion, ImageQuestion
from workbench.tui.forms.pick_question import ChoiceQuestion, FilesQuestion
from workbench.tui.forms.question import Question
from workbench.tui.forms.table_question import TableQuestion

QUESTIONS: dict[str, type[Question]] = {
    "choice": ChoiceQuestion, "diff": DiffQuestion, "files": FilesQuestion,
    "image": ImageQuestion, "table": TableQuestion}


def question_for(question: dict[str, Any], number: int | None = None) -> Question:
    """The widget for ``question``; an unknown kind is asked as a choice (the core
    refuses unknown kinds before a form is shown)."""
    kind = str(question.get("kind") or "choice")
    return QUESTIONS.get(kind, ChoiceQuestion)(question, number)
