"""Word documents (.docx) with python-docx: read as text with structure, edited by
operations, made from a list of blocks."""

from __future__ import annotations

import io

from officedocs import files

SUFFIXES = (".docx",)
MAX_OPERATIONS = 200


def _open(data: bytes, shown: str):
    import docx

    files.check_package(data, shown)
    try:
        return docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises many kinds on a broken package
        raise files.DocumentError(f"{shown} is not a Word document python-docx can open: "
                                  f"{type(exc).__name__}: {exc}") from None


def _heading_level(paragraph) -> int | None:
    name = (paragraph.style.name if paragraph.style is not None else "") or ""
    if name == "Title":
        return 1
    if name.startswith("Heading "):
        level = name.split(" ", 1)[1]
        return int(level) if level.isdigit() else None
    return None


def _paragraph_line(paragraph) -> str:
    text = paragraph.text
    level = _heading_level(paragraph)
    if level:
        return f"{'#' * min(level, 6)} {text}"
    name = (paragraph.style.name if paragraph.style is not None else "") or ""
    if name.startswith("List"):
        return f"- {text}"
    return text


def _table_lines(table) -> list[str]:
    lines = []
    for row in table.rows:
        lines.append("| " + " | ".join(cell.text.replace("\n", " ") for cell in row.cells) + " |")
    return lines


def text_of(document) -> str:
    """The document's text in order: headings as ``#`` lines, list items as ``-``,
    tables as ``| a | b |`` rows."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    lines: list[str] = []
    for block in document.element.body.iterchildren():
        tag = block.tag.rsplit("}", 1)[-1]
        if tag == "p":
            lines.append(_paragraph_line(Paragraph(block, document)))
        elif tag == "tbl":
            lines.extend(_table_lines(Table(block, document)))
    return "\n".join(lines) + ("\n" if lines else "")


def read(args, ctx) -> dict:
    path, shown = files.locate(ctx, args.get("path"), SUFFIXES, "read_word")
    document = _open(files.read_bytes(path, shown), shown)
    limit = int(args.get("max_chars") or files.MAX_TEXT_CHARS)
    text, cut = files.clip(text_of(document), min(limit, files.MAX_TEXT_CHARS))
    ctx.set_progress(1)
    return {"path": shown, "text": text, "truncated": cut,
            "paragraphs": len(document.paragraphs), "tables": len(document.tables),
            **({"note": f"only the first {len(text)} characters are shown"} if cut else {})}


def _add_block(document, block: dict) -> None:
    kind = block.get("type", "paragraph")
    if kind == "heading":
        document.add_heading(str(block.get("text", "")), level=max(0, min(int(block.get("level", 1)), 9)))
    elif kind == "paragraph":
        document.add_paragraph(str(block.get("text", "")))
    elif kind == "bullet":
        document.add_paragraph(str(block.get("text", "")), style="List Bullet")
    elif kind == "table":
        rows = block.get("rows") or []
        if not rows or not all(isinstance(r, list) for r in rows):
            raise ValueError("a table block needs rows: a list of rows, each a list of cells")
        width = max(len(r) for r in rows)
        table = document.add_table(rows=len(rows), cols=width)
        table.style = "Table Grid"
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                table.cell(r, c).text = "" if value is None else str(value)
    elif kind == "page_break":
        document.add_page_break()
    else:
        raise ValueError(f"unknown block type {kind!r}: use heading, paragraph, bullet, "
                         "table or page_break")


def _bytes(document) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def create(args, ctx) -> dict:
    import docx

    path, shown, existing = files.target(ctx, args, SUFFIXES, "create_word")
    blocks = args.get("blocks") or []
    document = docx.Document()
    if args.get("title"):
        document.core_properties.title = str(args["title"])[:255]
        document.add_heading(str(args["title"]), level=0)
    for block in blocks:
        _add_block(document, block)
    before = text_of(_open(existing, shown)) if existing is not None else ""
    return files.save(ctx, path, shown, read_before=existing, data=_bytes(document),
                      before=before, after=text_of(document))


def _replace_in_paragraph(paragraph, find: str, replace: str) -> int:
    """Replace ``find`` in one paragraph's runs: inside a run when it lies in one
    (keeping the formatting), else over the runs (the first run's formatting)."""
    runs = paragraph.runs
    text = "".join(run.text for run in runs)
    count = text.count(find)
    if not count:
        return 0
    if sum(run.text.count(find) for run in runs) == count:
        for run in runs:
            if find in run.text:
                run.text = run.text.replace(find, replace)
        return count
    runs[0].text = text.replace(find, replace)
    for run in runs[1:]:
        run.text = ""
    return count


def _paragraphs(document):
    yield from document.paragraphs
    for table in document.tables:
        for row in table.rows:
            for cell in row.cells:
                yield from cell.paragraphs


def edit(args, ctx) -> dict:
    path, shown = files.locate(ctx, args.get("path"), SUFFIXES, "edit_word")
    data = files.read_bytes(path, shown)
    document = _open(data, shown)
    before = text_of(document)
    operations = args.get("operations") or []
    if not operations:
        raise ValueError("give operations: replace_text, append_paragraph, append_heading, "
                         "append_bullet or append_table")
    if len(operations) > MAX_OPERATIONS:
        raise ValueError(f"at most {MAX_OPERATIONS} operations in one edit")
    done = []
    for number, operation in enumerate(operations, 1):
        op = operation.get("op")
        if op == "replace_text":
            find, replace = operation.get("find") or "", str(operation.get("replace", ""))
            if not find:
                raise ValueError(f"operation {number}: replace_text needs find")
            seen = set()  # a merged cell gives the same paragraphs more than once
            count = 0
            for paragraph in _paragraphs(document):
                if paragraph._p in seen:
                    continue
                seen.add(paragraph._p)
                count += _replace_in_paragraph(paragraph, find, replace)
            if not count:
                raise ValueError(f"operation {number}: {find!r} is not in {shown}; nothing "
                                 "was changed (it must lie within one paragraph)")
            done.append(f"replaced {count} × {find!r}")
        elif op in ("append_paragraph", "append_heading", "append_bullet", "append_table"):
            kind = {"append_paragraph": "paragraph", "append_heading": "heading",
                    "append_bullet": "bullet", "append_table": "table"}[op]
            _add_block(document, {**operation, "type": kind})
            done.append(op)
        else:
            raise ValueError(f"operation {number}: unknown op {op!r}: use replace_text, "
                             "append_paragraph, append_heading, append_bullet or append_table")
    result = files.save(ctx, path, shown, read_before=data, data=_bytes(document),
                        before=before, after=text_of(document))
    return {**result, "done": done}
