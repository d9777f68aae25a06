"""Excel workbooks (.xlsx) with openpyxl: read as cells with their addresses, edited by
operations (set cells, append rows, add sheets), made from sheets of rows."""

from __future__ import annotations

import datetime as dt
import io
import re

from officedocs import files

SUFFIXES = (".xlsx", ".xlsm")
MAX_ROWS = 2000
"""The most rows of one sheet a read returns (the rest is said to be left out)."""
MAX_COLUMNS = 100
MAX_CELLS = 200_000
"""The most cells a read or an edit looks at in all."""
MAX_OPERATIONS = 1000
MAX_EDIT_UNPACKED = 32 * 1024 * 1024
"""A workbook is edited in memory whole: at most this many bytes unpacked."""
_CELL = re.compile(r"^[A-Z]{1,3}[1-9][0-9]{0,6}$")


def _open(data: bytes, shown: str, *, values: bool, read_only: bool = True):
    import openpyxl

    files.check_package(data, shown)
    try:
        return openpyxl.load_workbook(io.BytesIO(data), data_only=values, read_only=read_only)
    except Exception as exc:  # openpyxl raises many kinds on a broken package
        raise files.DocumentError(f"{shown} is not an Excel workbook openpyxl can open: "
                                  f"{type(exc).__name__}: {exc}") from None


def _shown(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _sheet_text(sheet, formulas, max_rows: int) -> tuple[list[str], dict, bool]:
    """The sheet's non-empty cells, one row a line (``A1: x | B1: y``), a formula shown
    with its cached value; the totals of each column's numbers. ``sheet`` holds the
    values, ``formulas`` the same sheet as written; both are read row by row."""
    from openpyxl.utils import get_column_letter

    lines: list[str] = []
    totals: dict[str, float] = {}
    cut = False
    written = formulas.iter_rows(max_col=MAX_COLUMNS)
    for index, row in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS)):
        if index >= max_rows:
            cut = True
            break
        as_written = next(written, ())
        cells = []
        for column, cell in enumerate(row, 1):
            value = cell.value
            address = f"{get_column_letter(column)}{getattr(cell, 'row', None) or index + 1}"
            formula = as_written[column - 1].value if column <= len(as_written) else None
            is_formula = isinstance(formula, str) and formula.startswith("=")
            if value is None and not is_formula:
                continue
            shown = _shown(value) if value is not None else "(not computed)"
            cells.append(f"{address}: {formula} → {shown}" if is_formula else f"{address}: {shown}")
            if isinstance(value, (int, float)) and not isinstance(value, bool) and not is_formula:
                letter = get_column_letter(column)
                totals[letter] = totals.get(letter, 0) + value
        if cells:
            lines.append(" | ".join(cells))
    return lines, {k: (int(v) if float(v).is_integer() else round(v, 10)) for k, v in totals.items()}, cut


def text_of_bytes(data: bytes, shown: str, max_rows: int = MAX_ROWS) -> tuple[str, list[dict], bool]:
    values = _open(data, shown, values=True)
    formulas = _open(data, shown, values=False)
    parts: list[str] = []
    sheets: list[dict] = []
    cut_any = False
    try:
        for sheet in values.worksheets:
            lines, totals, cut = _sheet_text(sheet, formulas[sheet.title], max_rows)
            cut_any |= cut
            try:
                dimensions = sheet.calculate_dimension()
            except Exception:  # a sheet that does not say its size
                dimensions = "size not given"
            parts.append(f"## Sheet {sheet.title} ({dimensions})")
            parts.extend(lines)
            if cut:
                parts.append(f"… only the first {max_rows} rows of this sheet are shown")
            sheets.append({"name": sheet.title, "dimensions": dimensions,
                           "column_totals": totals, "truncated": cut})
    finally:
        values.close()
        formulas.close()
    return "\n".join(parts) + "\n", sheets, cut_any


def read(args, ctx) -> dict:
    path, shown = files.locate(ctx, args.get("path"), SUFFIXES, "read_excel")
    data = files.read_bytes(path, shown)
    max_rows = max(1, min(int(args.get("max_rows") or MAX_ROWS), MAX_ROWS))
    text, sheets, rows_cut = text_of_bytes(data, shown, max_rows)
    text, chars_cut = files.clip(text)
    ctx.set_progress(1)
    note = []
    if rows_cut:
        note.append(f"only the first {max_rows} rows of each sheet are shown")
    if chars_cut:
        note.append(f"only the first {len(text)} characters are shown")
    return {"path": shown, "text": text, "sheets": sheets, "truncated": rows_cut or chars_cut,
            **({"note": "; ".join(note)} if note else {}),
            "column_totals_note": "column_totals add the numbers typed in each column; "
                                  "formula cells are left out"}


