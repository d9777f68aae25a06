"""Parse and check a card document from outside into the typed model.

The document is Adaptive Cards 1.5 JSON, limited to the subset documented in
docs/cards.md. Everything about it may be hostile, so:

- the whole value is checked as JSON first (no NaN, no lone surrogate, no nesting past
  ``workbench.jsontext.MAX_DEPTH``) and its encoded size is bounded;
- elements may nest at most ``max_depth`` deep, a card holds at most ``max_elements``
  elements and actions, each text at most ``max_text`` characters and all of them
  ``max_total_text``; facts, choices, table rows and columns and images have bounds too;
- every object's properties are the ones the subset names: an unknown property, a value
  of the wrong type or outside its enumeration is refused, naming its JSON pointer;
- an element or action whose ``type`` is not in the subset, or whose ``requires`` this
  host does not meet, is replaced by its ``fallback`` (an element, or ``"drop"``) as
  the specification says; without one, the nearest enclosing element's fallback is used,
  and when none has one the card is refused, naming the unknown element.

A leaf: imports the standard library, ``workbench.errors`` and ``workbench.jsontext``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from workbench import jsontext
from workbench.cards.model import (
    ActionSet,
    Card,
    CardAction,
    CardElement,
    Choice,
    ChoiceSetInput,
    Column,
    ColumnSet,
    Container,
    DateInput,
    INPUT_TYPES,
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
from workbench.errors import WorkbenchError


class CardError(WorkbenchError):
    """A card document that is not in the subset, or breaks one of its bounds.

    Attributes:
        pointer: The JSON pointer of what is wrong (``""`` is the whole document).
    """

    def __init__(self, message: str, pointer: str = "", *, where: str = "card") -> None:
        self.pointer = pointer
        self.problem = message
        super().__init__(message, where=f"{where}#{pointer}")


class _Unsupported(CardError):
    """An element or action this host cannot draw: its fallback (or an ancestor's) applies."""


@dataclass(frozen=True)
class CardLimits:
    """The bounds of a card document."""

    max_document_bytes: int = 2 * 1024 * 1024
    """Its JSON, images included, in UTF-8."""
    max_depth: int = 10
    """How deep elements may nest (a body element is at depth 1)."""
    max_elements: int = 1000
    """Elements and actions in the whole card."""
    max_text: int = 20_000
    """Characters in any one text."""
    max_total_text: int = 400_000
    """Characters in all the texts of the card together."""
    max_facts: int = 200
    max_choices: int = 500
    max_table_rows: int = 500
    max_table_columns: int = 20
    max_actions: int = 20
    """Actions in one action set (or in the card's own ``actions``)."""
    max_image_bytes: int = 512 * 1024
    """One image, decoded."""
    max_data_bytes: int = 64 * 1024
    """An ``Action.Execute``'s ``data``, as JSON."""
    max_cell_inputs: int = 400
    """Inputs in the cells of all the card's tables together (an editable grid)."""


LIMITS = CardLimits()

VERSION = (1, 5)
"""The newest Adaptive Cards version drawn."""

HOST_FEATURES: dict[str, tuple[int, int]] = {"adaptiveCards": VERSION}
"""What an element's ``requires`` may ask for, and the version this host has."""

ELEMENT_TYPES = ("TextBlock", "FactSet", "Table", "Container", "ColumnSet", "Image", "Input.Text",
                 "Input.Number", "Input.Date", "Input.Time", "Input.Toggle", "Input.ChoiceSet",
                 "ActionSet")
ACTION_TYPES = ("Action.Execute", "Action.OpenUrl")

_COMMON = {"type", "id", "spacing", "separator", "height", "horizontalAlignment", "isVisible",
           "requires", "fallback", "lang"}
"""Properties every element may have: layout hints a terminal does not draw, ``isVisible``
(false drops the element, since nothing here can show it later), ``requires`` and
``fallback``."""
_BOX = {"style", "verticalContentAlignment", "bleed", "minHeight", "rtl"}
_INPUT = {"label", "isRequired", "errorMessage", "value"}

_PROPERTIES: dict[str, set[str]] = {
    "TextBlock": {"text", "size", "weight", "color", "isSubtle", "wrap", "maxLines", "fontType",
                  "style"},
    "FactSet": {"facts"},
    "Table": {"columns", "rows", "firstRowAsHeader", "showGridLines", "gridStyle",
              "horizontalCellContentAlignment", "verticalCellContentAlignment"},
    "Container": {"items"} | _BOX,
    "ColumnSet": {"columns", "style", "bleed", "minHeight"},
    "Image": {"url", "altText", "size", "width", "style", "backgroundColor"},
    "Input.Text": _INPUT | {"placeholder", "maxLength", "isMultiline", "style"},
    "Input.Number": _INPUT | {"placeholder", "min", "max"},
    "Input.Date": _INPUT | {"placeholder", "min", "max"},
    "Input.Time": _INPUT | {"placeholder", "min", "max"},
    "Input.Toggle": _INPUT | {"title", "valueOn", "valueOff", "wrap"},
    "Input.ChoiceSet": _INPUT | {"choices", "isMultiSelect", "style", "placeholder", "wrap"},
    "ActionSet": {"actions"},
}
_ACTION_COMMON = {"type", "id", "title", "iconUrl", "style", "fallback", "tooltip", "isEnabled",
                  "mode", "requires"}
_ACTION_PROPERTIES = {"Action.Execute": {"verb", "data", "associatedInputs"},
                      "Action.OpenUrl": {"url"}}

_ENUMS: dict[str, tuple[str, ...]] = {
    "size": ("default", "small", "medium", "large", "extraLarge"),
    "weight": ("default", "lighter", "bolder"),
    "color": ("default", "dark", "light", "accent", "good", "warning", "attention"),
    "fontType": ("default", "monospace"),
    "textStyle": ("default", "heading"),
    "containerStyle": ("default", "emphasis", "good", "attention", "warning", "accent"),
    "spacing": ("default", "none", "small", "medium", "large", "extraLarge", "padding"),
    "horizontalAlignment": ("left", "center", "right"),
    "verticalAlignment": ("top", "center", "bottom"),
    "height": ("auto", "stretch"),
    "imageSize": ("auto", "stretch", "small", "medium", "large"),
    "imageStyle": ("default", "person"),
    "textInputStyle": ("text", "tel", "url", "email"),
    "choiceStyle": ("compact", "expanded", "filtered"),
    "actionStyle": ("default", "positive", "destructive"),
    "actionMode": ("primary", "secondary"),
    "associatedInputs": ("auto", "none"),
}

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
URL_SCHEMES = ("https", "http", "mailto")
_INPUT_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_VERB = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_VERSION = re.compile(r"(\d{1,3})\.(\d{1,3})")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"\d{2}:\d{2}")
_URL = re.compile(r"[^\s\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]{1,2048}")


