"""PowerPoint decks (.pptx) with python-pptx: read slide by slide, edited by operations
(add a slide, replace text, delete a slide), made from a list of slides."""

from __future__ import annotations

import io

from officedocs import files

SUFFIXES = (".pptx",)
MAX_SLIDES = 500
MAX_OPERATIONS = 200


def _open(data: bytes | None, shown: str):
    from pptx import Presentation

    if data is None:
        return Presentation()
    files.check_package(data, shown)
    try:
        return Presentation(io.BytesIO(data))
    except Exception as exc:  # python-pptx raises many kinds on a broken package
        raise files.DocumentError(f"{shown} is not a PowerPoint deck python-pptx can open: "
                                  f"{type(exc).__name__}: {exc}") from None


def _shape_lines(shape) -> list[str]:
    lines: list[str] = []
    if getattr(shape, "has_table", False) and shape.has_table:
        for row in shape.table.rows:
            lines.append("| " + " | ".join(c.text.replace("\n", " ") for c in row.cells) + " |")
    elif shape.has_text_frame:
        for paragraph in shape.text_frame.paragraphs:
            text = "".join(run.text for run in paragraph.runs)
            if text.strip():
                lines.append(("  " * paragraph.level) + "- " + text)
    elif shape.shape_type is not None and getattr(shape, "shapes", None) is not None:
        for inner in shape.shapes:  # a group
            lines.extend(_shape_lines(inner))
    return lines


def text_of(deck, limit: int = MAX_SLIDES) -> tuple[str, bool]:
    """Each slide in order: ``## Slide N: title``, then its shapes' text (tables as
    rows), then its notes."""
    parts: list[str] = []
    for number, slide in enumerate(deck.slides, 1):
        if number > limit:
            parts.append(f"… only the first {limit} slides are shown")
            return "\n".join(parts) + "\n", True
        title_shape = slide.shapes.title
        title = title_shape.text if title_shape is not None else ""
        parts.append(f"## Slide {number}: {title}".rstrip())
        for shape in slide.shapes:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            parts.extend(_shape_lines(shape))
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame.text if slide.notes_slide.notes_text_frame else ""
            if notes.strip():
                parts.append(f"Notes: {notes}")
    return "\n".join(parts) + ("\n" if parts else ""), False


def read(args, ctx) -> dict:
    path, shown = files.locate(ctx, args.get("path"), SUFFIXES, "read_powerpoint")
    deck = _open(files.read_bytes(path, shown), shown)
    limit = max(1, min(int(args.get("max_slides") or MAX_SLIDES), MAX_SLIDES))
    text, slides_cut = text_of(deck, limit)
    text, chars_cut = files.clip(text)
    ctx.set_progress(1)
    cut = slides_cut or chars_cut
    return {"path": shown, "text": text, "slides": len(deck.slides), "truncated": cut,
            **({"note": f"only part of the deck is shown ({len(text)} characters, at most "
                        f"{limit} slides)"} if cut else {})}


def _layout(deck):
    """The deck's first layout with a title and a body placeholder (the default
    template's "Title and Content"), else its first layout."""
    for layout in deck.slide_layouts:
        kinds = {shape.placeholder_format.idx for shape in layout.placeholders}
        if 0 in kinds and 1 in kinds:
            return layout
    if not len(deck.slide_layouts):
        raise files.DocumentError("the deck has no slide layout to add a slide with")
    return deck.slide_layouts[0]


