"""The card widget: a card document drawn with Textual's widgets, its inputs collected and
checked, an Action.Execute posted to the screen; hostile text drawn as the characters it is."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Button, DataTable, Input, Select, SelectionList, Switch
from visible import screen_text, terminal_update, until_shown

from workbench.cards import parse_card
from workbench.tui.widgets.card_view import CardView

DOCUMENT: dict[str, Any] = {"type": "AdaptiveCard", "version": "1.5", "body": [
    {"type": "TextBlock", "text": "Add an event", "size": "large", "weight": "bolder"},
    {"type": "FactSet", "facts": [{"title": "Calendar", "value": "Home"}]},
    {"type": "Table", "columns": [{}, {}], "rows": [
        {"type": "TableRow", "cells": [{"type": "TableCell", "items": [{"type": "TextBlock", "text": "Day"}]},
                                       {"type": "TableCell", "items": [{"type": "TextBlock", "text": "Title"}]}]},
        {"type": "TableRow", "cells": [{"type": "TableCell", "items": [{"type": "TextBlock", "text": "Mon"}]},
                                       {"type": "TableCell", "items": [{"type": "TextBlock", "text": "Gym"}]}]}]},
    {"type": "Input.Text", "id": "title", "label": "Title", "isRequired": True},
    {"type": "Input.Number", "id": "guests", "label": "Guests", "min": 1, "max": 9, "value": 2},
    {"type": "Input.Toggle", "id": "all_day", "title": "All day"},
    {"type": "Input.ChoiceSet", "id": "zone", "label": "Zone", "value": "Europe/Rome",
     "choices": [{"title": "Rome", "value": "Europe/Rome"}, {"title": "Lima", "value": "America/Lima"}]},
    {"type": "Input.ChoiceSet", "id": "tags", "label": "Tags", "isMultiSelect": True,
     "choices": [{"title": "Work", "value": "work"}, {"title": "Home", "value": "home"}]},
], "actions": [{"type": "Action.Execute", "title": "Add", "verb": "event-create", "data": {"source": "page"}},
               {"type": "Action.OpenUrl", "title": "Help", "url": "https://example.org/help"}]}


class Harness(App):
    def __init__(self, view: CardView) -> None:
        super().__init__()
        self.view = view
        self.pressed: list[CardView.ActionPressed] = []

    def compose(self) -> ComposeResult:
        yield self.view

    def on_card_view_action_pressed(self, message: CardView.ActionPressed) -> None:
        self.pressed.append(message)


async def test_a_card_is_drawn_its_inputs_checked_and_its_action_posted() -> None:
    view = CardView(parse_card(DOCUMENT))
    app = Harness(view)
    async with app.run_test(size=(90, 60)) as pilot:
        await until_shown(pilot, lambda: "Add an event" in screen_text(app))
        shown = screen_text(app)
        assert "Calendar" in shown and "Home" in shown and "Help ↗ https://example.org/help" in shown
        table = view.query_one(DataTable)
        assert table.row_count == 1 and "Gym" in shown
        await pilot.click("#" + view.query(Button).first().id)
        await until_shown(pilot, lambda: "Title is required" in view.problems)
        assert app.pressed == [] and view.input_widget("title").has_focus
        title = view.input_widget("title")
        assert isinstance(title, Input)
        await pilot.press(*"Dinner")
        switch = view.input_widget("all_day")
        assert isinstance(switch, Switch)
        switch.value = True
        tags = view.input_widget("tags")
        assert isinstance(tags, SelectionList)
        tags.select("home")
        zone = view.input_widget("zone")
        assert isinstance(zone, Select)
        zone.value = "America/Lima"
        await pilot.click("#" + view.query(Button).first().id)
        await until_shown(pilot, lambda: app.pressed)
        message = app.pressed[0]
        assert message.verb == "event-create" and message.control is view
        assert message.data == {"source": "page", "title": "Dinner", "guests": 2, "all_day": "true",
                                "zone": "America/Lima", "tags": "home"}
        assert view.problems == ""


async def test_hostile_card_text_is_drawn_as_its_characters_never_as_sequences_or_markup() -> None:
    hostile = "[b]\x1b]52;c;cHdu\x07\x1b[2J\u202eboom[/b] [@click=app.quit]q[/]"
    document = {"type": "AdaptiveCard", "version": "1.5", "body": [
        {"type": "TextBlock", "text": hostile, "wrap": True},
        {"type": "FactSet", "facts": [{"title": hostile, "value": hostile}]},
        {"type": "Input.Text", "id": "a", "label": hostile, "placeholder": hostile},
        {"type": "Input.ChoiceSet", "id": "b", "label": "pick", "placeholder": "[/] [bold " + hostile,
         "choices": [{"title": hostile, "value": "x"}]},
        {"type": "Input.ChoiceSet", "id": "c", "label": "[/]", "isMultiSelect": True,
         "choices": [{"title": "[/]", "value": "y"}]},
        {"type": "Table", "columns": [{}], "rows": [{"type": "TableRow", "cells": [
            {"type": "TableCell", "items": [{"type": "TextBlock", "text": hostile}]}]}]},
    ], "actions": [{"type": "Action.Execute", "title": hostile, "verb": "go"}]}
    view = CardView(parse_card(document))
    app = Harness(view)
    async with app.run_test(size=(120, 40)) as pilot:
        await until_shown(pilot, lambda: "boom" in screen_text(app))
        shown = screen_text(app)
        assert "\x1b" not in shown and "\u202e" not in shown and "\x07" not in shown
        # Markup in a card is text: the tags are shown, and none of them was acted on.
        assert "[b]" in shown and "[@click=app.quit]q[/]" in shown
        # The choice set's prompt (which Select reads as markup) is the card's text too.
        assert shown.count("[@click=app.quit]q[/]") >= 4 and "[/] [bold" in shown
        # What Textual would write to the terminal holds no sequence of the card's.
        written = terminal_update(app).render_segments(app.console)
        assert "\x1b]52" not in written and "\x1b[2J" not in written and "\u202e" not in written
        await pilot.click("#" + view.query(Button).first().id)
        await until_shown(pilot, lambda: app.pressed)
        # Nothing was entered or chosen: no value is sent, and the app is still running.
        assert app.pressed[0].data == {} and app.is_running


GRID: dict[str, Any] = {"type": "AdaptiveCard", "version": "1.5", "body": [
    {"type": "Table", "columns": [{}, {}, {}, {}], "rows": [
        {"type": "TableRow", "cells": [{"type": "TableCell", "items": [{"type": "TextBlock", "text": h}]}
                                       for h in ("row", "Name", "Age", "Active")]},
        *({"type": "TableRow", "cells": [
            {"type": "TableCell", "items": [{"type": "TextBlock", "text": str(n)}]},
            {"type": "TableCell", "items": [{"type": "Input.Text", "id": f"r{n}.name", "value": f"p{n}\x1b[31m"}]},
            {"type": "TableCell", "items": [{"type": "Input.Number", "id": f"r{n}.age", "value": n}]},
            {"type": "TableCell", "items": [{"type": "Input.Toggle", "id": f"r{n}.on", "title": "on"}]}]}
          for n in (1, 2))]}],
    "actions": [{"type": "Action.Execute", "title": "Save", "verb": "rows-save"}]}


async def test_a_table_of_inputs_is_an_editable_grid_walked_with_the_keyboard() -> None:
    view = CardView(parse_card(GRID))
    app = Harness(view)
    async with app.run_test(size=(90, 20)) as pilot:
        await until_shown(pilot, lambda: "Active" in screen_text(app))
        assert not view.query(DataTable)  # a grid of widgets, one line a row
        assert "\x1b" not in screen_text(app) and "p1" in screen_text(app)
        view.input_widget("r1.name").focus()
        await pilot.press("ctrl+u", *"Ann", "tab")  # tab walks the row: Name, Age, Active
        assert app.focused is view.input_widget("r1.age")
        await pilot.press("ctrl+u", *"41", "tab", "space")
        await until_shown(pilot, lambda: view.entered()["r1.on"] is True)
        for _ in range(4):  # row 2's three cells, then the button
            await pilot.press("tab")
        assert isinstance(app.focused, Button)
        await pilot.press("enter")
        await until_shown(pilot, lambda: app.pressed)
        assert app.pressed[0].data == {"r1.name": "Ann", "r1.age": 41, "r1.on": "true",
                                       "r2.name": "p2[31m", "r2.age": 2, "r2.on": "false"}
