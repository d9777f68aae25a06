"""The ask-user form: every question a tool asks at once, in one dialog.

The five kinds (choice, diff, files, image, table) are widgets of their own in
``workbench/tui/forms``; this screen lays them out in order, moves focus on as each
is answered, and sends the answers only when every question has one. Escape closes
the form without answering, which the tool sees as a cancellation.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.core.answers import AnswerProblem, check_answers
from workbench.tui.forms.kinds import question_for
from workbench.tui.forms.question import Question, Unanswered


class MissingAnswer(Exception):
    """A question of the form has no answer yet.

    Args:
        question: The first such question.
        why: What it is missing (``pick one``).
    """

    def __init__(self, question: Question, why: str) -> None:
        super().__init__(why)
        self.question = question
        self.why = why


class AskUserScreen(ModalScreen[list[Any] | None]):
    """All of a tool's questions; dismisses with one answer per question, in order,
    or None when closed without answering.

    | Key | Does |
    | --- | --- |
    | tab, shift+tab | Next or previous field |
    | enter, space | Pick, tick or press what has focus |
    | ctrl+s | Send the answers |
    | escape | Close without answering (the tool is told it was cancelled) |

    Args:
        tool: The tool that asks.
        questions: The questions, as the toolkit sends them.
    """

    CSS_PATH = "ask_user.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "send", "Send", priority=True),
    ]

    def __init__(self, tool: str, questions: list[dict[str, Any]]) -> None:
        super().__init__()
        self.tool = tool
        self.questions = [question if isinstance(question, dict) else {} for question in questions]
        self.problem = ""
        """What the form said is missing at the last try to send (empty: nothing yet)."""

    def compose(self) -> ComposeResult:
        total = len(self.questions)
        with Vertical(id="ask-dialog") as dialog:
            dialog.border_title = f"{self.tool} asks"
            if total > 1:
                dialog.border_subtitle = f"{total} questions"
            with VerticalScroll(id="ask-questions", can_focus=False):
                for number, question in enumerate(self.questions, start=1):
                    yield question_for(question, number if total > 1 else None)
            yield Static("", id="ask-problem")
            with Horizontal(id="ask-buttons"):
                yield Static(Content.styled("Tab moves · Ctrl+S sends · Esc cancels", "$text-muted"),
                             id="ask-keys")
                yield Button("Send", id="ask-send", variant="primary", compact=True)
                yield Button("Cancel", id="ask-cancel", compact=True)

    def on_mount(self) -> None:
        first = self.question_widgets[0].first_focus() if self.question_widgets else None
        (first or self.query_one("#ask-send", Button)).focus()

    @property
    def question_widgets(self) -> list[Question]:
        return list(self.query_one("#ask-questions").query_children(Question))

    # --- moving on ----------------------------------------------------------

    @on(Question.Answered)
    def _next_question(self, event: Question.Answered) -> None:
        """Focus the next question, or Send after the last one."""
        event.stop()
        questions = self.question_widgets
        event.question.remove_class("-unanswered")
        index = questions.index(event.question)
        target = questions[index + 1].first_focus() if index + 1 < len(questions) else None
        target = target or self.query_one("#ask-send", Button)
        target.focus()

    # --- sending ------------------------------------------------------------

    def answers(self) -> list[Any]:
        """One answer per question, in order.

        Raises:
            MissingAnswer: Naming the first question with no answer yet.
        """
        found = []
        widgets = self.question_widgets
        for question in widgets:
            try:
                found.append(question.answer())
            except Unanswered as exc:
                if not question.question.get("optional"):
                    raise MissingAnswer(question, str(exc)) from None
                found.append(None)  # an optional question left empty
        try:
            return check_answers([question.question for question in widgets], found)
        except AnswerProblem as exc:
            where = widgets[exc.index] if exc.index is not None else widgets[0]
            raise MissingAnswer(where, exc.message) from None

    def action_send(self) -> None:
        """Send the answers, or point at the first question without one."""
        try:
            answers = self.answers()
        except MissingAnswer as missing:
            question = missing.question
            for widget in self.question_widgets:
                widget.set_class(widget is question, "-unanswered")
            where = f"Question {question.number}" if question.number else "The question"
            self.problem = f"{where} has no answer yet: {missing.why}."
            problem = self.query_one("#ask-problem", Static)
            problem.update(Content.styled(self.problem, "$text-error"))
            problem.add_class("-shown")
            question.scroll_visible()
            target = question.first_focus()
            if target is not None:
                target.focus()
            return
        self.dismiss(answers)

    def action_cancel(self) -> None:
        """Close the form without answering."""
        self.dismiss(None)

    @on(Button.Pressed, "#ask-send")
    def _send_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_send()

    @on(Button.Pressed, "#ask-cancel")
    def _cancel_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_cancel()