def _add_slide(deck, spec: dict) -> None:
    slide = deck.slides.add_slide(_layout(deck))
    title = str(spec.get("title", ""))
    if slide.shapes.title is not None:
        slide.shapes.title.text = title
    else:
        box = slide.shapes.add_textbox(deck.slide_width // 12, deck.slide_height // 20,
                                       deck.slide_width * 10 // 12, deck.slide_height // 6)
        box.text_frame.text = title
    bullets = [str(b) for b in spec.get("bullets") or []]
    body = next((s for s in slide.placeholders if s.placeholder_format.idx == 1), None)
    if body is not None:
        if bullets:
            frame = body.text_frame
            frame.text = bullets[0]
            for bullet in bullets[1:]:
                frame.add_paragraph().text = bullet
        else:
            body._element.getparent().remove(body._element)
    elif bullets:
        box = slide.shapes.add_textbox(deck.slide_width // 12, deck.slide_height // 4,
                                       deck.slide_width * 10 // 12, deck.slide_height * 2 // 3)
        box.text_frame.text = bullets[0]
        for bullet in bullets[1:]:
            box.text_frame.add_paragraph().text = bullet
    if spec.get("notes"):
        slide.notes_slide.notes_text_frame.text = str(spec["notes"])


def _delete_slide(deck, index: int, number: int) -> None:
    slides = deck.slides._sldIdLst
    ids = list(slides)
    if not 1 <= index <= len(ids):
        raise ValueError(f"operation {number}: there is no slide {index}; the deck has {len(ids)}")
    entry = ids[index - 1]
    deck.part.drop_rel(entry.rId)
    slides.remove(entry)


def _replace(deck, find: str, replace: str) -> int:
    count = 0
    for slide in deck.slides:
        for shape in slide.shapes:
            if not shape.has_text_frame:
                continue
            for paragraph in shape.text_frame.paragraphs:
                for run in paragraph.runs:
                    if find in run.text:
                        count += run.text.count(find)
                        run.text = run.text.replace(find, replace)
    return count


def _bytes(deck) -> bytes:
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def edit(args, ctx) -> dict:
    path, shown = files.locate(ctx, args.get("path"), SUFFIXES, "edit_powerpoint")
    data = files.read_bytes(path, shown)
    deck = _open(data, shown)
    before, _cut = text_of(deck)
    operations = args.get("operations") or []
    if not operations or len(operations) > MAX_OPERATIONS:
        raise ValueError(f"give 1 to {MAX_OPERATIONS} operations: add_slide, replace_text, "
                         "delete_slide")
    done = []
    for number, operation in enumerate(operations, 1):
        op = operation.get("op")
        if op == "add_slide":
            if len(deck.slides) >= MAX_SLIDES:
                raise ValueError(f"operation {number}: a deck has at most {MAX_SLIDES} slides here")
            _add_slide(deck, operation)
            done.append(f"added slide {len(deck.slides)}")
        elif op == "replace_text":
            find = operation.get("find") or ""
            if not find:
                raise ValueError(f"operation {number}: replace_text needs find")
            count = _replace(deck, find, str(operation.get("replace", "")))
            if not count:
                raise ValueError(f"operation {number}: {find!r} is not in {shown} (within one "
                                 "run of text); nothing was changed")
            done.append(f"replaced {count} × {find!r}")
        elif op == "delete_slide":
            _delete_slide(deck, int(operation.get("index") or 0), number)
            done.append(f"deleted slide {operation.get('index')}")
        else:
            raise ValueError(f"operation {number}: unknown op {op!r}: use add_slide, "
                             "replace_text or delete_slide")
    after, _cut = text_of(deck)
    result = files.save(ctx, path, shown, read_before=data, data=_bytes(deck),
                        before=before, after=after)
    return {**result, "done": done}


def create(args, ctx) -> dict:
    path, shown, existing = files.target(ctx, args, SUFFIXES, "create_powerpoint")
    slides = args.get("slides") or []
    if not slides or len(slides) > MAX_SLIDES:
        raise ValueError(f"give slides: 1 to {MAX_SLIDES} of {{title, bullets, notes}}")
    deck = _open(None, shown)
    for spec in slides:
        _add_slide(deck, spec)
    before = text_of(_open(existing, shown))[0] if existing is not None else ""
    return files.save(ctx, path, shown, read_before=existing, data=_bytes(deck),
                      before=before, after=text_of(deck)[0])
