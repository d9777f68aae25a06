"""What every question of an ask-user form shares: its text, its answer, a message
when it has been answered, and the refusal when it has not.

A question widget never sends the form; it posts ``Question.Answered`` after a
deliberate act (Enter on an option, a pressed action button) and the form decides
where focus goes next.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static


class Unanswered(Exception):
    """A question still waiting for its answer; the message says what is missing."""


class Question(Vertical):
    """One question; subclasses add the widgets that take the answer.

    Args:
        question: The question as the tool sent it.
        number: Its place in the form, from 1; None to show no number (a lone question).
    """

    answer: Callable[[], Any]
    """Each kind's method giving the answer as the tool expects it; it raises
    ``Unanswered`` while nothing has been chosen."""

    DEFAULT_CSS = """
    Question {
        height: auto;
        margin-bottom: 1;
        & > .question--text {
            height: auto;
            text-style: bold;
        }
        & > .question--hint {
            height: auto;
            color: $text-muted;
        }
        &.-unanswered > .question--text {
            color: $text-error;
        }
    }
    """

    @dataclass
    class Answered(Message):
        """The person gave this question an answer on purpose (not by moving around)."""

        question: Question

    def __init__(self, question: dict[str, Any], number: int | None = None) -> None:
        super().__init__()
        self.question = question
        self.number = number

    @property
    def text(self) -> str:
        return str(self.question.get("question", ""))

    def compose(self) -> ComposeResult:
        prefix = f"{self.number}. " if self.number is not None else ""
        yield Static(Content(prefix + self.text), classes="question--text")
        yield from self.compose_answer()

    def compose_answer(self) -> ComposeResult:
        """The widgets that take the answer."""
        yield from ()

    def first_focus(self) -> Widget | None:
        """The widget to focus to answer this question."""
        for widget in self.query("*"):
            if widget.focusable:
                return widget
        return None

    def answered(self) -> None:
        """Tell the form this question was answered on purpose."""
        self.post_message(self.Answered(self))
