"""A read-only table whose rows sort by a column: a key or a click on its header.

Numbers sort as numbers when every cell of the column is one (blank cells last);
anything else sorts as text, ignoring case. Sorting the same column again reverses
it; the header of the sorted column carries ▲ or ▼.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.widgets import DataTable


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("_", "").strip())
    except ValueError:
        return None


def sort_key(cells: Sequence[str]):
    """How the cells of one column compare: as numbers when all of them are numbers."""
    numbers = [_number(cell) for cell in cells if cell.strip()]
    numeric = bool(numbers) and all(number is not None for number in numbers)

    def key(cell: str) -> tuple:
        if not cell.strip():
            return (1, 0.0, "")
        if numeric:
            return (0, _number(cell), "")
        return (0, 0.0, cell.casefold())

    return key


def table_cells(columns: Any, rows: Any) -> tuple[list[str], list[list[str]]]:
    """Columns and rows as text, every row as long as the widest: a tool's payload is
    only checked to be an object, so anything may be in it."""
    names = [str(column) for column in columns] if isinstance(columns, list) else []
    lines = [[_cell(cell) for cell in row] if isinstance(row, list) else [_cell(row)]
             for row in (rows if isinstance(rows, list) else [])]
    width = max([len(names), *(len(line) for line in lines)] or [0])
    names += [f"column {index + 1}" for index in range(len(names), width)]
    return names, [line + [""] * (width - len(line)) for line in lines]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


class SortableTable(DataTable):
    """``columns`` and ``rows`` in a table that sorts.

    | Key | Does |
    | --- | --- |
    | left, right | Pick a column |
    | s | Sort by the picked column; again to reverse |
    | click a header | Sort by that column; again to reverse |

    Args:
        columns: The header names.
        rows: The rows, each a list of cells (already as text, as long as ``columns``).
    """

    BINDINGS = [Binding("s", "sort_picked", "Sort column")]

    DEFAULT_CSS = """
    SortableTable {
        width: auto;
        max-width: 100%;
        height: auto;
        max-height: 14;
        scrollbar-size: 1 1;
    }
    """

    def __init__(self, columns: list[str], rows: list[list[str]], *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(zebra_stripes=True, cursor_type="cell", id=id, classes=classes)
        self.names = list(columns)
        self.rows_shown = [list(row) for row in rows]
        """The rows in the order shown."""
        self.sorted_by: int | None = None
        """The index of the column the rows are sorted by, if any."""
        self.descending = False
        self.show_cursor = False

    def on_mount(self) -> None:
        self._fill()

    def _label(self, index: int) -> Text:
        name = self.names[index]
        if index != self.sorted_by:
            return Text(name, style="bold")
        arrow = " ▼" if self.descending else " ▲"
        return Text.assemble((name, "bold"), arrow)

    def _fill(self) -> None:
        column = self.cursor_column
        self.clear(columns=True)
        for index in range(len(self.names)):
            self.add_column(self._label(index), key=str(index))
        for row in self.rows_shown:
            self.add_row(*(Text(cell) for cell in row))
        if self.names:
            self.move_cursor(column=min(column, len(self.names) - 1), animate=False)

    def sort_by(self, index: int) -> None:
        """Sort by column ``index``; sorting by the same column again reverses it."""
        if not 0 <= index < len(self.names):
            return
        self.descending = not self.descending if index == self.sorted_by else False
        self.sorted_by = index
        key = sort_key([row[index] for row in self.rows_shown])
        # Blank cells stay last in both directions.
        filled = [row for row in self.rows_shown if row[index].strip()]
        blank = [row for row in self.rows_shown if not row[index].strip()]
        filled.sort(key=lambda row: key(row[index]), reverse=self.descending)
        self.rows_shown = filled + blank
        self._fill()
        self.move_cursor(column=index, animate=False)

    def action_sort_picked(self) -> None:
        """Sort by the column under the cursor."""
        self.sort_by(self.cursor_column)

    @on(DataTable.HeaderSelected)
    def _header_clicked(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(event.column_index)

    def on_focus(self) -> None:
        self.show_cursor = True

    def on_blur(self) -> None:
        self.show_cursor = False
