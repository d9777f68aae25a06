"""Where each value of a JSON document starts, by JSON pointer, for line-and-column messages.

`json` parses without positions, so a problem found in the parsed data (a wrong
type, a missing field) could not say where it is in the file. This module walks the
text once more, after `json.loads` has accepted it, and maps every JSON pointer to
the line and column of its member (the key, for an object member) or value (for an
array item or the root). On the way it notes keys that appear twice in one object.
This module imports nothing of workbench.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from json.decoder import scanstring

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")


def escape_token(token: str | int) -> str:
    """Escape one reference token of a JSON pointer (RFC 6901: `~` then `/`)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def join_pointer(pointer: str, *tokens: str | int) -> str:
    """Return `pointer` extended by `tokens`, each escaped."""
    return pointer + "".join("/" + escape_token(token) for token in tokens)


@dataclass
class Locations:
    """Positions in one JSON document.

    Attributes:
        positions: Each JSON pointer mapped to its 1-based `(line, column)`.
        duplicates: Pointers of object members whose key already appeared in the
            same object, each with the position of the repeated key.
    """

    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    duplicates: list[tuple[str, tuple[int, int]]] = field(default_factory=list)

    def find(self, pointer: str) -> tuple[int, int] | None:
        """Return the position of `pointer`, or of its nearest ancestor in the document.

        A missing field is reported at the object that lacks it.
        """
        while True:
            if pointer in self.positions:
                return self.positions[pointer]
            if not pointer:
                return None
            pointer = pointer.rsplit("/", 1)[0]


class _Walker:
    """A recursive-descent reader over text that `json.loads` already accepted."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.found = Locations()

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def skip(self, offset: int) -> int:
        return _WHITESPACE.match(self.text, offset).end()

    def value(self, offset: int, pointer: str, mark: int | None = None) -> int:
        """Record the value at `offset` under `pointer` and return the offset past it."""
        offset = self.skip(offset)
        self.found.positions[pointer] = self.position(offset if mark is None else mark)
        char = self.text[offset]
        if char == "{":
            return self.members(offset + 1, pointer)
        if char == "[":
            return self.items(offset + 1, pointer)
        if char == '"':
            return scanstring(self.text, offset + 1)[1]
        return _SCALAR.match(self.text, offset).end()

    def members(self, offset: int, pointer: str) -> int:
        seen: set[str] = set()
        offset = self.skip(offset)
        if self.text[offset] == "}":
            return offset + 1
        while True:
            offset = self.skip(offset)
            key_start = offset
            key, offset = scanstring(self.text, offset + 1)
            child = join_pointer(pointer, key)
            if key in seen:
                self.found.duplicates.append((child, self.position(key_start)))
            seen.add(key)
            offset = self.skip(offset) + 1  # the colon
            offset = self.skip(self.value(offset, child, mark=key_start))
            if self.text[offset] == "}":
                return offset + 1
            offset += 1  # the comma

    def items(self, offset: int, pointer: str) -> int:
        offset = self.skip(offset)
        if self.text[offset] == "]":
            return offset + 1
        index = 0
        while True:
            offset = self.skip(self.value(offset, join_pointer(pointer, index)))
            if self.text[offset] == "]":
                return offset + 1
            offset += 1
            index += 1


def locate(text: str) -> Locations:
    """Map every JSON pointer of a valid JSON document to its line and column.

    Args:
        text: A document `json.loads` accepts (without NaN or Infinity).

    Returns:
        The positions and repeated keys; empty when the document nests too deeply
        to walk.
    """
    walker = _Walker(text)
    try:
        walker.value(0, "")
    except RecursionError:
        return Locations()
    return walker.found
