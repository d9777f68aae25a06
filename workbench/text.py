"""Text from outside — tools, models, extension manifests, MCP servers — made safe
for a terminal.

A terminal obeys what it is sent: ESC starts a sequence (CSI clears the screen and
moves the cursor, OSC sets the window title or writes the clipboard, DCS/APC/PM/SOS
carry more), the C1 controls U+0080–U+009F do the same in one character, a carriage
return or a backspace draws over what is shown, and the bidi overrides and isolates
(U+202A–202E, U+2066–2069) reorder what is read. Every one of these is a single
code point, so making each of them inert neutralizes every sequence they start,
whatever follows.

``visible`` is for plain output (the CLI, headless runs): each unsafe code point
becomes its escape ``\\u001b``, which is both visible to a person and, inside a JSON
string, the same value written as JSON writes it, so JSON lines stay exact. ``strip``
is for text already laid out in cells (the TUI's rendered lines): it removes them,
since none of them takes a cell. ``SafeStream`` wraps an output stream with
``visible``, so whatever is written through it is safe by default.

This module imports nothing but the standard library, so every layer may use it.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
"""C0 controls but tab and newline, DEL, C1 controls, bidi overrides and isolates,
and lone surrogates (which cannot be written as UTF-8 at all)."""

UNSAFE = re.compile(f"[{_UNSAFE}]")
"""One code point a terminal must not be sent as it is."""

_UNSAFE_IN_A_LINE = re.compile(f"[{_UNSAFE}\t\n]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with every unsafe code point written as its JSON-style escape (ESC as
    ``\\u001b``).

    A carriage return is dropped (``\\r\\n`` is a newline; a lone one would draw over
    the line). Tabs and newlines are kept unless ``one_line``.
    """
    if not isinstance(text, str):
        text = str(text)
    if "\r" in text:
        text = text.replace("\r", "")
    pattern = _UNSAFE_IN_A_LINE if one_line else UNSAFE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def _drop(match: re.Match[str]) -> str:
    # A lone surrogate takes a cell where it is drawn: a replacement character keeps it.
    return "\ufffd" if "\ud800" <= match.group() <= "\udfff" else ""


def strip(text: str) -> str:
    """``text`` without any unsafe code point (tabs and newlines are kept); none of them
    takes a cell, so text laid out in cells keeps its layout (a lone surrogate becomes
    U+FFFD, which takes the one cell it was given)."""
    if UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(_drop, text)


def has_unsafe(text: str) -> bool:
    """Whether ``text`` holds a code point ``visible`` and ``strip`` would change."""
    return UNSAFE.search(text) is not None or "\r" in text


class SafeStream:
    """An output stream whose every write goes through ``visible``.

    Everything else (``flush``, ``isatty``, ``encoding``…) is the wrapped stream's.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def safe_stream(stream: TextIO) -> TextIO:
    """``stream`` wrapped in a ``SafeStream`` (once)."""
    return stream if isinstance(stream, SafeStream) else SafeStream(stream)  # type: ignore[return-value]
