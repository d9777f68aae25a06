"""Questions answered by picking from a list: ``choice`` and ``files``.

A single pick is a radio list (arrows move, Enter or Space picks); several picks
are a checklist (Space or Enter ticks). A choice that allows free text gets a text
box; with a single pick, typing there picks the "Other" entry, so what the form
sends is always what is marked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Input, RadioButton, RadioSet, SelectionList

from workbench.tui.forms.question import Question, Unanswered
from workbench.tui.paths import shown_path

OTHER = "Other (type below)"


@dataclass(frozen=True)
class Entry:
    """One thing to pick: how it reads and what the tool gets back."""

    label: Content
    value: Any


def _label(title: str, description: str = "", detail: str = "") -> Content:
    parts: list[tuple[str, str] | str] = [title]
    if description:
        parts.append(("  " + description, "$text-muted"))
    if detail:
        parts.append(("  " + detail, "$text-muted italic"))
    return Content.assemble(*parts)


class PickQuestion(Question):
    """A question answered from ``entries``; one value, or a list with ``multiselect``.

    | Key | Does |
    | --- | --- |
    | up, down | Move in the list |
    | enter, space | Pick (one choice) or tick (several) |
    """

    DEFAULT_CSS = """
    PickQuestion {
        & > RadioSet, & > SelectionList {
            width: 1fr;
            height: auto;
            max-height: 10;
        }
        & > Input {
            margin-top: 1;
        }
    }
    """

    def __init__(self, question: dict[str, Any], number: int | None = None) -> None:
        super().__init__(question, number)
        self.entries = self.make_entries()
        self.multiselect = bool(question.get("multiselect")) and bool(self.entries)
        self.freeform = False

    def make_entries(self) -> list[Entry]:
        return []

    def compose_answer(self) -> ComposeResult:
        if self.multiselect:
            yield SelectionList[int](*((entry.label, index) for index, entry in enumerate(self.entries)),
                                     compact=True, classes="pick--list")
        elif self.entries:
            buttons = [RadioButton(entry.label) for entry in self.entries]
            if self.freeform:
                buttons.append(RadioButton(OTHER))
            yield RadioSet(*buttons, compact=True, classes="pick--list")
        if self.freeform:
            placeholder = "Your own answer" if self.entries else "Type your answer"
            yield Input(placeholder=placeholder, compact=True, classes="pick--text")

    # --- picking -------------------------------------------------------------

    @on(RadioSet.Changed)
    def _picked(self, event: RadioSet.Changed) -> None:
        event.stop()
        if not event.radio_set.has_focus:
            return  # picked by typing in the text box, not on purpose here
        if self.freeform and event.index == len(self.entries):
            self.query_one(".pick--text", Input).focus()  # "Other": now type it
        else:
            self.answered()

    @on(Input.Changed, ".pick--text")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self.freeform and self.entries and not self.multiselect and event.value.strip():
            radio = self.query_one(RadioSet)
            other = list(radio.query(RadioButton))[-1]
            if not other.value:
                other.value = True

    @on(Input.Submitted, ".pick--text")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.answered()

    def answer(self) -> Any:
        typed = self.query_one(".pick--text", Input).value if self.freeform else ""
        if self.multiselect:
            chosen = [self.entries[index].value
                      for index in sorted(self.query_one(SelectionList).selected)]
            return chosen + ([typed] if typed.strip() else [])
        if self.entries:
            index = self.query_one(RadioSet).pressed_index
            if index < 0:
                raise Unanswered("pick one")
            if index < len(self.entries):
                return self.entries[index].value
        if not typed.strip():
            raise Unanswered("type an answer")
        return typed


class ChoiceQuestion(PickQuestion):
    """A ``choice`` question: ``options`` of ``{label, description?, value}``, with
    ``multiselect`` and ``allowFreeformInput``; with no options, a text box alone."""

    def __init__(self, question: dict[str, Any], number: int | None = None) -> None:
        super().__init__(question, number)
        self.freeform = bool(question.get("allowFreeformInput")) or not self.entries

    def make_entries(self) -> list[Entry]:
        entries = []
        for option in self.question.get("options") or []:
            if not isinstance(option, dict):
                continue
            label = option.get("label")
            if label is None:
                label = json.dumps(option.get("value"), ensure_ascii=False, default=str)
            entries.append(Entry(_label(str(label), str(option.get("description") or "")),
                                 option.get("value", option.get("label"))))
        return entries


class FilesQuestion(PickQuestion):
    """A ``files`` question: ``entries`` of ``{path, label?, description?}``; the answer
    is the chosen path, or the paths with ``multiselect``."""

    def make_entries(self) -> list[Entry]:
        entries = []
        for entry in self.question.get("entries") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                continue
            path = entry["path"]
            label = entry.get("label")
            title = str(label) if label else shown_path(path)
            entries.append(Entry(_label(title, str(entry.get("description") or ""),
                                        shown_path(path) if label else ""), path))
        return entries

    def answer(self) -> Any:
        if not self.entries:
            raise Unanswered("there are no files to pick from")
        return super().answer()
