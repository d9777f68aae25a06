"""A card drawn as plain text, for the headless face and for logs.

Every text of the card goes through ``workbench.text.visible``: an escape sequence, a
carriage return or a bidi control in a card reaches no terminal as it is.

A leaf: imports the standard library, ``workbench.text`` and the card model only.
"""

from __future__ import annotations

from workbench.cards.model import (
    INPUT_TYPES,
    ActionSet,
    Card,
    CardAction,
    CardElement,
    CardInput,
    ChoiceSetInput,
    ColumnSet,
    Container,
    DateInput,
    ExecuteAction,
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
from workbench.text import visible


def plain_text(card: Card) -> str:
    """``card`` as lines of text: headings, facts aligned, tables with ``|`` between
    cells, inputs as ``label: value``, actions as ``[title]`` with their verb or link."""
    lines: list[str] = []
    for element in card.body:
        _element(element, lines, "")
    if card.actions:
        lines.append(_actions(card.actions))
    return "\n".join(lines)


def cell_text(items: tuple[CardElement, ...]) -> str:
    """The elements of a table cell as one line of text (not yet made safe)."""
    parts: list[str] = []
    for item in items:
        if isinstance(item, TextBlock):
            parts.append(" ".join(item.text.split()))
        elif isinstance(item, FactSet):
            parts.append("; ".join(f"{fact.title}: {fact.value}" for fact in item.facts))
        elif isinstance(item, Image):
            parts.append(f"[{item.alt_text or 'image'}]")
        elif isinstance(item, Container):
            parts.append(cell_text(item.items))
        elif isinstance(item, ColumnSet):
            parts.append(" ".join(cell_text(column.items) for column in item.columns))
        elif isinstance(item, INPUT_TYPES):
            parts.append(f"[{_cell_value(item)}]")
    return " ".join(part for part in parts if part)


def _cell_value(item: CardInput) -> str:
    """An input in a table's cell as its value (not yet made safe)."""
    if isinstance(item, ToggleInput):
        return "x" if item.on else " "
    if isinstance(item, NumberInput):
        return "" if item.value is None else f"{item.value:g}"
    return item.value


def _element(element: CardElement, lines: list[str], indent: str) -> None:
    if isinstance(element, TextBlock):
        text = visible(element.text)
        lines.extend(indent + line for line in text.split("\n"))
    elif isinstance(element, FactSet):
        width = max((len(visible(fact.title, one_line=True)) for fact in element.facts), default=0)
        for fact in element.facts:
            title = visible(fact.title, one_line=True)
            lines.append(f"{indent}{title}:{' ' * (width - len(title))} {visible(fact.value, one_line=True)}")
    elif isinstance(element, Table):
        _table(element, lines, indent)
    elif isinstance(element, Container):
        for item in element.items:
            _element(item, lines, indent)
    elif isinstance(element, ColumnSet):
        for column in element.columns:
            for item in column.items:
                _element(item, lines, indent)
    elif isinstance(element, Image):
        lines.append(f"{indent}[image: {visible(element.alt_text, one_line=True) or element.media_type}]")
    elif isinstance(element, ActionSet):
        if element.actions:
            lines.append(indent + _actions(element.actions))
    else:
        lines.append(indent + _input(element))


def _table(table: Table, lines: list[str], indent: str) -> None:
    rows = [[visible(cell_text(cell), one_line=True) for cell in row]
            + [""] * (table.columns - len(row)) for row in table.rows]
    if not rows:
        return
    widths = [max(len(row[index]) for row in rows) for index in range(table.columns)]
    for number, row in enumerate(rows):
        lines.append(indent + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if number == 0 and table.first_row_as_header:
            lines.append(indent + "-+-".join("-" * width for width in widths))
    editable = [item.id for row in table.rows for cell in row for item in cell if isinstance(item, INPUT_TYPES)]
    if editable:  # the ids an action's inputs are given by, in the cells' order
        lines.append(f"{indent}[inputs in the cells: {', '.join(editable)}]")


def _input(item: CardElement) -> str:
    if isinstance(item, ToggleInput):
        mark = "[x]" if item.on else "[ ]"
        label = f"{visible(item.label, one_line=True)}: " if item.label else ""
        return f"{label}{mark} {visible(item.title, one_line=True)}  ({item.id})"
    assert isinstance(item, (TextInput, NumberInput, DateInput, TimeInput, ChoiceSetInput))
    label = visible(item.label or item.id, one_line=True)
    required = " *" if item.is_required else ""
    if isinstance(item, ChoiceSetInput):
        chosen = set(item.value.split(",")) if item.value else set()
        shown = ", ".join(("(•) " if choice.value in chosen else "( ) ") + visible(choice.title, one_line=True)
                          for choice in item.choices)
        return f"{label}{required}: {shown}  ({item.id})"
    if isinstance(item, NumberInput):
        value = "" if item.value is None else f"{item.value:g}"
    else:
        value = visible(item.value, one_line=True)
    shown = value or (f"<{visible(item.placeholder, one_line=True)}>" if item.placeholder else "<empty>")
    return f"{label}{required}: {shown}  ({item.id})"


def _actions(actions: tuple[CardAction, ...]) -> str:
    parts = []
    for action in actions:
        title = visible(action.title, one_line=True)
        if isinstance(action, ExecuteAction):
            disabled = ", disabled" if not action.is_enabled else ""
            parts.append(f"[{title}] ({visible(action.verb, one_line=True)}{disabled})")
        elif isinstance(action, OpenUrlAction):
            parts.append(f"[{title}] <{visible(action.url, one_line=True)}>")
    return "  ".join(parts)
