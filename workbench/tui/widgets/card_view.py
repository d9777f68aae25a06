"""A card document drawn with Textual's own widgets.

``CardView(card)`` draws a parsed ``Card`` (``workbench.cards``, the model the core
returns): text blocks as ``Static``, facts as a two-column grid, tables as a
``DataTable``, inputs as ``Input``/``TextArea``/``Switch``/``Select``/``SelectionList``,
actions as ``Button``. When the person presses an ``Action.Execute`` button, the view
checks the inputs' values against the card (required, bounds, forms) and either shows
what is wrong under the card or posts ``CardView.ActionPressed`` with the verb and the
data merged with the values; the screen that holds the view decides what runs. An
``Action.OpenUrl`` is shown as its link and never opened.

Every text of the card is outside text: it is drawn as plain ``Content`` (never read
as Textual markup) after ``workbench.text.strip``, so no escape, bidi control or markup
tag in a card reaches the terminal as anything but the characters it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.markup import escape
from textual.message import Message
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    DataTable,
    Input,
    Select,
    SelectionList,
    Static,
    Switch,
    TextArea,
)

from workbench.cards import (
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
    action_data,
    cell_text,
    input_values,
)
from workbench.text import strip


def safe(text: str) -> Content:
    """Card text as plain content a terminal may be sent (no markup is read in it)."""
    return Content(strip(text))


def one_line_text(text: str) -> str:
    """Card text on one line, safe for a terminal."""
    return " ".join(strip(text).split())


def one_line(text: str) -> Content:
    return Content(one_line_text(text))


_CELL_RESTRICT: dict[type, str] = {DateInput: r"[0-9-]*", TimeInput: r"[0-9:]*"}
"""What a date or a time input in a grid's cell may be typed with."""
_CELL_LENGTH: dict[type, int] = {DateInput: 10, TimeInput: 5}
"""How long a date or a time in a grid's cell is at most."""


