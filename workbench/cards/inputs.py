"""What a person entered in a card's inputs: checked against each input's declaration, and
merged into the data of the ``Action.Execute`` they chose.

The values an action carries are typed as a tool's JSON Schema expects them: text for
``Input.Text``, ``Input.Date`` (``YYYY-MM-DD``) and ``Input.Time`` (``HH:MM``), a number
for ``Input.Number`` (a whole number where it is one), the toggle's ``valueOn`` or
``valueOff``, and for ``Input.ChoiceSet`` the chosen value (several joined with commas,
as Adaptive Cards has it). An input left empty that is not required is left out.

A leaf: imports the standard library and the card model only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.cards.model import (
    Card,
    CardInput,
    ChoiceSetInput,
    DateInput,
    ExecuteAction,
    NumberInput,
    TextInput,
    TimeInput,
    ToggleInput,
)
from workbench.cards.parse import valid_date, valid_time


@dataclass(frozen=True)
class InputProblem:
    """One input whose value cannot be sent."""

    id: str
    pointer: str
    """The input's JSON pointer in the card document."""
    message: str

    def __str__(self) -> str:
        return f"{self.id}: {self.message}"


def default_values(card: Card) -> dict[str, Any]:
    """The value each input of ``card`` starts with, as a face would collect it."""
    values: dict[str, Any] = {}
    for item in card.inputs():
        if isinstance(item, NumberInput):
            values[item.id] = "" if item.value is None else _number_text(item.value)
        elif isinstance(item, ToggleInput):
            values[item.id] = item.on
        else:
            values[item.id] = item.value
    return values


def input_values(card: Card, entered: Mapping[str, Any]) -> tuple[dict[str, Any], list[InputProblem]]:
    """The values to send for ``card``'s inputs, and what is wrong with them.

    Args:
        card: The card whose inputs they are.
        entered: What a face collected, by input id: text (or a number) for text, number,
            date and time inputs, true/false (or the value itself) for a toggle, a value or
            a list of values for a choice set. An input not named keeps its own value.

    Returns:
        ``(values, problems)``: the typed values by input id, and one problem for each
        input whose value is missing (``isRequired``) or not valid; no values are to be
        sent while there are problems.
    """
    values: dict[str, Any] = {}
    problems: list[InputProblem] = []
    known = {item.id for item in card.inputs()}
    for key in entered:
        if key not in known:
            problems.append(InputProblem(str(key), "", "the card has no input of this id"))
    defaults = default_values(card)
    for item in card.inputs():
        raw = entered.get(item.id, defaults[item.id])
        try:
            value = _check(item, raw)
        except ValueError as exc:
            problems.append(InputProblem(item.id, item.pointer, item.error_message or str(exc)))
            continue
        if value is None:
            if item.is_required:
                problems.append(InputProblem(item.id, item.pointer,
                                             item.error_message or f"{_name(item)} is required"))
            continue
        values[item.id] = value
    return values, problems


def action_data(action: ExecuteAction, values: Mapping[str, Any]) -> dict[str, Any]:
    """The data ``action`` sends: its own, with the inputs' ``values`` merged in (an
    input's value takes the place of a key of the same name) unless its
    ``associatedInputs`` is ``none``."""
    data = dict(action.data)
    if action.associated_inputs == "auto":
        data.update(values)
    return data


def _name(item: CardInput) -> str:
    return item.label or item.id


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _check(item: CardInput, raw: Any) -> Any:
    """The value to send for ``item``, None where it is empty; ValueError where not valid."""
    if isinstance(item, ToggleInput):
        if isinstance(raw, bool):
            return item.value_on if raw else item.value_off
        if raw in (item.value_on, item.value_off):
            return raw
        raise ValueError(f"{_name(item)} is {item.value_on!r} or {item.value_off!r}")
    if isinstance(item, ChoiceSetInput):
        return _choice(item, raw)
    if isinstance(item, NumberInput):
        return _number(item, raw)
    if not isinstance(raw, str):
        raise ValueError(f"{_name(item)} is text")
    if raw == "":
        return None
    if isinstance(item, TextInput):
        if not item.is_multiline and ("\n" in raw or "\r" in raw):
            raise ValueError(f"{_name(item)} is one line")
        if item.max_length is not None and len(raw) > item.max_length:
            raise ValueError(f"{_name(item)} is at most {item.max_length} characters")
        return raw
    if isinstance(item, DateInput):
        if not valid_date(raw):
            raise ValueError(f"{_name(item)} is a date YYYY-MM-DD")
    elif isinstance(item, TimeInput) and not valid_time(raw):
        raise ValueError(f"{_name(item)} is a time HH:MM")
    if item.min and raw < item.min:
        raise ValueError(f"{_name(item)} is {item.min} or later")
    if item.max and raw > item.max:
        raise ValueError(f"{_name(item)} is {item.max} or earlier")
    return raw


def _number(item: NumberInput, raw: Any) -> int | float | None:
    if isinstance(raw, bool):
        raise ValueError(f"{_name(item)} is a number")
    if isinstance(raw, str):
        text = raw.strip()
        if text == "":
            return None
        try:
            number = float(text) if any(mark in text for mark in ".eE") else int(text)
        except ValueError:
            raise ValueError(f"{_name(item)} is a number") from None
    elif isinstance(raw, (int, float)):
        number = raw
    else:
        raise ValueError(f"{_name(item)} is a number")
    if isinstance(number, float):
        if not math.isfinite(number):
            raise ValueError(f"{_name(item)} is a finite number")
        if number.is_integer() and abs(number) < 2**53:
            number = int(number)
    if item.min is not None and number < item.min:
        raise ValueError(f"{_name(item)} is at least {_number_text(item.min)}")
    if item.max is not None and number > item.max:
        raise ValueError(f"{_name(item)} is at most {_number_text(item.max)}")
    return number


def _choice(item: ChoiceSetInput, raw: Any) -> str | None:
    if isinstance(raw, str):
        chosen = [part for part in raw.split(",")] if item.is_multi_select and raw else ([raw] if raw else [])
    elif isinstance(raw, (list, tuple)) and all(isinstance(part, str) for part in raw):
        chosen = list(raw)
    else:
        raise ValueError(f"{_name(item)} is one of its choices")
    if not chosen:
        return None
    if len(chosen) > 1 and not item.is_multi_select:
        raise ValueError(f"{_name(item)} is one choice")
    allowed = {choice.value for choice in item.choices}
    for part in chosen:
        if part not in allowed:
            raise ValueError(f"{part!r} is not one of the choices of {_name(item)}")
    return ",".join(chosen)
