"""No control or escape sequence from outside reaches the terminal through the TUI.

Textual writes a segment's text to the terminal as it is: an ESC in a tool's result,
a model's reply or an extension's description would set the window title, write the
clipboard (OSC 52) or draw over the screen. Rather than each widget remembering to
clean what it shows, every widget's rendered lines are cleaned once, where Textual's
compositor takes them (``Widget.render_lines``, which every widget's lines go
through, its subclasses calling it too): each unsafe code point of
``workbench.text`` is removed from the text of a segment (none of them takes a cell,
so the layout is unchanged). Segments that are controls Textual or Rich made
themselves (``Segment.control``) are kept. A widget that must write terminal
graphics (Kitty, Sixel) renders through its own ``render_lines``.

The check is one search over a line's text, and a line is rebuilt only when it
holds something to remove.
"""

from __future__ import annotations

import functools

from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

from workbench.text import UNSAFE, strip

_GUARDED = "__workbench_safe__"


def safe_strip(line: Strip) -> Strip:
    """``line`` with every unsafe code point removed from its text segments."""
    segments = list(line)
    if UNSAFE.search("".join(segment.text for segment in segments)) is None:
        return line
    return Strip([segment if segment.control else Segment(strip(segment.text), segment.style)
                  for segment in segments], line.cell_length)


def guard_rendering() -> None:
    """Clean every widget's rendered lines from now on (once per process)."""
    original = Widget.render_lines
    if getattr(original, _GUARDED, False):
        return

    @functools.wraps(original)
    def render_lines(self: Widget, crop):
        return [safe_strip(line) for line in original(self, crop)]

    setattr(render_lines, _GUARDED, True)
    Widget.render_lines = render_lines  # type: ignore[method-assign]
