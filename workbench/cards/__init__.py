"""Card documents: the documented subset of Adaptive Cards 1.5 that extensions' pages,
plugins' panes and cards, and approval cards are written in, parsed and checked into a
typed model that the faces draw with their own widgets.

``parse_card`` takes a JSON value from outside and returns a ``Card`` (every refusal a
``CardError`` naming the JSON pointer); ``plain_text`` draws one for the headless face;
``input_values`` checks what a person typed into a card's inputs and ``action_data``
merges it into an ``Action.Execute``'s data. The TUI's ``CardView`` draws the same model.

Pure data and checks: this package imports the standard library and the leaves
(``workbench.text``, ``workbench.errors``, ``workbench.jsontext``) only; never textual.
"""

from __future__ import annotations

from workbench.cards.inputs import InputProblem, action_data, default_values, input_values
from workbench.cards.model import (
    INPUT_TYPES,
    ActionSet,
    Card,
    CardAction,
    CardElement,
    CardInput,
    Choice,
    ChoiceSetInput,
    Column,
    ColumnSet,
    Container,
    DateInput,
    ExecuteAction,
    Fact,
    FactSet,
    Image,
    NumberInput,
    OpenUrlAction,
    Table,
    TextBlock,
    TextInput,
    TimeInput,
    ToggleInput,
)
from workbench.cards.parse import LIMITS, CardError, CardLimits, parse_card
from workbench.cards.plain import cell_text, plain_text

__all__ = [
    "INPUT_TYPES", "LIMITS", "ActionSet", "Card", "CardAction", "CardElement", "CardError", "CardInput",
    "CardLimits", "Choice", "ChoiceSetInput", "Column", "ColumnSet", "Container", "DateInput",
    "ExecuteAction", "Fact", "FactSet", "Image", "InputProblem", "NumberInput", "OpenUrlAction",
    "Table", "TextBlock", "TextInput", "TimeInput", "ToggleInput", "action_data", "cell_text",
    "default_values",
    "input_values", "parse_card", "plain_text",
]
