"""Card documents: the subset parsed into the model, every refusal naming its JSON
pointer, fallbacks as Adaptive Cards has them, the bounds, and the plain-text face."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from workbench.cards import (
    CardError,
    CardLimits,
    ChoiceSetInput,
    Container,
    ExecuteAction,
    FactSet,
    Image,
    OpenUrlAction,
    Table,
    TextBlock,
    action_data,
    input_values,
    parse_card,
    plain_text,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def card(*body: Any, actions: list | None = None, **top: Any) -> dict[str, Any]:
    document: dict[str, Any] = {"type": "AdaptiveCard", "version": "1.5", "body": list(body), **top}
    if actions is not None:
        document["actions"] = actions
    return document


def text(value: str, **more: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": value, **more}


def cell(*items: Any) -> dict[str, Any]:
    return {"type": "TableCell", "items": list(items)}


FORM = card(
    text("Event", size="Large", weight="Bolder", wrap=True),
    {"type": "FactSet", "facts": [{"title": "When", "value": "Thursday"}, {"title": "Place", "value": "Rome"}]},
    {"type": "Table", "columns": [{"width": 1}, {"width": "stretch"}], "rows": [
        {"type": "TableRow", "cells": [cell(text("Day")), cell(text("Title"))]},
        {"type": "TableRow", "cells": [cell(text("Mon")), cell(text("Dinner"), text("with Sam"))]},
        {"type": "TableRow", "cells": [cell(text("Tue"))]},
    ]},
    {"type": "Container", "style": "Emphasis", "items": [
        {"type": "ColumnSet", "columns": [
            {"type": "Column", "width": "auto", "items": [
                {"type": "Input.Text", "id": "title", "label": "Title", "isRequired": True, "maxLength": 20}]},
            {"type": "Column", "width": "stretch", "items": [
                {"type": "Input.Date", "id": "day", "label": "Day", "min": "2026-01-01", "value": "2026-12-03"}]},
        ]},
        {"type": "Input.Time", "id": "at", "label": "At", "value": "20:00"},
        {"type": "Input.Number", "id": "guests", "label": "Guests", "min": 1, "max": 12},
        {"type": "Input.Toggle", "id": "all_day", "title": "All day", "valueOn": "yes", "valueOff": "no"},
        {"type": "Input.ChoiceSet", "id": "tags", "label": "Tags", "isMultiSelect": True,
         "choices": [{"title": "Work", "value": "work"}, {"title": "Home", "value": "home"}]},
    ]},
    {"type": "Image", "url": f"data:image/png;base64,{PNG}", "altText": "a map"},
    {"type": "ActionSet", "actions": [{"type": "Action.OpenUrl", "title": "Docs", "url": "https://example.org/d"}]},
    actions=[{"type": "Action.Execute", "title": "Save", "verb": "event-create", "data": {"calendar": "main"},
              "style": "positive"},
             {"type": "Action.Execute", "title": "Reset", "verb": "reset", "associatedInputs": "None"}],
)


def test_the_subset_parses_into_the_model_and_its_plain_text() -> None:
    parsed = parse_card(FORM)
    heading, facts, table, container, image, links = parsed.body
    assert isinstance(heading, TextBlock) and (heading.size, heading.weight) == ("large", "bolder")
    assert isinstance(facts, FactSet) and [f.value for f in facts.facts] == ["Thursday", "Rome"]
    assert isinstance(table, Table) and table.columns == 2 and len(table.rows) == 3
    assert isinstance(container, Container) and container.style == "emphasis"
    assert isinstance(image, Image) and image.media_type == "image/png" and image.data.startswith(b"\x89PNG")
    assert [item.id for item in parsed.inputs()] == ["title", "day", "at", "guests", "all_day", "tags"]
    assert parsed.inputs()[0].pointer == "/body/3/items/0/columns/0/items/0"
    save, reset = parsed.actions
    assert isinstance(save, ExecuteAction) and save.verb == "event-create" and save.style == "positive"
    assert reset.associated_inputs == "none"
    assert isinstance(parsed.all_actions()[0], OpenUrlAction)
    assert plain_text(parsed).splitlines() == [
        "Event",
        "When:  Thursday",
        "Place: Rome",
        "Day | Title",
        "----+----------------",
        "Mon | Dinner with Sam",
        "Tue |",
        "Title *: <empty>  (title)",
        "Day: 2026-12-03  (day)",
        "At: 20:00  (at)",
        "Guests: <empty>  (guests)",
        "[ ] All day  (all_day)",
        "Tags: ( ) Work, ( ) Home  (tags)",
        "[image: a map]",
        "[Docs] <https://example.org/d>",
        "[Save] (event-create)  [Reset] (reset)",
    ]


def test_inputs_values_are_checked_then_merged_into_the_actions_data() -> None:
    parsed = parse_card(FORM)
    values, problems = input_values(parsed, {})
    assert [(p.id, p.message) for p in problems] == [("title", "Title is required")]
    values, problems = input_values(parsed, {"title": "x" * 21, "day": "2025-12-31", "at": "25:00",
                                             "guests": "13", "all_day": "maybe", "tags": ["work", "car"],
                                             "nope": 1})
    assert {p.id: p.message for p in problems} == {
        "nope": "the card has no input of this id",
        "title": "Title is at most 20 characters", "day": "Day is 2026-01-01 or later",
        "at": "At is a time HH:MM", "guests": "Guests is at most 12",
        "all_day": "all_day is 'yes' or 'no'", "tags": "'car' is not one of the choices of Tags"}
    values, problems = input_values(parsed, {"title": "Dinner", "guests": "2", "all_day": True,
                                             "tags": ["work", "home"]})
    assert problems == []
    assert values == {"title": "Dinner", "day": "2026-12-03", "at": "20:00", "guests": 2,
                      "all_day": "yes", "tags": "work,home"}
    save, reset = parsed.actions
    assert action_data(save, values) == {"calendar": "main", **values}
    assert action_data(reset, values) == {}


@pytest.mark.parametrize(("document", "pointer", "words"), [
    ([], "", "a JSON object"),
    ({"type": "Card", "version": "1.5"}, "/type", '"AdaptiveCard"'),
    (card(version=1.5), "/version", "as text"),
    (card(version="1.6"), "/version", "no fallbackText"),
    (card(text("x", onClick="boom")), "/body/0/onClick", "no property 'onClick'"),
    (card({"type": "Media", "sources": []}), "/body/0/type", "'Media' is not an element"),
    (card({"type": "Action.Execute", "verb": "x"}), "/body/0/type", "is an action"),
    (card(text("x", size="huge")), "/body/0/size", "one of default, small"),
    (card(text("x", wrap="yes")), "/body/0/wrap", "true or false"),
    (card({"type": "TextBlock"}), "/body/0/text", "required"),
    (card({"type": "Image", "url": "https://example.org/x.png"}), "/body/0/url", "fetches nothing"),
    (card({"type": "Image", "url": "data:image/svg+xml;base64,PHN2Zz4="}), "/body/0/url", "image/png"),
    (card({"type": "Image", "url": "data:image/png;base64,%%%"}), "/body/0/url", "not base64"),
    (card({"type": "Input.Text", "id": "a b"}), "/body/0/id", "an input has an id"),
    (card({"type": "Input.Text", "id": "a"}, {"type": "Input.Date", "id": "a"}), "/body/1/id",
     "already the id of the input at /body/0"),
    (card({"type": "Input.Text", "id": "a", "regex": "(a+)+$"}), "/body/0/regex", "no property 'regex'"),
    (card({"type": "Input.Text", "id": "a", "style": "password"}), "/body/0/style", "one of text"),
    (card({"type": "Input.Date", "id": "a", "value": "2026-02-30"}), "/body/0/value", "a date"),
    (card({"type": "Input.Number", "id": "a", "min": 5, "max": 1}), "/body/0/min", "more than 'max'"),
    (card({"type": "Input.ChoiceSet", "id": "a", "choices": [{"title": "A", "value": "a"}], "value": "b"}),
     "/body/0/value", "not one of the choices"),
    (card({"type": "Input.ChoiceSet", "id": "a", "isMultiSelect": True,
           "choices": [{"title": "A", "value": "a,b"}]}), "/body/0/choices/0/value", "no comma"),
    (card({"type": "Input.Toggle", "id": "a"}), "/body/0/title", "required"),
    (card({"type": "Table", "columns": [{}], "rows": [{"cells": [cell({"type": "ActionSet", "actions": []})]}]}),
     "/body/0/rows/0/cells/0/items/0/type", "or one input, not ActionSet"),
    (card({"type": "Table", "columns": [{}], "rows": [{"cells": [cell({"type": "Input.Text", "id": "a"},
                                                                       text("and more"))]}]}),
     "/body/0/rows/0/cells/0/items", "holds nothing else"),
    (card({"type": "Table", "columns": [{}], "rows": [{"cells": [cell({"type": "Input.Text", "id": "a",
                                                                       "isMultiline": True})]}]}),
     "/body/0/rows/0/cells/0/items/0", "on one line"),
    (card({"type": "Table", "columns": [{}], "rows": [{"cells": [cell({"type": "Input.Text", "id": "a"})]},
                                                      {"cells": [cell({"type": "Input.Text", "id": "a"})]}]}),
     "/body/0/rows/1/cells/0/items/0/id", "already the id of the input at /body/0/rows/0"),
    (card({"type": "Table", "columns": [{}], "rows": [{"cells": [cell({"type": "Input.Number", "id": "n",
                                                                       "value": 9, "max": 5})]}]}),
     "/body/0/rows/0/cells/0/items/0/value", "outside min and max"),
    (card({"type": "Table", "columns": [{}], "rows": [{"cells": [cell(), cell()]}]}),
     "/body/0/rows/0/cells", "more than the 1 allowed"),
    (card(actions=[{"type": "Action.Submit", "title": "Go"}]), "/actions/0/type", "not an action"),
    (card(actions=[{"type": "Action.Execute", "title": "Go"}]), "/actions/0/verb", "required"),
    (card(actions=[{"type": "Action.Execute", "verb": "rm -rf"}]), "/actions/0/verb", "the verb is"),
    (card(actions=[{"type": "Action.Execute", "verb": "go", "data": "text"}]), "/actions/0/data", "JSON object"),
    (card(actions=[{"type": "Action.OpenUrl", "url": "javascript:alert(1)"}]), "/actions/0/url", "https"),
    (card(actions=[{"type": "Action.OpenUrl", "url": "https://x.org/\x1b[2J"}]), "/actions/0/url", "control"),
    (card(text("x", requires={"adaptiveCards": "1.6"})), "/body/0/requires/adaptiveCards", "does not have"),
    (card(text("x", fallback=3), {"type": "Media"}), "/body/1/type", "'Media' is not an element"),
    (card({"type": "Media", "fallback": 3}), "/body/0/fallback", '"drop" or an element'),
    (card(text("x" + "\ud800")), "/body/0/text", "lone surrogate"),
    (card(text(float("nan"))), "/body/0/text", "not a JSON number"),
])
def test_what_is_not_in_the_subset_is_refused_naming_its_pointer(document: Any, pointer: str, words: str) -> None:
    with pytest.raises(CardError) as raised:
        parse_card(document, where="page demo/main")
    assert raised.value.pointer == pointer, str(raised.value)
    assert words in raised.value.problem
    assert str(raised.value).startswith(f"page demo/main#{pointer}: ")


def test_fallbacks_replace_drop_and_bubble_up_as_the_specification_says() -> None:
    parsed = parse_card(card(
        {"type": "Rating", "fallback": {"type": "Carousel", "fallback": text("stars")}},
        {"type": "Media", "fallback": "drop"},
        {"type": "Container", "items": [text("kept?"), {"type": "Media"}],
         "fallback": {"type": "Container", "items": [{"type": "Input.Text", "id": "same"}]}},
        text("needs 1.2", requires={"adaptiveCards": "1.2"}),
        text("needs 2", requires={"adaptiveCards": "2.0", "acme": "*"}, fallback=text("older")),
        text("hidden", isVisible=False),
        actions=[{"type": "Action.Submit", "fallback": {"type": "Action.Execute", "verb": "go"}},
                 {"type": "Action.ShowCard", "fallback": "drop"}],
    ))
    assert plain_text(parsed).splitlines() == ["stars", "same: <empty>  (same)", "needs 1.2", "older", "[go] (go)"]
    assert parsed.body[0].pointer == "/body/0/fallback/fallback"
    # The same input id in an element and its fallback is one input, not two.
    assert [item.id for item in parsed.inputs()] == ["same"]


def test_the_bounds_are_kept() -> None:
    small = CardLimits(max_depth=3, max_elements=5, max_text=10, max_total_text=25, max_document_bytes=600,
                       max_image_bytes=8)
    nested: dict[str, Any] = text("deep")
    for _ in range(3):
        nested = {"type": "Container", "items": [nested]}
    cases = [
        (card(nested), "/body/0/items/0/items/0/items/0", "nest more than 3 deep"),
        (card(*[text("a")] * 3, {"type": "Container", "items": [text("b")] * 2}), "/body/3/items/1",
         "more than 5 elements"),
        (card(*[text("a")] * 6), "/body", "6 elements, more than the 5 allowed"),
        (card(text("x" * 11)), "/body/0/text", "more than the 10"),
        (card(*[text("x" * 10)] * 3), "/body/2/text", "more than the 25"),
        (card(text("x" * 10), fallbackText="y" * 600), "", "more than the 600"),
        (card({"type": "Image", "url": "data:image/png;base64," + base64.b64encode(b"x" * 9).decode()}),
         "/body/0/url", "more than 8 bytes"),
    ]
    for document, pointer, words in cases:
        with pytest.raises(CardError) as raised:
            parse_card(document, limits=small)
        assert (raised.value.pointer, words in raised.value.problem) == (pointer, True), str(raised.value)
    # Nesting past the JSON bound anywhere (an action's data) is named, not a RecursionError.
    data: Any = {}
    for _ in range(5000):
        data = {"a": data}
    with pytest.raises(CardError, match="nested more than"):
        parse_card(card(actions=[{"type": "Action.Execute", "verb": "go", "data": data}]))


def test_hostile_text_reaches_the_plain_face_escaped() -> None:
    hostile = "\x1b]52;c;cHdu\x07\x1b[2J\r\u202eevil\x9b31m"
    parsed = parse_card(card(text(hostile), {"type": "FactSet", "facts": [{"title": hostile, "value": hostile}]},
                             {"type": "Input.ChoiceSet", "id": "c", "label": hostile,
                              "choices": [{"title": hostile, "value": "v"}]},
                             actions=[{"type": "Action.Execute", "title": hostile, "verb": "go"}]))
    shown = plain_text(parsed)
    assert "\x1b" not in shown and "\r" not in shown and "\u202e" not in shown and "\x9b" not in shown
    assert "\\u001b]52;c;cHdu\\u0007" in shown and "\\u202eevil" in shown
    assert isinstance(parsed.body[2], ChoiceSetInput)


def test_an_editable_grid_holds_one_input_a_cell_within_its_bounds() -> None:
    """A Table's cells may hold one input each (an editable, typed grid): collected like
    any input, drawn as its value in the plain face, at most ``max_cell_inputs``."""
    def row(number: int) -> dict:
        return {"cells": [cell(text(str(number))), cell({"type": "Input.Text", "id": f"r{number}.name",
                                                         "value": f"n{number}\x1b[2J", "label": "Name"}),
                          cell({"type": "Input.Number", "id": f"r{number}.age", "value": number}),
                          cell({"type": "Input.Toggle", "id": f"r{number}.ok", "title": "ok", "value": "true"})]}
    grid = {"type": "Table", "columns": [{}, {}, {}, {}],
            "rows": [{"cells": [cell(text(h)) for h in ("row", "Name", "Age", "Ok")]}, row(1), row(2)]}
    parsed = parse_card(card(grid))
    assert [item.id for item in parsed.inputs()] == ["r1.name", "r1.age", "r1.ok", "r2.name", "r2.age", "r2.ok"]
    values, problems = input_values(parsed, {"r1.name": "Ann", "r1.age": "7", "r1.ok": False,
                                             "r2.name": "Bo", "r2.age": "x", "r2.ok": True})
    assert values["r1.age"] == 7 and values["r1.ok"] == "false" and [p.id for p in problems] == ["r2.age"]
    shown = plain_text(parsed)
    assert "1   | [n1\\u001b[2J] | [1] | [x]" in shown
    assert "\x1b" not in shown and "[inputs in the cells: r1.name, r1.age, r1.ok" in shown
    many = {"type": "Table", "columns": [{}],
            "rows": [{"cells": [cell({"type": "Input.Text", "id": f"i{n}"})]} for n in range(11)]}
    with pytest.raises(CardError) as raised:
        parse_card(card(many), limits=CardLimits(max_cell_inputs=10))
    assert raised.value.pointer == "/body/0/rows/10/cells/0/items/0" and "more than 10 inputs" in str(raised.value)
