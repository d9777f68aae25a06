"""The ``table`` question: rows of cells to edit, add and remove.

Each cell is a one-line text box, so Tab walks the table cell by cell and a click
puts the cursor in a cell. The answer is the rows as they are left, each an object
keyed by column name. Wide tables scroll sideways.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, HorizontalScroll, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Static

from workbench.tui.forms.question import Question
from workbench.tui.widgets.bubbles.sortable_table import table_cells

MIN_CELL = 10
MAX_CELL = 28


class TableRow(Horizontal):
    """One editable row: a text box per column and a button that removes the row."""

    DEFAULT_CSS = """
    TableRow {
        width: auto;
        height: 1;
        & > Input { margin-right: 1; }
        & > .table-row--remove { min-width: 3; width: 3; }
    }
    """

    def __init__(self, cells: list[str], widths: list[int]) -> None:
        super().__init__()
        self.cells = cells
        self.widths = widths

    def compose(self) -> ComposeResult:
        for cell, width in zip(self.cells, self.widths):
            field = Input(cell, compact=True, classes="table-row--cell")
            field.styles.width = width
            yield field
        yield Button("✕", compact=True, classes="table-row--remove", tooltip="Remove this row")

    @property
    def values(self) -> list[str]:
        return [field.value for field in self.query(".table-row--cell").results(Input)]


class TableQuestion(Question):
    """A ``table`` question: ``columns`` (names) and ``rows`` (lists of text).

    | Key | Does |
    | --- | --- |
    | tab, shift+tab | Next or previous cell |
    | enter | Next cell |
    | ctrl+n | Add a row after the current one |
    | ctrl+r | Remove the current row |
    """

    BINDINGS = [
        Binding("ctrl+n", "add_row", "Add row"),
        Binding("ctrl+r", "remove_row", "Remove row"),
    ]
    DEFAULT_CSS = """
    TableQuestion {
        & > HorizontalScroll {
            height: auto;
            max-height: 12;
            scrollbar-size: 1 1;
        }
        & Vertical.table-question--grid {
            width: auto;
            height: auto;
        }
        & .table-question--header {
            width: auto;
            height: 1;
            text-style: bold;
            color: $text-primary;
        }
        & .table-question--add {
            margin-top: 1;
        }
    }
    """

    def __init__(self, question: dict[str, Any], number: int | None = None) -> None:
        super().__init__(question, number)
        self.columns, self.initial_rows = table_cells(question.get("columns"), question.get("rows"))
        longest = [max([len(name), *(len(row[index]) for row in self.initial_rows)])
                   for index, name in enumerate(self.columns)]
        self.widths = [max(MIN_CELL, min(MAX_CELL, size + 2)) for size in longest]

    def compose_answer(self) -> ComposeResult:
        with HorizontalScroll(can_focus=False):
            with Vertical(classes="table-question--grid"):
                header = Content("")
                for name, width in zip(self.columns, self.widths):
                    header = Content.assemble(header, Content(name).truncate(width, ellipsis=True)
                                              .extend_right(max(0, width - len(name))), " ")
                yield Static(header, classes="table-question--header")
                for row in self.initial_rows:
                    yield TableRow(row, self.widths)
        yield Button("+ Add row", compact=True, classes="table-question--add")

    @property
    def grid(self) -> Vertical:
        return self.query_one(".table-question--grid", Vertical)

    @property
    def table_rows(self) -> list[TableRow]:
        return list(self.grid.query_children(TableRow))

    def answer(self) -> list[dict[str, str]]:
        return [dict(zip(self.columns, row.values)) for row in self.table_rows]

    # --- editing -------------------------------------------------------------

    def _current_row(self) -> TableRow | None:
        focused = self.screen.focused
        for node in (focused.ancestors_with_self if focused is not None else []):
            if isinstance(node, TableRow):
                return node
        return None

    async def add_row(self, after: TableRow | None = None) -> TableRow:
        """Add an empty row after ``after`` (at the end when None) and focus its first cell."""
        row = TableRow([""] * len(self.columns), self.widths)
        if after is not None:
            await self.grid.mount(row, after=after)
        else:
            await self.grid.mount(row)
        cells = row.query(".table-row--cell")
        if cells:
            cells.first().focus()
        return row

    async def remove_row(self, row: TableRow) -> None:
        """Remove ``row``; focus moves to the row that takes its place."""
        rows = self.table_rows
        index = rows.index(row)
        await row.remove()
        rows = self.table_rows
        if rows:
            target = rows[min(index, len(rows) - 1)]
            target.query(".table-row--cell").first().focus()
        else:
            self.query_one(".table-question--add", Button).focus()

    async def action_add_row(self) -> None:
        """Add a row after the current one."""
        await self.add_row(self._current_row())

    async def action_remove_row(self) -> None:
        """Remove the current row."""
        row = self._current_row()
        if row is not None:
            await self.remove_row(row)

    @on(Button.Pressed, ".table-question--add")
    async def _add_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        await self.add_row()

    @on(Button.Pressed, ".table-row--remove")
    async def _remove_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        row = event.button.parent
        if isinstance(row, TableRow):
            await self.remove_row(row)

    @on(Input.Submitted, ".table-row--cell")
    def _next_cell(self, event: Input.Submitted) -> None:
        event.stop()
        self.screen.focus_next()
