"""What validating a manifest reports: problems named by JSON pointer, and the report.

Pydantic names a bad value by a location tuple in Python terms; a person editing
`loca.json` needs it in the file's terms. :func:`problems_from_pydantic` turns each
pydantic error into a :class:`Problem` whose pointer uses the file's camelCase keys and
whose message reads as a sentence; a :class:`Collector` gathers them during one
validation. This module imports nothing of workbench but the manifest package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from workbench.manifest.locate import Locations, join_pointer
from workbench.manifest.models import (ENV_KEY_PATTERN, EXPORT_NAME_PATTERN, EXTENSION_NAME_PATTERN, PROVIDER_NAME_PATTERN, TOOL_NAME_PATTERN,
                                       Manifest)


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or worth a second look) in an extension.

    Attributes:
        pointer: A JSON pointer into the manifest, such as `/tools/0/name`; `""` for
            the whole document or the extension as a whole.
        message: What is wrong, as a sentence.
        line: The 1-based line in the manifest, when known.
        column: The 1-based column in the manifest, when known.
    """

    pointer: str
    message: str
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the problem as JSON data, leaving out an unknown line and column."""
        data: dict[str, Any] = {"pointer": self.pointer, "message": self.message}
        if self.line is not None:
            data["line"] = self.line
        if self.column is not None:
            data["column"] = self.column
        return data

    def describe(self) -> str:
        """Return the problem on one line: `/tools/0/name: message (line 3, column 7)`."""
        text = f"{self.pointer}: {self.message}" if self.pointer else self.message
        if self.line is not None:
            text += f" (line {self.line}, column {self.column})"
        return text


@dataclass
class ValidationReport:
    """The outcome of validating one extension.

    Attributes:
        valid: True when there are no errors (warnings do not count).
        errors: Problems that make the extension unusable.
        warnings: Problems worth fixing that do not stop the extension.
        manifest: The parsed manifest when it matched the models, else `None`.
    """

    valid: bool
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    manifest: Manifest | None = None

    def to_json(self) -> dict[str, Any]:
        """Return `{"valid", "errors", "warnings"}` as JSON data."""
        return {
            "valid": self.valid,
            "errors": [problem.to_json() for problem in self.errors],
            "warnings": [problem.to_json() for problem in self.warnings],
        }


def _shown(value: Any) -> str:
    """Return a value as the file spells it, shortened."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPE_NAMES = {
    "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
    "list_type": "an array", "string_type": "a string", "bool_type": "true or false",
    "int_type": "an integer",
}


def _message(error: dict[str, Any]) -> str:
    """Return a pydantic error as a sentence about the file."""
    kind, ctx = error["type"], error.get("ctx") or {}
    value = error.get("input")
    if kind == "missing":
        return f"missing required field '{error['loc'][-1]}'"
    if kind == "extra_forbidden":
        return f"unknown field '{error['loc'][-1]}'"
    if kind in _TYPE_NAMES:
        return f"expected {_TYPE_NAMES[kind]}, got {_shown(value)}"
    if kind == "literal_error" and ctx.get("expected") == "'*'":
        return f"expected a list of port numbers or \"*\", got {_shown(value)}"
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}, got {_shown(value)}"
    if kind == "string_pattern_mismatch":
        if ctx.get("pattern") == r"\S":
            return "must not be blank"
        if ctx.get("pattern") == EXTENSION_NAME_PATTERN:
            # Escaped: a right-to-left or zero-width character is what is wrong with it.
            shown = json.dumps(value) if isinstance(value, str) else _shown(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            return (f"{shown} is not a valid extension name: use 1 to 128 letters, "
                    "digits, '.', '_' or '-', starting with a letter or digit")
        if ctx.get("pattern") == TOOL_NAME_PATTERN:
            return (f"{_shown(value)} is not a valid tool name: use 1 to 64 letters, digits, "
                    "'_' or '-'")
        if ctx.get("pattern") == PROVIDER_NAME_PATTERN:
            return (f"{_shown(value)} is not a valid provider name: use 1 to 64 lowercase "
                    "letters, digits, '_' or '-', starting with a letter or digit")
        if ctx.get("pattern") == ENV_KEY_PATTERN:
            return (f"{_shown(value)} is not an environment variable name: use letters, "
                    "digits and '_', not starting with a digit")
        if ctx.get("pattern") == EXPORT_NAME_PATTERN:
            return f"{_shown(value)} is not a valid export name"
        return f"{_shown(value)} does not match the pattern {ctx.get('pattern')}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "too_short":
        return f"must have at least {ctx.get('min_length')} item(s)"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return f"{_shown(value)}: " + error["msg"].replace("Input should be", "must be")
    message = error["msg"]
    return message.removeprefix("Value error, ")


def pointer_for(loc: tuple[Any, ...], data: Any) -> str:
    """Return the JSON pointer of a pydantic error location, guided by the raw data.

    Tokens the document has no place for are dropped: the `0` of a capability
    permission written as one object (the model reads it as a list of one), and the tag
    of a union member (a `net` entry's `ports` is a list or `"*"`).

    Args:
        loc: The error's `loc` (aliases and list indexes).
        data: The document the error is about.
    """
    pointer, node = "", data
    for token in loc:
        if isinstance(token, int) and isinstance(node, dict):
            continue  # one object read as a list of one
        if isinstance(token, str) and isinstance(node, list | str | int | float | bool):
            continue  # a union member's tag
        pointer = join_pointer(pointer, token)
        if isinstance(node, dict) and isinstance(token, str):
            node = node.get(token)
        elif isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node):
            node = node[token]
        else:
            node = None
    return pointer


def problems_from_pydantic(exc: ValidationError, data: Any) -> list[Problem]:
    """Return one problem per pydantic error, named by the file's pointers.

    Args:
        exc: The error raised by validating `data`.
        data: The parsed manifest.
    """
    return [Problem(pointer_for(tuple(error["loc"]), data), _message(error))
            for error in exc.errors()]


class Collector:
    """Gathers the problems of one validation and places them in the manifest text.

    Attributes:
        errors: The errors so far.
        warnings: The warnings so far.
        locations: Where each pointer is in the manifest, once it has been parsed.
    """

    def __init__(self) -> None:
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []
        self.locations = Locations()

    def place(self, pointer: str, message: str, locate_it: bool) -> Problem:
        """Return a problem at `pointer`, with its line and column when `locate_it`."""
        position = self.locations.find(pointer) if locate_it else None
        line, column = position if position else (None, None)
        return Problem(pointer, message, line, column)

    def error(self, pointer: str, message: str, *, locate_it: bool = True) -> None:
        """Record an error at `pointer`; `locate_it=False` for one about no place in the file."""
        self.errors.append(self.place(pointer, message, locate_it))

    def warning(self, pointer: str, message: str, *, locate_it: bool = True) -> None:
        """Record a warning at `pointer`."""
        self.warnings.append(self.place(pointer, message, locate_it))

    def report(self, manifest: Manifest | None) -> ValidationReport:
        """Return the report, problems in file order; the manifest only when there is no error."""
        def order(problem: Problem) -> tuple[int, int]:
            return (problem.line or 0, problem.column or 0)

        return ValidationReport(valid=not self.errors, errors=sorted(self.errors, key=order),
                                warnings=sorted(self.warnings, key=order),
                                manifest=manifest if not self.errors else None)