def _value(raw):
    if isinstance(raw, str) and raw.startswith("=") and len(raw) > 8192:
        raise ValueError("a formula is at most 8192 characters")
    return raw


def _sheet(workbook, name, number):
    if name is None:
        return workbook.active
    if name not in workbook.sheetnames:
        raise ValueError(f"operation {number}: there is no sheet {name!r}; the sheets are "
                         f"{', '.join(workbook.sheetnames)}")
    return workbook[name]


def _apply(workbook, operation: dict, number: int) -> str:
    op = operation.get("op")
    if op == "set_cell":
        cell = str(operation.get("cell", "")).upper()
        if not _CELL.match(cell):
            raise ValueError(f"operation {number}: {operation.get('cell')!r} is not a cell "
                             "address such as C7")
        _sheet(workbook, operation.get("sheet"), number)[cell] = _value(operation.get("value"))
        return f"set {cell}"
    if op == "append_row":
        values = operation.get("values")
        if not isinstance(values, list) or len(values) > MAX_COLUMNS:
            raise ValueError(f"operation {number}: append_row needs values, a list of at most "
                             f"{MAX_COLUMNS} cells")
        sheet = _sheet(workbook, operation.get("sheet"), number)
        sheet.append([_value(v) for v in values])
        return f"appended row {sheet.max_row}"
    if op == "add_sheet":
        name = str(operation.get("name") or "").strip()
        if not name or len(name) > 31 or any(c in name for c in "[]:*?/\\"):
            raise ValueError(f"operation {number}: a sheet name has 1 to 31 characters and "
                             "none of [ ] : * ? / \\")
        if name in workbook.sheetnames:
            raise ValueError(f"operation {number}: there is already a sheet {name!r}")
        workbook.create_sheet(name)
        return f"added sheet {name}"
    raise ValueError(f"operation {number}: unknown op {op!r}: use set_cell, append_row or add_sheet")


def _bytes(workbook) -> bytes:
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def edit(args, ctx) -> dict:
    path, shown = files.locate(ctx, args.get("path"), SUFFIXES, "edit_excel")
    data = files.read_bytes(path, shown)
    before, _sheets, cut = text_of_bytes(data, shown)
    if cut or files.unpacked_size(data) > MAX_EDIT_UNPACKED:
        raise files.DocumentError(f"{shown} is too large to edit here (more than {MAX_ROWS} "
                                  f"rows in a sheet, or more than {MAX_EDIT_UNPACKED} bytes "
                                  "unpacked); nothing was changed")
    workbook = _open(data, shown, values=False, read_only=False)
    operations = args.get("operations") or []
    if not operations or len(operations) > MAX_OPERATIONS:
        raise ValueError(f"give 1 to {MAX_OPERATIONS} operations: set_cell, append_row, add_sheet")
    done = [_apply(workbook, operation, number) for number, operation in enumerate(operations, 1)]
    new = _bytes(workbook)
    after, _sheets, _cut = text_of_bytes(new, shown)
    result = files.save(ctx, path, shown, read_before=data, data=new, before=before, after=after)
    return {**result, "done": done,
            "note": "formulas are saved as written; Excel or LibreOffice computes them when "
                    "the file is opened"}


def create(args, ctx) -> dict:
    import openpyxl

    path, shown, existing = files.target(ctx, args, SUFFIXES, "create_excel")
    sheets = args.get("sheets") or []
    if not sheets:
        raise ValueError("give sheets: a list of {name, rows}")
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    cells = 0
    for number, sheet in enumerate(sheets, 1):
        name = str(sheet.get("name") or f"Sheet{number}")
        _apply(workbook, {"op": "add_sheet", "name": name}, number)
        for row in sheet.get("rows") or []:
            cells += len(row) if isinstance(row, list) else 0
            if cells > MAX_CELLS:
                raise ValueError(f"at most {MAX_CELLS} cells in one workbook")
            _apply(workbook, {"op": "append_row", "sheet": name, "values": row}, number)
    new = _bytes(workbook)
    before = text_of_bytes(existing, shown)[0] if existing is not None else ""
    after = text_of_bytes(new, shown)[0]
    return files.save(ctx, path, shown, read_before=existing, data=new, before=before, after=after)
