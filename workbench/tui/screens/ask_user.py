"""The ask-user form for ``choice`` questions: pick an option, several, or type an answer.

A tool's form may hold several questions; ``TuiResponder`` shows one screen per
question, in order. The other question kinds (diff, files, image, table) are refused
by the responder until they have screens of their own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, SelectionList
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class ChoiceAnswer:
    """What the person chose; a wrapper so that a chosen ``null`` differs from no answer."""

    value: Any


class ChoiceScreen(ModalScreen[ChoiceAnswer | None]):
    """One ``choice`` question; dismisses with a ``ChoiceAnswer``, or None when escaped.

    | Key | Does |
    | --- | --- |
    | enter | Choose the highlighted option (one choice), or send the typed answer |
    | space | Tick or untick an option (several choices) |
    | ctrl+s | Send the ticked options (several choices) |
    | escape | Close without answering |

    Args:
        tool: The tool that asks.
        question: The question, as the toolkit sends it.
        position: ``(index, total)`` of this question in its form, from 1.
    """

    CSS_PATH = "ask_user.tcss"
    BINDINGS = [
        Binding("escape", "dismiss_form", "Close"),
        Binding("ctrl+s", "submit_selection", "Send", show=False),
    ]

    def __init__(self, tool: str, question: dict[str, Any], position: tuple[int, int] = (1, 1)) -> None:
        super().__init__()
        self.tool = tool
        self.question = question
        self.position = position
        self.options: list[dict[str, Any]] = [
            option for option in question.get("options") or [] if isinstance(option, dict)]
        self.multiselect = bool(question.get("multiselect")) and bool(self.options)
        self.freeform = bool(question.get("allowFreeformInput")) or not self.options

    def compose(self) -> ComposeResult:
        index, total = self.position
        with Vertical(id="ask-dialog") as dialog:
            dialog.border_title = f"{self.tool} asks"
            if total > 1:
                dialog.border_subtitle = f"question {index} of {total}"
            yield Label(Text(str(self.question.get("question", ""))), id="ask-question")
            if self.multiselect:
                yield SelectionList[int](*(
                    (self._prompt(option), position) for position, option in enumerate(self.options)),
                    id="ask-selection")
                yield Button("Send (ctrl+s)", id="ask-send", variant="primary", compact=True)
            elif self.options:
                yield OptionList(*(Option(self._prompt(option), id=str(position))
                                   for position, option in enumerate(self.options)),
                                 id="ask-options")
            if self.freeform:
                yield Input(placeholder="Type an answer and press Enter", id="ask-input")

    @staticmethod
    def _prompt(option: dict[str, Any]) -> Text:
        label = option.get("label")
        if label is None:
            label = json.dumps(option.get("value"), ensure_ascii=False, default=str)
        prompt = Text(str(label))
        if option.get("description"):
            prompt.append(f"  {option['description']}", style="dim")
        return prompt

    def _value(self, position: int) -> Any:
        option = self.options[position]
        return option.get("value", option.get("label"))

    @on(OptionList.OptionSelected, "#ask-options")
    def choose_option(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(ChoiceAnswer(self._value(int(event.option.id or 0))))

    @on(Input.Submitted, "#ask-input")
    def send_text(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(ChoiceAnswer(event.value))

    @on(Button.Pressed, "#ask-send")
    def send_button(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_submit_selection()

    def action_submit_selection(self) -> None:
        """Send the ticked options (several choices)."""
        if self.multiselect:
            chosen = self.query_one(SelectionList).selected
            self.dismiss(ChoiceAnswer([self._value(position) for position in sorted(chosen)]))

    def action_dismiss_form(self) -> None:
        """Close without answering."""
        self.dismiss(None)