def parse_card(value: Any, *, where: str = "card", limits: CardLimits = LIMITS) -> Card:
    """Check ``value`` (a decoded JSON value) as a card document of the subset.

    Args:
        value: The document: ``{"type": "AdaptiveCard", "version": "1.5", "body": […],
            "actions": […]}``.
        where: What the document is, for messages (``page calendar/month``).
        limits: Its bounds.

    Returns:
        The card, with unknown elements replaced by their fallbacks.

    Raises:
        CardError: Not a card of the subset; the message names the JSON pointer.
    """
    return _Parser(limits, where).card(value)


def valid_date(text: str) -> bool:
    """Whether ``text`` is a date ``YYYY-MM-DD`` that exists."""
    import datetime

    if _DATE.fullmatch(text) is None:
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def valid_time(text: str) -> bool:
    """Whether ``text`` is a time of day ``HH:MM``."""
    return _TIME.fullmatch(text) is not None and int(text[:2]) < 24 and int(text[3:]) < 60


class _Parser:
    def __init__(self, limits: CardLimits, where: str) -> None:
        self.limits = limits
        self.where = where
        self.count = 0
        self.text_total = 0
        self.ids: dict[str, str] = {}
        self.cell_inputs = 0

    def fail(self, message: str, pointer: str) -> CardError:
        return CardError(message, pointer, where=self.where)

    # The document

    def card(self, value: Any) -> Card:
        found = jsontext.encodable(value)
        if found is not None:
            raise self.fail(found[1], "" if found[0] == "/" else found[0])
        try:
            size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
        except (TypeError, ValueError):
            raise self.fail("not a JSON value", "") from None
        if size > self.limits.max_document_bytes:
            raise self.fail(f"the document is {size} bytes, more than the "
                            f"{self.limits.max_document_bytes} a card may be", "")
        if not isinstance(value, dict):
            raise self.fail("a card document is a JSON object", "")
        if value.get("type") != "AdaptiveCard":
            raise self.fail('a card document has "type": "AdaptiveCard"', "/type")
        self.known(value, {"type", "version", "body", "actions", "$schema", "fallbackText", "speak",
                           "lang", "minHeight", "verticalContentAlignment", "rtl"}, "")
        version = value.get("version")
        if not isinstance(version, str) or (match := _VERSION.fullmatch(version)) is None:
            raise self.fail('"version" is the Adaptive Cards version as text, e.g. "1.5"', "/version")
        fallback_text = self.text(value, "fallbackText", "")
        if (int(match.group(1)), int(match.group(2))) > VERSION:
            # As the specification says: a card newer than the host shows its fallbackText.
            if fallback_text:
                return Card(body=(TextBlock(fallback_text, wrap=True, pointer="/fallbackText"),),
                            version=version, fallback_text=fallback_text)
            raise self.fail(f"version {version} is newer than the Adaptive Cards "
                            f"{VERSION[0]}.{VERSION[1]} this host draws, and the card has no "
                            "fallbackText", "/version")
        body = self.element_list(value.get("body", []), "/body", 1)
        actions = self.action_list(value.get("actions", []), "/actions", 1)
        return Card(body=body, actions=actions, version=version, fallback_text=fallback_text)

    # Checks of one property

    def known(self, value: dict, allowed: set[str], pointer: str) -> None:
        for key in value:
            if key not in allowed:
                name = value.get("type", "this object") if isinstance(value.get("type"), str) \
                    else "this object"
                raise self.fail(f"{name} has no property {key!r} in the subset this host draws "
                                "(docs/cards.md)", f"{pointer}/{_escape(key)}")

    def text(self, value: dict, key: str, default: str, pointer: str = "", *,
             required: bool = False) -> str:
        if key not in value:
            if required:
                raise self.fail(f"{key!r} is required", f"{pointer}/{key}")
            return default
        item = value[key]
        if not isinstance(item, str):
            raise self.fail(f"{key!r} is text", f"{pointer}/{key}")
        if len(item) > self.limits.max_text:
            raise self.fail(f"{key!r} is {len(item)} characters, more than the "
                            f"{self.limits.max_text} a text may be", f"{pointer}/{key}")
        self.text_total += len(item)
        if self.text_total > self.limits.max_total_text:
            raise self.fail(f"the card's texts are more than the {self.limits.max_total_text} "
                            "characters a card may hold", f"{pointer}/{key}")
        return item

    def flag(self, value: dict, key: str, default: bool, pointer: str) -> bool:
        item = value.get(key, default)
        if not isinstance(item, bool):
            raise self.fail(f"{key!r} is true or false", f"{pointer}/{key}")
        return item

    def number(self, value: dict, key: str, pointer: str) -> float | None:
        if key not in value or value[key] is None:
            return None
        item = value[key]
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise self.fail(f"{key!r} is a number", f"{pointer}/{key}")
        return item

    def count_limit(self, value: dict, key: str, pointer: str, *, minimum: int = 0,
                    maximum: int = 1_000_000) -> int | None:
        if key not in value:
            return None
        item = value[key]
        if isinstance(item, bool) or not isinstance(item, int) or not minimum <= item <= maximum:
            raise self.fail(f"{key!r} is a whole number from {minimum} to {maximum}",
                            f"{pointer}/{key}")
        return item

    def enum(self, value: dict, key: str, kind: str, pointer: str, default: str) -> str:
        if key not in value:
            return default
        item = value[key]
        names = _ENUMS[kind]
        if isinstance(item, str):
            # Adaptive Cards' enumerations are read without regard to case.
            for name in names:
                if name.lower() == item.lower():
                    return name
        raise self.fail(f"{key!r} is one of {', '.join(names)}", f"{pointer}/{key}")

    def array(self, value: Any, pointer: str, maximum: int, what: str) -> list:
        if not isinstance(value, list):
            raise self.fail(f"{what} are a JSON array", pointer)
        if len(value) > maximum:
            raise self.fail(f"{len(value)} {what}, more than the {maximum} allowed", pointer)
        return value

    def tally(self, pointer: str) -> None:
        self.count += 1
        if self.count > self.limits.max_elements:
            raise self.fail(f"the card holds more than {self.limits.max_elements} elements and "
                            "actions", pointer)

    def common(self, value: dict, pointer: str) -> None:
        """The properties every element has: checked, and a layout hint ignored."""
        self.text(value, "id", "", pointer)
        for key, kind in (("spacing", "spacing"), ("horizontalAlignment", "horizontalAlignment"),
                          ("height", "height")):
            self.enum(value, key, kind, pointer, "")
        self.flag(value, "separator", False, pointer)
        self.text(value, "lang", "", pointer)
        self.requires(value, pointer)

    def requires(self, value: dict, pointer: str) -> None:
        if "requires" not in value:
            return
        wanted = value["requires"]
        if not isinstance(wanted, dict):
            raise self.fail('"requires" is an object of feature names and versions',
                            f"{pointer}/requires")
        for feature, version in wanted.items():
            if not isinstance(version, str) or (version != "*" and _VERSION.fullmatch(version) is None):
                raise self.fail('a required feature\'s version is "*" or like "1.5"',
                                f"{pointer}/requires/{_escape(feature)}")
            have = HOST_FEATURES.get(feature)
            if have is None or (version != "*" and _version(version) > have):
                raise _Unsupported(f"it requires {feature} {version}, which this host does not have",
                                   f"{pointer}/requires/{_escape(feature)}", where=self.where)

    # Elements

    def element_list(self, value: Any, pointer: str, depth: int, *,
                     in_cell: bool = False) -> tuple[CardElement, ...]:
        items = self.array(value, pointer, self.limits.max_elements, "elements")
        found: list[CardElement] = []
        for index, item in enumerate(items):
            element = self.element(item, f"{pointer}/{index}", depth, in_cell)
            if element is not None:
                found.append(element)
        return tuple(found)

    def element(self, value: Any, pointer: str, depth: int, in_cell: bool) -> CardElement | None:
        """One element, or its fallback, or None where it (or its fallback) is dropped."""
        if depth > self.limits.max_depth:
            raise self.fail(f"elements nest more than {self.limits.max_depth} deep", pointer)
        saved = (self.count, self.text_total, dict(self.ids))
        try:
            return self.one_element(value, pointer, depth, in_cell)
        except _Unsupported:
            fallback = value.get("fallback") if isinstance(value, dict) else None
            if fallback is None:
                raise
            self.count, self.text_total, self.ids = saved[0], saved[1], saved[2]
            if fallback == "drop":
                return None
            if not isinstance(fallback, dict):
                raise self.fail('"fallback" is "drop" or an element', f"{pointer}/fallback") from None
            return self.element(fallback, f"{pointer}/fallback", depth + 1, in_cell)

    def one_element(self, value: Any, pointer: str, depth: int, in_cell: bool) -> CardElement | None:
        if not isinstance(value, dict):
            raise self.fail("an element is a JSON object", pointer)
        kind = value.get("type")
        if not isinstance(kind, str):
            raise self.fail('an element has a "type"', f"{pointer}/type")
        if kind not in _PROPERTIES:
            if kind in ACTION_TYPES:
                raise self.fail(f"{kind} is an action: put it in an ActionSet's or the card's "
                                '"actions"', f"{pointer}/type")
            raise _Unsupported(f"{kind!r} is not an element of the subset this host draws "
                               f"({', '.join(ELEMENT_TYPES)}) and it has no fallback",
                               f"{pointer}/type", where=self.where)
        self.tally(pointer)
        self.known(value, _COMMON | _PROPERTIES[kind], pointer)
        self.common(value, pointer)
        if in_cell and kind in ("ActionSet", "Table"):
            raise self.fail(f"a table's cells hold text, facts, images and containers of them, "
                            f"or one input, not {kind}", f"{pointer}/type")
        element = getattr(self, "element_" + kind.replace(".", "_"))(value, pointer, depth, in_cell)
        if in_cell and kind.startswith("Input."):
            self.cell_input(element, value, pointer)
        if not self.flag(value, "isVisible", True, pointer):
            return None
        return element

    def element_TextBlock(self, value: dict, pointer: str, depth: int, in_cell: bool) -> TextBlock:
        text = self.text(value, "text", "", pointer, required=True)
        self.count_limit(value, "maxLines", pointer, minimum=0)
        self.enum(value, "fontType", "fontType", pointer, "default")
        self.enum(value, "style", "textStyle", pointer, "default")
        return TextBlock(
            text=text,
            size=self.enum(value, "size", "size", pointer, "default"),
            weight=self.enum(value, "weight", "weight", pointer, "default"),
            color=self.enum(value, "color", "color", pointer, "default"),
            is_subtle=self.flag(value, "isSubtle", False, pointer),
            wrap=self.flag(value, "wrap", False, pointer),
            pointer=pointer)

    def element_FactSet(self, value: dict, pointer: str, depth: int, in_cell: bool) -> FactSet:
        if "facts" not in value:
            raise self.fail("'facts' is required", f"{pointer}/facts")
        facts = []
        for index, fact in enumerate(self.array(value["facts"], f"{pointer}/facts",
                                                self.limits.max_facts, "facts")):
            where = f"{pointer}/facts/{index}"
            if not isinstance(fact, dict):
                raise self.fail("a fact is an object with a title and a value", where)
            self.known(fact, {"title", "value"}, where)
            facts.append(Fact(self.text(fact, "title", "", where, required=True),
                              self.text(fact, "value", "", where, required=True)))
        return FactSet(tuple(facts), pointer=pointer)

    def element_Table(self, value: dict, pointer: str, depth: int, in_cell: bool) -> Table:
        for key, kind in (("horizontalCellContentAlignment", "horizontalAlignment"),
                          ("verticalCellContentAlignment", "verticalAlignment"),
                          ("gridStyle", "containerStyle")):
            self.enum(value, key, kind, pointer, "")
        self.flag(value, "showGridLines", True, pointer)
        if "columns" not in value:
            raise self.fail("'columns' is required", f"{pointer}/columns")
        columns = self.array(value["columns"], f"{pointer}/columns", self.limits.max_table_columns,
                             "columns")
        if not columns:
            raise self.fail("a table has at least one column", f"{pointer}/columns")
        for index, column in enumerate(columns):
            where = f"{pointer}/columns/{index}"
            if not isinstance(column, dict):
                raise self.fail("a column definition is an object", where)
            self.known(column, {"type", "width", "horizontalCellContentAlignment",
                                "verticalCellContentAlignment"}, where)
            if column.get("type", "TableColumnDefinition") != "TableColumnDefinition":
                raise self.fail('a column definition\'s type is "TableColumnDefinition"',
                                f"{where}/type")
            self.width(column, where)
        rows = []
        for index, row in enumerate(self.array(value.get("rows", []), f"{pointer}/rows",
                                               self.limits.max_table_rows, "rows")):
            where = f"{pointer}/rows/{index}"
            if not isinstance(row, dict):
                raise self.fail("a row is a TableRow object", where)
            self.known(row, {"type", "cells", "style", "horizontalCellContentAlignment",
                             "verticalCellContentAlignment"}, where)
            if row.get("type", "TableRow") != "TableRow":
                raise self.fail('a row\'s type is "TableRow"', f"{where}/type")
            self.enum(row, "style", "containerStyle", where, "default")
            cells = self.array(row.get("cells", []), f"{where}/cells", len(columns), "cells")
            parsed = []
            for number, cell in enumerate(cells):
                at = f"{where}/cells/{number}"
                if not isinstance(cell, dict):
                    raise self.fail("a cell is a TableCell object", at)
                self.known(cell, {"type", "items"} | _BOX, at)
                if cell.get("type", "TableCell") != "TableCell":
                    raise self.fail('a cell\'s type is "TableCell"', f"{at}/type")
                self.box(cell, at)
                parsed.append(self.element_list(cell.get("items", []), f"{at}/items", depth + 1,
                                                in_cell=True))
            for number, items in enumerate(parsed):
                if len(items) > 1 and any(isinstance(item, INPUT_TYPES) for item in items):
                    raise self.fail("a cell that holds an input holds nothing else",
                                    f"{where}/cells/{number}/items")
            rows.append(tuple(parsed))
        return Table(columns=len(columns), rows=tuple(rows),
                     first_row_as_header=self.flag(value, "firstRowAsHeader", True, pointer),
                     pointer=pointer)

    def cell_input(self, element: Any, value: dict, pointer: str) -> None:
        """An input in a table's cell (an editable grid) draws on one line: no multiline
        text, no multi-select set; at most ``max_cell_inputs`` of them in the card."""
        if value.get("isMultiline") is True or value.get("isMultiSelect") is True:
            raise self.fail("an input in a table's cell draws on one line: not multiline, not "
                            "multi-select", pointer)
        self.cell_inputs += 1
        if self.cell_inputs > self.limits.max_cell_inputs:
            raise self.fail(f"more than {self.limits.max_cell_inputs} inputs in the cells of the "
                            "card's tables", pointer)

    def width(self, value: dict, pointer: str) -> str:
        if "width" not in value:
            return "auto"
        width = value["width"]
        if isinstance(width, bool) or not isinstance(width, (str, int, float)):
            raise self.fail("'width' is auto, stretch, a weight or pixels", f"{pointer}/width")
        text = str(width)
        if len(text) > 16 or not (text in ("auto", "stretch") or re.fullmatch(r"\d+(\.\d+)?(px)?", text)):
            raise self.fail("'width' is auto, stretch, a weight or pixels", f"{pointer}/width")
        return text

    def box(self, value: dict, pointer: str) -> str:
        self.enum(value, "verticalContentAlignment", "verticalAlignment", pointer, "")
        self.flag(value, "bleed", False, pointer)
        self.flag(value, "rtl", False, pointer)
        if "minHeight" in value and not isinstance(value["minHeight"], str):
            raise self.fail("'minHeight' is text such as \"80px\"", f"{pointer}/minHeight")
        return self.enum(value, "style", "containerStyle", pointer, "default")

    def element_Container(self, value: dict, pointer: str, depth: int, in_cell: bool) -> Container:
        style = self.box(value, pointer)
        if "items" not in value:
            raise self.fail("'items' is required", f"{pointer}/items")
        return Container(self.element_list(value["items"], f"{pointer}/items", depth + 1,
                                           in_cell=in_cell), style=style, pointer=pointer)

    def element_ColumnSet(self, value: dict, pointer: str, depth: int, in_cell: bool) -> ColumnSet:
        style = self.box(value, pointer)
        columns = []
        for index, column in enumerate(self.array(value.get("columns", []), f"{pointer}/columns",
                                                  self.limits.max_table_columns, "columns")):
            where = f"{pointer}/columns/{index}"
            if not isinstance(column, dict):
                raise self.fail("a column is a Column object", where)
            if column.get("type", "Column") != "Column":
                raise self.fail('a column\'s type is "Column"', f"{where}/type")
            self.known(column, _COMMON | _BOX | {"items", "width"}, where)
            self.tally(where)
            self.common(column, where)
            self.box(column, where)
            width = self.width(column, where)
            items = self.element_list(column.get("items", []), f"{where}/items", depth + 1,
                                      in_cell=in_cell)
            if self.flag(column, "isVisible", True, where):
                columns.append(Column(items, width=width, pointer=where))
        return ColumnSet(tuple(columns), style=style, pointer=pointer)

    def element_Image(self, value: dict, pointer: str, depth: int, in_cell: bool) -> Image:
        # The URL carries the image itself: bounded by max_image_bytes, not as a text.
        url = value.get("url")
        if not isinstance(url, str):
            raise self.fail("'url' is required: the image as a data: URL", f"{pointer}/url")
        self.enum(value, "size", "imageSize", pointer, "auto")
        self.enum(value, "style", "imageStyle", pointer, "default")
        self.text(value, "backgroundColor", "", pointer)
        if "width" in value and not isinstance(value["width"], str):
            raise self.fail("'width' is text such as \"80px\"", f"{pointer}/width")
        media_type, data = self.data_url(url, f"{pointer}/url")
        return Image(media_type=media_type, data=data, alt_text=self.text(value, "altText", "", pointer),
                     pointer=pointer)

    def data_url(self, url: str, pointer: str) -> tuple[str, bytes]:
        if not url.startswith("data:"):
            raise self.fail("an image is carried in the card as a data: URL; this host fetches "
                            "nothing", pointer)
        head, comma, payload = url[5:].partition(",")
        parts = head.split(";")
        media_type = parts[0].strip().lower()
        if not comma or parts[-1] != "base64":
            raise self.fail("an image's data: URL is base64 (data:image/png;base64,…)", pointer)
        if media_type not in IMAGE_TYPES:
            raise self.fail(f"an image is one of {', '.join(IMAGE_TYPES)}", pointer)
        if len(payload) > (self.limits.max_image_bytes * 4) // 3 + 4:
            raise self.fail(f"the image is more than {self.limits.max_image_bytes} bytes", pointer)
        try:
            data = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise self.fail("the image's data is not base64", pointer) from None
        if len(data) > self.limits.max_image_bytes:
            raise self.fail(f"the image is more than {self.limits.max_image_bytes} bytes", pointer)
        return media_type, data

    # Inputs

    def input_base(self, value: dict, pointer: str) -> dict[str, Any]:
        raw = value.get("id")
        if not isinstance(raw, str) or _INPUT_ID.fullmatch(raw) is None:
            raise self.fail("an input has an id: a letter or _ then up to 63 letters, digits, "
                            "_, . or -", f"{pointer}/id")
        if raw in self.ids:
            raise self.fail(f"the id {raw!r} is already the id of the input at {self.ids[raw]}",
                            f"{pointer}/id")
        self.ids[raw] = pointer
        return {"id": raw, "label": self.text(value, "label", "", pointer),
                "is_required": self.flag(value, "isRequired", False, pointer),
                "error_message": self.text(value, "errorMessage", "", pointer),
                "pointer": pointer}

    def element_Input_Text(self, value: dict, pointer: str, depth: int, in_cell: bool) -> TextInput:
        base = self.input_base(value, pointer)
        self.enum(value, "style", "textInputStyle", pointer, "text")
        max_length = self.count_limit(value, "maxLength", pointer, minimum=1,
                                      maximum=self.limits.max_text)
        text = self.text(value, "value", "", pointer)
        if max_length is not None and len(text) > max_length:
            raise self.fail(f"the value is longer than maxLength ({max_length})", f"{pointer}/value")
        return TextInput(**base, value=text, placeholder=self.text(value, "placeholder", "", pointer),
                         max_length=max_length, is_multiline=self.flag(value, "isMultiline", False, pointer))

    def element_Input_Number(self, value: dict, pointer: str, depth: int, in_cell: bool) -> NumberInput:
        base = self.input_base(value, pointer)
        low, high = self.number(value, "min", pointer), self.number(value, "max", pointer)
        if low is not None and high is not None and low > high:
            raise self.fail("'min' is more than 'max'", f"{pointer}/min")
        number = self.number(value, "value", pointer)
        if number is not None and ((low is not None and number < low) or (high is not None and number > high)):
            raise self.fail("the value is outside min and max", f"{pointer}/value")
        return NumberInput(**base, value=number, placeholder=self.text(value, "placeholder", "", pointer),
                           min=low, max=high)

    def moment(self, value: dict, key: str, pointer: str, check: Any, form: str) -> str:
        text = self.text(value, key, "", pointer)
        if text and not check(text):
            raise self.fail(f"{key!r} is {form}", f"{pointer}/{key}")
        return text

    def element_Input_Date(self, value: dict, pointer: str, depth: int, in_cell: bool) -> DateInput:
        base = self.input_base(value, pointer)
        fields: dict[str, Any] = {key: self.moment(value, key, pointer, valid_date, "a date YYYY-MM-DD")
                  for key in ("value", "min", "max")}
        self.in_range(fields, pointer)
        return DateInput(**base, **fields, placeholder=self.text(value, "placeholder", "", pointer))

    def element_Input_Time(self, value: dict, pointer: str, depth: int, in_cell: bool) -> TimeInput:
        base = self.input_base(value, pointer)
        fields: dict[str, Any] = {key: self.moment(value, key, pointer, valid_time, "a time HH:MM")
                  for key in ("value", "min", "max")}
        self.in_range(fields, pointer)
        return TimeInput(**base, **fields, placeholder=self.text(value, "placeholder", "", pointer))

    def in_range(self, fields: dict[str, Any], pointer: str) -> None:
        # Dates and times in these forms sort as text.
        if fields["min"] and fields["max"] and fields["min"] > fields["max"]:
            raise self.fail("'min' is after 'max'", f"{pointer}/min")
        if fields["value"] and ((fields["min"] and fields["value"] < fields["min"])
                                or (fields["max"] and fields["value"] > fields["max"])):
            raise self.fail("the value is outside min and max", f"{pointer}/value")

    def element_Input_Toggle(self, value: dict, pointer: str, depth: int, in_cell: bool) -> ToggleInput:
        base = self.input_base(value, pointer)
        self.flag(value, "wrap", False, pointer)
        title = self.text(value, "title", "", pointer, required=True)
        on = self.text(value, "valueOn", "true", pointer)
        off = self.text(value, "valueOff", "false", pointer)
        if on == off:
            raise self.fail("'valueOn' and 'valueOff' are the same", f"{pointer}/valueOn")
        state = self.text(value, "value", off, pointer)
        if state not in (on, off):
            raise self.fail("the value is valueOn or valueOff", f"{pointer}/value")
        return ToggleInput(**base, title=title, value=state, value_on=on, value_off=off)

    def element_Input_ChoiceSet(self, value: dict, pointer: str, depth: int,
                                in_cell: bool) -> ChoiceSetInput:
        base = self.input_base(value, pointer)
        self.flag(value, "wrap", False, pointer)
        if "choices" not in value:
            raise self.fail("'choices' is required", f"{pointer}/choices")
        choices = []
        seen: set[str] = set()
        for index, choice in enumerate(self.array(value["choices"], f"{pointer}/choices",
                                                  self.limits.max_choices, "choices")):
            where = f"{pointer}/choices/{index}"
            if not isinstance(choice, dict):
                raise self.fail("a choice is an object with a title and a value", where)
            self.known(choice, {"type", "title", "value"}, where)
            if choice.get("type", "Input.Choice") != "Input.Choice":
                raise self.fail('a choice\'s type is "Input.Choice"', f"{where}/type")
            item = Choice(self.text(choice, "title", "", where, required=True),
                          self.text(choice, "value", "", where, required=True))
            if item.value in seen:
                raise self.fail(f"the value {item.value!r} is already a choice's", f"{where}/value")
            seen.add(item.value)
            choices.append(item)
        multi = self.flag(value, "isMultiSelect", False, pointer)
        if multi:
            for index, item in enumerate(choices):
                if "," in item.value:
                    raise self.fail("a choice of a multi-select set has no comma in its value "
                                    "(the chosen values are joined with commas)",
                                    f"{pointer}/choices/{index}/value")
        chosen = self.text(value, "value", "", pointer)
        for part in (chosen.split(",") if multi else [chosen]) if chosen else []:
            if part not in seen:
                raise self.fail(f"the value {part!r} is not one of the choices", f"{pointer}/value")
        style = self.enum(value, "style", "choiceStyle", pointer, "compact")
        return ChoiceSetInput(**base, choices=tuple(choices), value=chosen, is_multi_select=multi,
                              placeholder=self.text(value, "placeholder", "", pointer),
                              style="expanded" if style == "expanded" else "compact")

    def element_ActionSet(self, value: dict, pointer: str, depth: int, in_cell: bool) -> ActionSet:
        if "actions" not in value:
            raise self.fail("'actions' is required", f"{pointer}/actions")
        return ActionSet(self.action_list(value["actions"], f"{pointer}/actions", depth + 1),
                         pointer=pointer)

    # Actions

    def action_list(self, value: Any, pointer: str, depth: int) -> tuple[CardAction, ...]:
        items = self.array(value, pointer, self.limits.max_actions, "actions")
        found = []
        for index, item in enumerate(items):
            action = self.action(item, f"{pointer}/{index}", depth)
            if action is not None:
                found.append(action)
        return tuple(found)

    def action(self, value: Any, pointer: str, depth: int) -> CardAction | None:
        if depth > self.limits.max_depth:
            raise self.fail(f"elements nest more than {self.limits.max_depth} deep", pointer)
        saved = (self.count, self.text_total)
        try:
            return self.one_action(value, pointer)
        except _Unsupported:
            fallback = value.get("fallback") if isinstance(value, dict) else None
            if fallback is None:
                raise
            self.count, self.text_total = saved
            if fallback == "drop":
                return None
            if not isinstance(fallback, dict):
                raise self.fail('"fallback" is "drop" or an action', f"{pointer}/fallback") from None
            return self.action(fallback, f"{pointer}/fallback", depth + 1)

    def one_action(self, value: Any, pointer: str) -> CardAction:
        if not isinstance(value, dict):
            raise self.fail("an action is a JSON object", pointer)
        kind = value.get("type")
        if not isinstance(kind, str):
            raise self.fail('an action has a "type"', f"{pointer}/type")
        if kind not in _ACTION_PROPERTIES:
            raise _Unsupported(f"{kind!r} is not an action of the subset this host draws "
                               f"({', '.join(ACTION_TYPES)}) and it has no fallback",
                               f"{pointer}/type", where=self.where)
        self.tally(pointer)
        self.known(value, _ACTION_COMMON | _ACTION_PROPERTIES[kind], pointer)
        self.requires(value, pointer)
        self.text(value, "id", "", pointer)
        # iconUrl is never fetched; it is checked as text and left out.
        self.text(value, "iconUrl", "", pointer)
        self.enum(value, "mode", "actionMode", pointer, "primary")
        title = self.text(value, "title", "", pointer)
        tooltip = self.text(value, "tooltip", "", pointer)
        style = self.enum(value, "style", "actionStyle", pointer, "default")
        enabled = self.flag(value, "isEnabled", True, pointer)
        if kind == "Action.OpenUrl":
            url = self.text(value, "url", "", pointer, required=True)
            scheme = url.partition(":")[0].lower()
            if _URL.fullmatch(url) is None or scheme not in URL_SCHEMES or ":" not in url:
                raise self.fail(f"the url is one {', '.join(URL_SCHEMES)} URL without spaces or "
                                "control characters", f"{pointer}/url")
            return OpenUrlAction(title=title or url, url=url, tooltip=tooltip, pointer=pointer)
        verb = self.text(value, "verb", "", pointer, required=True)
        if _VERB.fullmatch(verb) is None:
            raise self.fail("the verb is 1 to 128 letters, digits, _, ., : or -", f"{pointer}/verb")
        data = value.get("data", {})
        if not isinstance(data, dict):
            raise self.fail("an Action.Execute's data is a JSON object (the inputs' values are "
                            "merged into it)", f"{pointer}/data")
        size = len(json.dumps(data, ensure_ascii=False).encode("utf-8"))
        if size > self.limits.max_data_bytes:
            raise self.fail(f"the data is {size} bytes, more than {self.limits.max_data_bytes}",
                            f"{pointer}/data")
        return ExecuteAction(title=title or verb, verb=verb, data=json.loads(json.dumps(data)),
                             associated_inputs=self.enum(value, "associatedInputs", "associatedInputs",
                                                         pointer, "auto"),
                             style=style, is_enabled=enabled, tooltip=tooltip, pointer=pointer)


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _version(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor)
