"""Questions answered with a button: ``diff`` (Accept or Reject) and ``image`` (the
tool's own action buttons).

Pressing a button marks it as the answer (✓) and the form moves on; the form is
sent with Send, so several questions can be answered before anything goes back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

from workbench.tui.forms.question import Question, Unanswered
from workbench.tui.widgets.bubbles.diff_view import DiffView
from workbench.tui.widgets.bubbles.image_view import image_view


class ActionButtons(Horizontal):
    """A row of buttons of which one is the answer.

    Args:
        actions: ``(label, value)`` pairs.
    """

    DEFAULT_CSS = """
    ActionButtons {
        height: auto;
        margin-top: 1;
        & > Button {
            margin-right: 2;
            min-width: 10;
        }
        & > Button.-chosen {
            text-style: bold;
        }
    }
    """

    @dataclass
    class Chosen(Message):
        """A button was pressed; ``value`` is its action's value."""

        buttons: ActionButtons
        value: Any

    def __init__(self, actions: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.actions = actions
        self.chosen: int | None = None
        """The index of the pressed button, if any."""

    def compose(self) -> ComposeResult:
        for index, (label, _value) in enumerate(self.actions):
            yield Button(Content(label), name=str(index), compact=True)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.choose(int(event.button.name or 0))

    def choose(self, index: int) -> None:
        """Mark action ``index`` as the answer."""
        self.chosen = index
        for position, button in enumerate(self.query(Button)):
            label = self.actions[position][0]
            button.set_class(position == index, "-chosen")
            button.variant = "primary" if position == index else "default"
            button.label = Content(f"✓ {label}" if position == index else label)
        self.post_message(self.Chosen(self, self.actions[index][1]))

    @property
    def value(self) -> Any:
        if self.chosen is None:
            raise Unanswered("press one of the buttons")
        return self.actions[self.chosen][1]


class ActionQuestion(Question):
    """A question whose answer is one of a row of buttons."""

    def actions(self) -> list[tuple[str, Any]]:
        return []

    def compose_buttons(self) -> ComposeResult:
        actions = self.actions()
        if actions:
            yield ActionButtons(actions)

    @on(ActionButtons.Chosen)
    def _chosen(self, event: ActionButtons.Chosen) -> None:
        event.stop()
        self.answered()

    def answer(self) -> Any:
        buttons = self.query(ActionButtons)
        if not buttons:
            raise Unanswered("there is nothing to choose")
        return buttons.first().value


class DiffQuestion(ActionQuestion):
    """A ``diff`` question: the change (``before``, ``after``, ``title?``) and Accept or
    Reject; the answer is ``"accept"`` or ``"reject"``.

    | Key | Does |
    | --- | --- |
    | up, down | Scroll the change (when it has focus) |
    | v | Unified or side by side |
    """

    BINDINGS = [Binding("v", "toggle_layout", "Unified / side by side")]
    DEFAULT_CSS = """
    DiffQuestion > .diff-question--title {
        height: auto;
        color: $text-muted;
    }
    DiffQuestion > VerticalScroll {
        height: auto;
        max-height: 12;
        background: $boost;
        scrollbar-size-vertical: 1;
        &:focus { background: $primary 10%; }
    }
    """

    def compose_answer(self) -> ComposeResult:
        title = str(self.question.get("title") or "").strip()
        if title:
            yield Static(Content(title), classes="diff-question--title")
        with VerticalScroll(can_focus=True):
            yield DiffView(str(self.question.get("before", "")), str(self.question.get("after", "")),
                           title or None)
        yield from self.compose_buttons()

    def actions(self) -> list[tuple[str, Any]]:
        return [("Accept", "accept"), ("Reject", "reject")]

    def action_toggle_layout(self) -> None:
        """Show the change side by side, or unified again."""
        view = self.query_one(DiffView)
        view.split = not view.split


class ImageQuestion(ActionQuestion):
    """An ``image`` question: the image (``dataB64``, ``mime``) and the tool's
    ``actions`` of ``{label, value}``; the answer is the pressed action's value."""

    DEFAULT_CSS = """
    ImageQuestion > ImageView {
        margin-top: 1;
    }
    """

    def compose_answer(self) -> ComposeResult:
        yield image_view(str(self.question.get("dataB64") or ""), max_width=40, max_height=8)
        yield from self.compose_buttons()

    def actions(self) -> list[tuple[str, Any]]:
        found = []
        for action in self.question.get("actions") or []:
            if isinstance(action, dict):
                value = action.get("value", action.get("label"))
                label = action.get("label")
                if label is None:
                    label = json.dumps(value, ensure_ascii=False, default=str)
                found.append((str(label), value))
        return found