class CardView(Vertical):
    """One card document, drawn; its inputs' values collected.

    Args:
        card: The parsed card.
        name: The widget's name.
        id: The widget's id.
        classes: Its CSS classes.
    """

    DEFAULT_CSS = """
    CardView {
        height: auto;
        padding: 0 1;
    }
    CardView .card--text { height: auto; }
    CardView .card--text.-size-large, CardView .card--text.-size-extraLarge { text-style: bold; }
    CardView .card--text.-size-medium { text-style: bold; }
    CardView .card--text.-weight-bolder { text-style: bold; }
    CardView .card--text.-weight-lighter, CardView .card--text.-subtle { color: $text-muted; }
    CardView .card--text.-color-accent { color: $accent; }
    CardView .card--text.-color-good { color: $success; }
    CardView .card--text.-color-warning { color: $warning; }
    CardView .card--text.-color-attention { color: $error; }
    CardView .card--text.-nowrap { text-wrap: nowrap; text-overflow: ellipsis; }
    CardView .card--facts { height: auto; }
    CardView .card--fact { height: auto; }
    CardView .card--fact-title { width: auto; max-width: 40%; text-style: bold; padding-right: 2; }
    CardView .card--fact-value { width: 1fr; }
    CardView DataTable.card--table { height: auto; max-height: 24; }
    CardView .card--grid { height: auto; grid-gutter: 0 1; grid-rows: 1; }
    CardView .card--cell { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    CardView .card--cell.-header { text-style: bold; }
    CardView .card--cell-input { height: 1; width: 1fr; }
    CardView .card--container { height: auto; }
    CardView .card--container.-style-emphasis { background: $boost; }
    CardView .card--container.-style-good { border-left: thick $success; }
    CardView .card--container.-style-attention { border-left: thick $error; }
    CardView .card--container.-style-warning { border-left: thick $warning; }
    CardView .card--container.-style-accent { border-left: thick $accent; }
    CardView .card--columns { height: auto; }
    CardView .card--column { height: auto; width: 1fr; padding-right: 1; }
    CardView .card--column.-auto { width: auto; }
    CardView .card--image { height: auto; color: $text-muted; }
    CardView .card--label { height: auto; margin-top: 1; }
    CardView .card--toggle { height: auto; }
    CardView .card--toggle Static { width: 1fr; padding: 1 0 0 1; }
    CardView TextArea.card--input { height: 6; }
    CardView SelectionList.card--input { height: auto; max-height: 10; }
    CardView .card--actions { height: auto; margin-top: 1; }
    CardView .card--actions Button { margin-right: 1; }
    CardView .card--link { height: auto; color: $accent; }
    CardView .card--problems { height: auto; color: $error; display: none; }
    CardView .card--problems.-shown { display: block; }
    """

    @dataclass
    class ActionPressed(Message):
        """The person chose an ``Action.Execute`` and the inputs' values are valid."""

        card_view: CardView
        action: ExecuteAction
        verb: str
        data: dict[str, Any]
        """The action's data, the inputs' values merged in."""

        @property
        def control(self) -> CardView:
            return self.card_view

    def __init__(self, card: Card, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.card = card
        self._inputs: dict[str, tuple[CardInput, Widget]] = {}
        self._actions: dict[str, ExecuteAction] = {}

    # Drawing

    def compose(self) -> ComposeResult:
        for element in self.card.body:
            yield from self._element(element)
        if self.card.actions:
            yield self._action_row(self.card.actions)
        yield Static(classes="card--problems")

    def _element(self, element: CardElement) -> ComposeResult:
        if isinstance(element, TextBlock):
            classes = [f"card--text -size-{element.size} -weight-{element.weight} -color-{element.color}"]
            if element.is_subtle:
                classes.append("-subtle")
            if not element.wrap:
                classes.append("-nowrap")
            yield Static(safe(element.text), classes=" ".join(classes))
        elif isinstance(element, FactSet):
            with Vertical(classes="card--facts"):
                for fact in element.facts:
                    with Horizontal(classes="card--fact"):
                        yield Static(one_line(fact.title), classes="card--fact-title")
                        yield Static(safe(fact.value), classes="card--fact-value")
        elif isinstance(element, Table):
            yield self._table(element)
        elif isinstance(element, Container):
            with Vertical(classes=f"card--container -style-{element.style}"):
                for item in element.items:
                    yield from self._element(item)
        elif isinstance(element, ColumnSet):
            with Horizontal(classes="card--columns"):
                for column in element.columns:
                    width = "-auto" if column.width == "auto" else ""
                    with Vertical(classes=f"card--column {width}"):
                        for item in column.items:
                            yield from self._element(item)
        elif isinstance(element, Image):
            yield Static(one_line(f"[image: {element.alt_text or element.media_type}]"),
                         classes="card--image")
        elif isinstance(element, ActionSet):
            if element.actions:
                yield self._action_row(element.actions)
        else:
            yield from self._input(element)

    def _table(self, table: Table) -> Widget:
        if any(isinstance(item, INPUT_TYPES) for row in table.rows for cell in row for item in cell):
            return self._input_grid(table)
        grid: DataTable = DataTable(classes="card--table", cursor_type="none", zebra_stripes=True,
                                    show_header=table.first_row_as_header and bool(table.rows))
        # Rich Text, which a DataTable measures; like Content it is never read as markup.
        rows = [[Text(" ".join(strip(cell_text(cell)).split())) for cell in row]
                + [Text("")] * (table.columns - len(row)) for row in table.rows]
        if table.first_row_as_header and rows:
            header, rows = rows[0], rows[1:]
        else:
            header = [Text("")] * table.columns
        grid.add_columns(*header)
        grid.add_rows(rows)
        return grid

    def _input_grid(self, table: Table) -> Widget:
        """A table whose cells hold inputs (an editable grid): one line a row, each cell
        its text or its input's widget, compact; tab walks the inputs row by row."""
        cells: list[Widget] = []
        for number, row in enumerate(table.rows):
            header = number == 0 and table.first_row_as_header
            for cell in tuple(row) + ((),) * (table.columns - len(row)):
                item = cell[0] if len(cell) == 1 and isinstance(cell[0], INPUT_TYPES) else None
                if item is None:
                    text = one_line(cell_text(cell))
                    cells.append(Static(text, classes="card--cell -header" if header else "card--cell"))
                else:
                    cells.append(self._cell_widget(item))
        grid = Grid(*cells, classes="card--grid")
        grid.styles.grid_size_columns = table.columns
        return grid

    def _cell_widget(self, item: CardInput) -> Widget:
        """The one-line widget of an input in a table's cell."""
        key = f"card-input-{len(self._inputs)}"
        widget: Widget
        if isinstance(item, ToggleInput):
            widget = Checkbox(one_line_text(item.title), value=item.on, compact=True, id=key,
                              classes="card--input card--cell-input")
        elif isinstance(item, ChoiceSetInput):
            widget = Select[str]([(one_line(choice.title), choice.value) for choice in item.choices],
                                 prompt=escape(one_line_text(item.placeholder)) or "–",
                                 value=item.value if item.value else Select.NULL, allow_blank=True,
                                 compact=True, id=key, classes="card--input card--cell-input")
        elif isinstance(item, NumberInput):
            value = "" if item.value is None else (str(int(item.value)) if float(item.value).is_integer()
                                                   else str(item.value))
            widget = Input(value=value, placeholder=strip(item.placeholder), type="number", compact=True,
                           id=key, classes="card--input card--cell-input")
        else:
            assert isinstance(item, (TextInput, DateInput, TimeInput))
            restrict = _CELL_RESTRICT.get(type(item))
            length = _CELL_LENGTH.get(type(item)) or getattr(item, "max_length", None) or 0
            widget = Input(value=strip(item.value), placeholder=strip(item.placeholder), restrict=restrict,
                           max_length=length, compact=True, id=key, classes="card--input card--cell-input")
        if item.label:
            widget.tooltip = safe(item.label)
        self._inputs[item.id] = (item, widget)
        return widget

    def _input(self, item: CardInput) -> ComposeResult:
        key = f"card-input-{len(self._inputs)}"
        widget: Widget
        if isinstance(item, ToggleInput):
            if item.label:
                yield Static(self._label(item), classes="card--label")
            switch = Switch(value=item.on, id=key, classes="card--input")
            self._inputs[item.id] = (item, switch)
            with Horizontal(classes="card--toggle"):
                yield switch
                yield Static(one_line(item.title))
            return
        yield Static(self._label(item), classes="card--label")
        if isinstance(item, ChoiceSetInput):
            options = [(one_line(choice.title), choice.value) for choice in item.choices]
            if item.is_multi_select:
                chosen = set(item.value.split(",")) if item.value else set()
                widget = SelectionList[str](*[(title, value, value in chosen) for title, value in options],
                                            id=key, classes="card--input")
            else:
                # Select draws its prompt as Textual markup: the card's text is escaped.
                widget = Select[str](options, prompt=escape(one_line_text(item.placeholder)) or "Choose…",
                                     value=item.value if item.value else Select.NULL,
                                     allow_blank=True, id=key, classes="card--input")
        elif isinstance(item, TextInput) and item.is_multiline:
            widget = TextArea(strip(item.value), id=key, classes="card--input", soft_wrap=True)
        elif isinstance(item, NumberInput):
            value = "" if item.value is None else (str(int(item.value)) if float(item.value).is_integer()
                                                   else str(item.value))
            widget = Input(value=value, placeholder=strip(item.placeholder), type="number", id=key,
                           classes="card--input")
        elif isinstance(item, DateInput):
            widget = Input(value=strip(item.value), placeholder=strip(item.placeholder) or "YYYY-MM-DD",
                           restrict=r"[0-9-]*", max_length=10, id=key, classes="card--input")
        elif isinstance(item, TimeInput):
            widget = Input(value=strip(item.value), placeholder=strip(item.placeholder) or "HH:MM",
                           restrict=r"[0-9:]*", max_length=5, id=key, classes="card--input")
        else:
            assert isinstance(item, TextInput)
            widget = Input(value=strip(item.value), placeholder=strip(item.placeholder),
                           max_length=item.max_length or 0, id=key, classes="card--input")
        self._inputs[item.id] = (item, widget)
        yield widget

    @staticmethod
    def _label(item: CardInput) -> Content:
        label = one_line(item.label or item.id)
        return label + Content(" *") if item.is_required else label

    def _action_row(self, actions: tuple[CardAction, ...]) -> Widget:
        children: list[Widget] = []
        for action in actions:
            if isinstance(action, ExecuteAction):
                key = f"card-action-{len(self._actions)}"
                self._actions[key] = action
                variant = {"positive": "success", "destructive": "error"}.get(action.style, "default")
                button = Button(one_line(action.title), id=key, variant=variant,  # type: ignore[arg-type]
                                disabled=not action.is_enabled, classes="card--action")
                if action.tooltip:
                    button.tooltip = safe(action.tooltip)
                children.append(button)
            elif isinstance(action, OpenUrlAction):
                children.append(Static(one_line(f"{action.title} ↗ {action.url}"), classes="card--link"))
        return Horizontal(*children, classes="card--actions")

    # Values

    def entered(self) -> dict[str, Any]:
        """What the person has entered in each input, by input id, as the widgets hold it."""
        values: dict[str, Any] = {}
        for input_id, (_item, widget) in self._inputs.items():
            if isinstance(widget, (Switch, Checkbox)):
                values[input_id] = widget.value
            elif isinstance(widget, SelectionList):
                values[input_id] = [value for value in widget.selected]
            elif isinstance(widget, Select):
                values[input_id] = "" if widget.value is Select.NULL else widget.value
            elif isinstance(widget, TextArea):
                values[input_id] = widget.text
            elif isinstance(widget, Input):
                values[input_id] = widget.value
        return values

    def input_widget(self, input_id: str) -> Widget:
        """The widget that holds the input ``input_id`` of the card."""
        return self._inputs[input_id][1]

    def show_problems(self, problems: list[str]) -> None:
        """Show ``problems`` under the card (an empty list hides them)."""
        box = self.query_one(".card--problems", Static)
        box.update(safe("\n".join(problems)))
        box.set_class(bool(problems), "-shown")

    @property
    def problems(self) -> str:
        """The problems shown under the card, as text ("" when none)."""
        box = self.query_one(".card--problems", Static)
        return str(box.content) if box.has_class("-shown") else ""

    @on(Button.Pressed, ".card--action")
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = self._actions.get(event.button.id or "")
        if action is None:
            return
        self.execute(action)

    def execute(self, action: ExecuteAction) -> bool:
        """Check the inputs for ``action`` and post ``ActionPressed``; show the problems
        instead where there are any. Returns whether the message was posted."""
        values, problems = input_values(self.card, self.entered())
        if problems and action.associated_inputs == "auto":
            self.show_problems([problem.message for problem in problems])
            first = next((problem.id for problem in problems if problem.id in self._inputs), None)
            if first is not None:
                self._inputs[first][1].focus()
            return False
        self.show_problems([])
        self.post_message(self.ActionPressed(self, action, action.verb, action_data(action, values)))
        return True
