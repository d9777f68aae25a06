"""JSON with comments and trailing commas, as ``plugin.json`` is written, read with the
line of every value so that a manifest's errors can name it.

Only the standard library and the leaves: the values are checked by ``jsontext`` as any
JSON from outside is (no NaN, no lone surrogates, nesting bounded).
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from workbench.errors import ExitCode, WorkbenchError
from workbench.jsontext import MAX_DEPTH, problem

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SPACE = " \t\r\n"


class JsoncError(WorkbenchError):
    """The text is not JSON with comments; ``where`` is ``FILE:LINE:COLUMN``."""


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.at = 0
        self.lines: dict[str, int] = {}

    def fail(self, message: str, at: int | None = None) -> JsoncError:
        at = self.at if at is None else at
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return JsoncError(f"not valid JSON: {message}", where=f"{self.where}:{line}:{column}",
                          exit_code=ExitCode.USAGE)

    def line(self) -> int:
        return self.text.count("\n", 0, self.at) + 1

    def skip(self) -> None:
        text = self.text
        while self.at < len(text):
            char = text[self.at]
            if char in _SPACE:
                self.at += 1
            elif text.startswith("//", self.at):
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
            elif text.startswith("/*", self.at):
                end = text.find("*/", self.at + 2)
                if end < 0:
                    raise self.fail("a comment that is never closed")
                self.at = end + 2
            else:
                return

    def value(self, pointer: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested more than {MAX_DEPTH} lists or objects deep")
        self.skip()
        self.lines[pointer] = self.line()
        if self.at >= len(self.text):
            raise self.fail("the text ends where a value was expected")
        char = self.text[self.at]
        if char == "{":
            return self.object(pointer, depth)
        if char == "[":
            return self.array(pointer, depth)
        if char == '"':
            return self.string()
        for word, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.at):
                self.at += len(word)
                return value
        match = _NUMBER.match(self.text, self.at)
        if match is None:
            raise self.fail(f"unexpected {char!r}")
        self.at = match.end()
        return json.loads(match.group())

    def string(self) -> str:
        try:
            value, self.at = scanstring(self.text, self.at + 1, True)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from None
        return value

    def object(self, pointer: str, depth: int) -> dict[str, Any]:
        self.at += 1
        result: dict[str, Any] = {}
        while True:
            self.skip()
            if self.text.startswith("}", self.at):
                self.at += 1
                return result
            if not self.text.startswith('"', self.at):
                raise self.fail("expected a name in double quotes")
            start = self.at
            key = self.string()
            if key in result:
                raise self.fail(f"the name {key!r} is given twice", start)
            self.skip()
            if not self.text.startswith(":", self.at):
                raise self.fail("expected ':'")
            self.at += 1
            escaped = key.replace("~", "~0").replace("/", "~1")
            result[key] = self.value(f"{pointer}/{escaped}", depth + 1)
            self.skip()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif not self.text.startswith("}", self.at):
                raise self.fail("expected ',' or '}'")

    def array(self, pointer: str, depth: int) -> list[Any]:
        self.at += 1
        result: list[Any] = []
        while True:
            self.skip()
            if self.text.startswith("]", self.at):
                self.at += 1
                return result
            result.append(self.value(f"{pointer}/{len(result)}", depth + 1))
            self.skip()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif not self.text.startswith("]", self.at):
                raise self.fail("expected ',' or ']'")


def loads(text: str, where: str) -> tuple[Any, dict[str, int]]:
    """Parse JSON with ``//`` and ``/* */`` comments and trailing commas.

    Returns:
        The value, and the line each value starts on by JSON pointer (``/tools/0/name``).

    Raises:
        JsoncError: (exit code 2) not such JSON, nested past ``MAX_DEPTH``, or holding a
            lone surrogate; the message gives the line and column.
    """
    parser = _Parser(text, where)
    value = parser.value("", 0)
    parser.skip()
    if parser.at != len(text):
        raise parser.fail("more text after the value")
    found = problem(value)
    if found is not None:
        raise JsoncError(found[1], where=f"{where}:{parser.lines.get(found[0], 1)}",
                         exit_code=ExitCode.USAGE)
    return value, parser.lines
