"""PDF files: read page by page with pypdf, made from a list of blocks with fpdf2."""

from __future__ import annotations

import io

from officedocs import files

SUFFIXES = (".pdf",)
MAX_PAGES = 200
"""The most pages a read returns (the rest is said to be left out)."""
MAX_BLOCKS = 2000


def _reader(data: bytes, shown: str):
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    if not data.lstrip()[:5].startswith(b"%PDF"):
        raise files.DocumentError(f"{shown} is not a PDF (it does not start with %PDF)")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise files.DocumentError(f"{shown} is encrypted with a password; it was not read")
        return reader
    except (PyPdfError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise files.DocumentError(f"{shown} is not a PDF pypdf can read: "
                                  f"{type(exc).__name__}: {exc}") from None


def pages_text(data: bytes, shown: str, limit: int = MAX_PAGES) -> tuple[list[str], int, bool]:
    """The text of the first ``limit`` pages, the page count, and whether pages were
    left out."""
    reader = _reader(data, shown)
    try:
        count = len(reader.pages)
        texts = []
        for index in range(min(count, limit)):
            texts.append(reader.pages[index].extract_text() or "")
    except files.DocumentError:
        raise
    except (RecursionError, Exception) as exc:  # a page tree that loops, a broken stream
        raise files.DocumentError(f"{shown} could not be read as a PDF: "
                                  f"{type(exc).__name__}: {str(exc)[:300]}") from None
    return texts, count, count > limit


def read(args, ctx) -> dict:
    path, shown = files.locate(ctx, args.get("path"), SUFFIXES, "read_pdf")
    data = files.read_bytes(path, shown)
    limit = max(1, min(int(args.get("max_pages") or MAX_PAGES), MAX_PAGES))
    texts, count, pages_cut = pages_text(data, shown, limit)
    text = "".join(f"## Page {n}\n{t.rstrip()}\n" for n, t in enumerate(texts, 1))
    text, chars_cut = files.clip(text)
    ctx.set_progress(1)
    note = []
    if pages_cut:
        note.append(f"only the first {limit} of {count} pages are shown")
    if chars_cut:
        note.append(f"only the first {len(text)} characters are shown")
    return {"path": shown, "text": text, "pages": count, "truncated": pages_cut or chars_cut,
            **({"note": "; ".join(note)} if note else {})}


def _latin(text: str) -> tuple[str, int]:
    """The text in the core fonts' Latin-1, and how many characters had to be replaced."""
    out = []
    replaced = 0
    for char in text:
        if char in "\u2018\u2019":
            out.append("'")
        elif char in "\u201c\u201d":
            out.append('"')
        elif char in "\u2013\u2014":
            out.append("-")
        elif char == "\u2022":
            out.append("-")
        elif ord(char) < 256:
            out.append(char)
        else:
            out.append("?")
            replaced += 1
    return "".join(out), replaced


def create(args, ctx) -> dict:
    from fpdf import FPDF

    path, shown, existing = files.target(ctx, args, SUFFIXES, "create_pdf")
    blocks = args.get("blocks") or []
    if len(blocks) > MAX_BLOCKS:
        raise ValueError(f"at most {MAX_BLOCKS} blocks in one PDF")
    document = FPDF(format="A4")
    document.set_auto_page_break(auto=True, margin=15)
    document.add_page()
    replaced = 0

    def write(text: str, size: int, style: str = "", indent: str = "") -> None:
        nonlocal replaced
        clean, lost = _latin(text)
        replaced += lost
        document.set_font("Helvetica", style=style, size=size)
        document.multi_cell(0, size * 0.55, indent + clean, new_x="LMARGIN", new_y="NEXT")
        document.ln(size * 0.25)

    if args.get("title"):
        document.set_title(_latin(str(args["title"]))[0])
        write(str(args["title"]), 20, "B")
    for block in blocks:
        kind = block.get("type", "paragraph")
        if kind == "heading":
            level = max(1, min(int(block.get("level", 1)), 3))
            write(str(block.get("text", "")), {1: 16, 2: 14, 3: 12}[level], "B")
        elif kind == "paragraph":
            write(str(block.get("text", "")), 11)
        elif kind == "bullet":
            write(str(block.get("text", "")), 11, indent="- ")
        elif kind == "table":
            rows = block.get("rows") or []
            if not rows or not all(isinstance(r, list) for r in rows):
                raise ValueError("a table block needs rows: a list of rows, each a list of cells")
            document.set_font("Helvetica", size=10)
            with document.table() as table:
                for row in rows:
                    cells = table.row()
                    for value in row:
                        clean, lost = _latin("" if value is None else str(value))
                        replaced += lost
                        cells.cell(clean)
            document.ln(3)
        elif kind == "page_break":
            document.add_page()
        else:
            raise ValueError(f"unknown block type {kind!r}: use heading, paragraph, bullet, "
                             "table or page_break")
    data = bytes(document.output())
    before = ""
    if existing is not None:
        texts, _count, _cut = pages_text(existing, shown)
        before = "".join(f"## Page {n}\n{t.rstrip()}\n" for n, t in enumerate(texts, 1))
    texts, _count, _cut = pages_text(data, shown)
    after = "".join(f"## Page {n}\n{t.rstrip()}\n" for n, t in enumerate(texts, 1))
    result = files.save(ctx, path, shown, read_before=existing, data=data, before=before, after=after)
    if replaced:
        result["note"] = (f"{replaced} characters outside Latin-1 were written as '?' (the PDF "
                          "uses the standard fonts)")
    result["pages"] = _count
    return result
