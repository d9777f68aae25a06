"""A before/after change, unified or side by side, with syntax highlighting.

The language comes from the title when it names a file (``app.py``), otherwise
from what the text plainly is (see ``_language``). Lines are highlighted with
Textual's theme-aware highlighter, so the colors follow the app's theme; removed and
added lines get the theme's muted error and success backgrounds. Long lines fold
rather than being cut, so nothing of the change is hidden. A large change is
compared in a thread.
"""

from __future__ import annotations

import difflib
import json
import os
from bisect import bisect_right
from dataclasses import dataclass
from itertools import zip_longest

from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound
from textual import work
from textual.content import Content, Span
from textual.geometry import Size
from textual.highlight import guess_language, highlight
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

CONTEXT = 3
"""Unchanged lines shown around each change."""

REMOVED = "on $error-muted"
ADDED = "on $success-muted"
GUTTER = "$text-muted"
HUNK = "$text-accent"
TAB_SIZE = 4
COMPARE_AT_ONCE = 20_000
"""Texts longer than this (before and after together, in characters) are compared in
a thread."""
GUESS_CHARS = 4_000
"""How much of a text the language is guessed from when no file name says."""


def unified_text(before: str, after: str) -> str:
    """The change as a plain unified diff (what a person copies)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(),
                                 fromfile="before", tofile="after", lineterm="")
    return "\n".join(lines)


PYTHON_STARTS = ("def ", "class ", "import ", "from ", "async def ", "@")


def _language(title: str | None, before: str, after: str) -> str:
    """The highlighting language: from the title when it names a file (``app.py``);
    otherwise only what the text plainly is (JSON, a script with a ``#!`` line, XML
    or HTML, Python that parses and defines or imports something), else plain text.
    Pygments' own guessing is not used: it names odd languages for ordinary prose."""
    if title and " " not in title.strip() and os.path.splitext(title)[1]:
        try:
            lexer = get_lexer_for_filename(title.strip())
        except ClassNotFound:
            pass
        else:
            return lexer.aliases[0] if lexer.aliases else lexer.name
    sample = (after or before)[:GUESS_CHARS]
    head = sample.lstrip()[:100].lower()
    if head.startswith("#!"):
        return guess_language(sample, None)
    if head.startswith(("<?xml", "<!doctype html", "<html")):
        return "html" if "html" in head else "xml"
    if head.startswith(("{", "[")):
        try:
            json.loads(after or before)
        except ValueError:
            pass
        else:
            return "json"
    lines = sample.splitlines()
    if any(line.startswith(PYTHON_STARTS) for line in lines):
        try:
            compile(after or before, "<diff>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        else:
            return "python"
    return "text"


def _highlighted(lines: list[str], language: str) -> list[Content]:
    """``lines`` highlighted as one block (so a string or comment that spans lines
    comes out right), then cut into lines: each span goes to the lines it covers."""
    if not lines:
        return []
    joined = "\n".join(lines)
    content = highlight(joined, language=language)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    spans: list[list[Span]] = [[] for _ in lines]
    for span in content.spans:
        first = bisect_right(starts, span.start) - 1
        for index in range(max(0, first), len(lines)):
            line_start = starts[index]
            line_end = line_start + len(lines[index])
            if line_start >= span.end:
                break
            start, end = max(span.start, line_start), min(span.end, line_end)
            if start < end:
                spans[index].append(Span(start - line_start, end - line_start, span.style))
    return [Content(line, spans=line_spans) for line, line_spans in zip(lines, spans)]


@dataclass(frozen=True)
class Change:
    """A compared pair of texts: the hunks and their highlighted lines."""

    language: str
    groups: list[list[tuple[str, int, int, int, int]]]
    """``SequenceMatcher`` opcodes grouped into hunks with their context."""
    old_lines: dict[int, Content]
    """The highlighted lines of ``before`` that the hunks show, by index."""
    new_lines: dict[int, Content]
    added: int
    removed: int
    number_width: int


def compare(before: str, after: str, title: str | None = None) -> Change:
    """Compare ``before`` with ``after`` and highlight the lines the hunks show."""
    old = [line.expandtabs(TAB_SIZE) for line in before.splitlines()]
    new = [line.expandtabs(TAB_SIZE) for line in after.splitlines()]
    language = _language(title, before, after)
    groups = list(difflib.SequenceMatcher(None, old, new).get_grouped_opcodes(CONTEXT))
    # Only what is shown is highlighted: each hunk's lines, before and after.
    old_lines: dict[int, Content] = {}
    new_lines: dict[int, Content] = {}
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        old_lines.update(zip(range(i1, i2), _highlighted(old[i1:i2], language)))
        new_lines.update(zip(range(j1, j2), _highlighted(new[j1:j2], language)))
    added = sum(j2 - j1 for group in groups for tag, _, _, j1, j2 in group if tag in ("insert", "replace"))
    removed = sum(i2 - i1 for group in groups for tag, i1, i2, _, _ in group if tag in ("delete", "replace"))
    return Change(language, groups, old_lines, new_lines, added, removed,
                  len(str(max(len(old), len(new), 1))))


class DiffView(Widget):
    """``before`` → ``after``; ``split`` shows the two side by side.

    A large pair of texts is compared in a thread, so the event loop never waits on
    it; until then the view says so in one line and ``change`` is None.

    Args:
        before: The text before the change.
        after: The text after it.
        title: What changed; a file name there picks the highlighting language.
        split: Start side by side.
    """

    DEFAULT_CSS = """
    DiffView {
        width: 1fr;
        height: auto;
        text-wrap: nowrap;
    }
    """

    split: reactive[bool] = reactive(False, layout=True)
    """Whether the change is shown side by side (else unified)."""
    change: reactive[Change | None] = reactive(None, layout=True)
    """The comparison, once made."""

    @dataclass
    class Compared(Message):
        """A large change has been compared (posted only when done in a thread)."""

        view: DiffView

    def __init__(self, before: str, after: str, title: str | None = None, *, split: bool = False,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.before = before
        self.after = after
        self.title = title
        self.set_reactive(DiffView.split, split)
        if len(before) + len(after) <= COMPARE_AT_ONCE:
            self.set_reactive(DiffView.change, compare(before, after, title))
        self._cache: tuple[tuple[int, bool], list[Content]] | None = None

    def on_mount(self) -> None:
        if self.change is None:
            self._compare()

    @work(thread=True, exclusive=True, group="diff-compare")
    def _compare(self) -> None:
        change = compare(self.before, self.after, self.title)
        self.app.call_from_thread(self._compared, change)

    def _compared(self, change: Change) -> None:
        self._cache = None
        self.change = change
        self.post_message(self.Compared(self))

    @property
    def language(self) -> str:
        return self.change.language if self.change else ""

    @property
    def added(self) -> int:
        return self.change.added if self.change else 0

    @property
    def removed(self) -> int:
        return self.change.removed if self.change else 0

    @property
    def changed(self) -> bool:
        return bool(self.change and self.change.groups)

    def lines(self, width: int) -> list[Content]:
        """The drawn lines at ``width`` columns, in the current layout."""
        if self.change is None:
            return [Content.styled("(comparing…)", "$text-muted italic")]
        key = (width, self.split)
        if self._cache is None or self._cache[0] != key:
            if not self.changed:
                drawn = [Content.styled("(no changes)", "$text-muted italic")]
            elif self.split:
                drawn = self._side_by_side(width)
            else:
                drawn = self._unified(width)
            self._cache = (key, drawn)
        return self._cache[1]

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def render(self) -> Content:
        return Content("\n").join(self.lines(self.size.width))

    # --- layouts -------------------------------------------------------------

    def _hunk_header(self, group, width: int) -> Content:
        first, last = group[0], group[-1]
        old_start, old_end, new_start, new_end = first[1], last[2], first[3], last[4]
        text = f"@@ -{old_start + 1},{old_end - old_start} +{new_start + 1},{new_end - new_start} @@"
        return Content.styled(text[:width], HUNK)

    def _row(self, gutter: str, sign: str, text: Content, width: int, background: str) -> list[Content]:
        """One line: a gutter, a sign and the text folded to ``width``, the background
        (if any) across the whole width. A changed line's trailing blanks show as ``·``,
        so a change of whitespace alone is seen."""
        if sign in ("+", "-"):
            plain = text.plain
            kept = len(plain.rstrip())
            if kept < len(plain):
                text = Content.assemble(text[:kept], ("·" * (len(plain) - kept), "$text-warning"))
        prefix = len(gutter) + 2
        room = max(4, width - prefix)
        pieces = text.fold(room) if text.cell_length > room else [text]
        sign_style = {"-": "bold $text-error", "+": "bold $text-success"}.get(sign, GUTTER)
        rows = []
        for index, piece in enumerate(pieces):
            lead = Content.assemble((gutter if index == 0 else " " * len(gutter), GUTTER), " ",
                                    (sign if index == 0 else " ", sign_style))
            row = Content.assemble(lead, piece)
            row = row.extend_right(max(0, width - row.cell_length))
            if background:
                row = row.stylize_before(background)
            rows.append(row)
        return rows

    def _unified(self, width: int) -> list[Content]:
        digits = self.change.number_width
        drawn: list[Content] = []
        for group in self.change.groups:
            drawn.append(self._hunk_header(group, width))
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    for offset in range(i2 - i1):
                        gutter = f"{i1 + offset + 1:>{digits}} {j1 + offset + 1:>{digits}}"
                        drawn += self._row(gutter, " ", self.change.new_lines[j1 + offset], width, "")
                    continue
                for i in range(i1, i2):
                    gutter = f"{i + 1:>{digits}} {'':>{digits}}"
                    drawn += self._row(gutter, "-", self.change.old_lines[i], width, REMOVED)
                for j in range(j1, j2):
                    gutter = f"{'':>{digits}} {j + 1:>{digits}}"
                    drawn += self._row(gutter, "+", self.change.new_lines[j], width, ADDED)
        return drawn

    def _side(self, number: int | None, sign: str, lines: dict[int, Content], width: int,
              background: str) -> list[Content]:
        if number is None:
            return [Content(" " * width)]
        return self._row(f"{number + 1:>{self.change.number_width}}", sign, lines[number], width, background)

    def _side_by_side(self, width: int) -> list[Content]:
        half = max(12, (width - 1) // 2)
        right_width = max(12, width - 1 - half)
        separator = Content.styled("│", GUTTER)
        drawn: list[Content] = []
        for group in self.change.groups:
            drawn.append(self._hunk_header(group, width))
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    pairs = [(i1 + k, j1 + k, " ", " ") for k in range(i2 - i1)]
                else:
                    pairs = [(i, j, "-", "+") for i, j in zip_longest(range(i1, i2), range(j1, j2))]
                for i, j, left_sign, right_sign in pairs:
                    changed = tag != "equal"
                    left = self._side(i, left_sign, self.change.old_lines, half, REMOVED if changed else "")
                    right = self._side(j, right_sign, self.change.new_lines, right_width,
                                       ADDED if changed else "")
                    for left_row, right_row in zip_longest(left, right):
                        drawn.append(Content.assemble(left_row or Content(" " * half), separator,
                                                      right_row or Content(" " * right_width)))
        return drawn
