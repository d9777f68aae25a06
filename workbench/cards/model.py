"""The typed model of a card document, as ``parse_card`` returns it and the faces draw it.

Every element and action keeps ``pointer``, the JSON pointer of the object it was read
from, so that a problem found later (an input's value, an action refused by the host)
names the place in the document. Texts are kept as the document wrote them: each face
makes them safe for its terminal (``workbench.text``) where it draws them.

A leaf: imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextBlock:
    """A run of text."""

    text: str
    size: str = "default"
    """``small``, ``default``, ``medium``, ``large`` or ``extraLarge``."""
    weight: str = "default"
    """``lighter``, ``default`` or ``bolder``."""
    color: str = "default"
    """``default``, ``dark``, ``light``, ``accent``, ``good``, ``warning`` or ``attention``."""
    is_subtle: bool = False
    wrap: bool = False
    pointer: str = ""


@dataclass(frozen=True)
class Fact:
    title: str
    value: str


@dataclass(frozen=True)
class FactSet:
    """Pairs of a title and a value, drawn as two columns."""

    facts: tuple[Fact, ...]
    pointer: str = ""


@dataclass(frozen=True)
class Table:
    """Rows of cells, each cell a list of (non-interactive) elements."""

    columns: int
    rows: tuple[tuple[tuple[CardElement, ...], ...], ...]
    first_row_as_header: bool = True
    pointer: str = ""


@dataclass(frozen=True)
class Container:
    """Elements grouped, with an optional style (``emphasis``, ``good``, ``attention``…)."""

    items: tuple[CardElement, ...]
    style: str = "default"
    pointer: str = ""


@dataclass(frozen=True)
class Column:
    items: tuple[CardElement, ...]
    width: str = "auto"
    """``auto``, ``stretch``, a weight (``"2"``) or pixels (``"80px"``): a hint only."""
    pointer: str = ""


@dataclass(frozen=True)
class ColumnSet:
    columns: tuple[Column, ...]
    style: str = "default"
    pointer: str = ""


@dataclass(frozen=True)
class Image:
    """An image carried in the document itself (a ``data:`` URL; nothing is fetched)."""

    media_type: str
    data: bytes
    alt_text: str = ""
    pointer: str = ""


@dataclass(frozen=True)
class TextInput:
    id: str
    label: str = ""
    value: str = ""
    placeholder: str = ""
    is_required: bool = False
    error_message: str = ""
    max_length: int | None = None
    is_multiline: bool = False
    pointer: str = ""


@dataclass(frozen=True)
class NumberInput:
    id: str
    label: str = ""
    value: float | None = None
    placeholder: str = ""
    is_required: bool = False
    error_message: str = ""
    min: float | None = None
    max: float | None = None
    pointer: str = ""


@dataclass(frozen=True)
class _TextRangeInput:
    """The fields a date and a time input share: a value written as text and the
    earliest and latest it may be, written alike."""

    id: str
    label: str = ""
    value: str = ""
    placeholder: str = ""
    is_required: bool = False
    error_message: str = ""
    min: str = ""
    max: str = ""
    pointer: str = ""


@dataclass(frozen=True)
class DateInput(_TextRangeInput):
    """A date, ``YYYY-MM-DD``; ``min``/``max`` in the same form."""


@dataclass(frozen=True)
class TimeInput(_TextRangeInput):
    """A time of day, ``HH:MM`` (24 hours); ``min``/``max`` in the same form."""


@dataclass(frozen=True)
class ToggleInput:
    """On or off; its value is ``value_on`` or ``value_off`` (``"true"``/``"false"``)."""

    id: str
    title: str
    label: str = ""
    value: str = "false"
    value_on: str = "true"
    value_off: str = "false"
    is_required: bool = False
    error_message: str = ""
    pointer: str = ""

    @property
    def on(self) -> bool:
        return self.value == self.value_on


@dataclass(frozen=True)
class Choice:
    title: str
    value: str


@dataclass(frozen=True)
class ChoiceSetInput:
    """One choice, or several (``is_multi_select``; the value is the chosen values joined
    with commas, as Adaptive Cards has it)."""

    id: str
    choices: tuple[Choice, ...]
    label: str = ""
    value: str = ""
    placeholder: str = ""
    is_required: bool = False
    error_message: str = ""
    is_multi_select: bool = False
    style: str = "compact"
    """``compact`` (a drop-down) or ``expanded`` (every choice shown)."""
    pointer: str = ""


@dataclass(frozen=True)
class ExecuteAction:
    """A button that asks the host to run ``verb`` with ``data`` and the inputs' values.

    ``verb`` names a tool of the same extension or an action of the same plugin; the
    host decides, the card only asks.
    """

    title: str
    verb: str
    data: dict[str, Any] = field(default_factory=dict)
    associated_inputs: str = "auto"
    """``auto``: every input of the card is merged into the data; ``none``: none is."""
    style: str = "default"
    """``default``, ``positive`` or ``destructive``."""
    is_enabled: bool = True
    tooltip: str = ""
    pointer: str = ""


@dataclass(frozen=True)
class OpenUrlAction:
    """A link, shown to the person; never opened by the workbench itself."""

    title: str
    url: str
    tooltip: str = ""
    pointer: str = ""


@dataclass(frozen=True)
class ActionSet:
    actions: tuple[CardAction, ...]
    pointer: str = ""


CardInput = TextInput | NumberInput | DateInput | TimeInput | ToggleInput | ChoiceSetInput
"""Every input element: each has an ``id`` unique in its card."""

CardAction = ExecuteAction | OpenUrlAction

CardElement = (TextBlock | FactSet | Table | Container | ColumnSet | Image | TextInput | NumberInput
               | DateInput | TimeInput | ToggleInput | ChoiceSetInput | ActionSet)

INPUT_TYPES = (TextInput, NumberInput, DateInput, TimeInput, ToggleInput, ChoiceSetInput)


@dataclass(frozen=True)
class Card:
    """A parsed, checked card document."""

    body: tuple[CardElement, ...]
    actions: tuple[CardAction, ...] = ()
    version: str = "1.5"
    fallback_text: str = ""

    def elements(self) -> Iterator[CardElement]:
        """Every element of the card, depth first in document order (cells included)."""
        stack: list[CardElement] = list(reversed(self.body))
        while stack:
            element = stack.pop()
            yield element
            stack.extend(reversed(children(element)))

    def inputs(self) -> list[CardInput]:
        """The card's inputs, in document order."""
        return [element for element in self.elements() if isinstance(element, INPUT_TYPES)]

    def all_actions(self) -> list[CardAction]:
        """Every action of the card: its ActionSets' and its own, in document order."""
        found: list[CardAction] = []
        for element in self.elements():
            if isinstance(element, ActionSet):
                found.extend(element.actions)
        return found + list(self.actions)


def children(element: CardElement) -> list[CardElement]:
    """The elements directly inside ``element`` (a table's cells' items, row by row)."""
    if isinstance(element, Container):
        return list(element.items)
    if isinstance(element, ColumnSet):
        return [item for column in element.columns for item in column.items]
    if isinstance(element, Table):
        return [item for row in element.rows for cell in row for item in cell]
    return []
