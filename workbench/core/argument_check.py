"""A quick yes for a tool's arguments, before the full JSON Schema validator.

Most tools take a flat object of typed properties. For a schema made only of ``type``,
``properties``, ``required``, ``additionalProperties`` (true or false), ``items`` (one
schema) and annotations, ``quick_check`` builds a plain function that answers whether
an instance is valid, the way ``jsonschema`` does for drafts 6 to 2020-12 (an integer
may be written ``1.0``; ``true`` is no number; ``format`` only annotates, since the
gateway's validator has no format checker), in about a tenth of its time.

Only its yes is trusted: on no, the gateway runs the full validator, which names the
error. Any other keyword — or a schema of an older draft — gets no quick check at all.

This module must not import anything of ours.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly", "format"})
_KEYWORDS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items"}

_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool))
    or (isinstance(x, float) and x.is_integer()),
}


def quick_check(schema: Any) -> Check | None:
    """A function that says True only for instances ``schema`` accepts, or None when
    ``schema`` uses anything beyond the plain subset (see the module docstring).

    Args:
        schema: A tool's parameters schema, of draft 6 or later (the caller checks
            ``$schema``).
    """
    if isinstance(schema, dict) and "$schema" in schema:
        schema = {k: v for k, v in schema.items() if k != "$schema"}
    return _compile(schema)


def _compile(schema: Any) -> Check | None:
    if schema is True:
        return lambda x: True
    if not isinstance(schema, dict) or not set(schema) <= _KEYWORDS:
        return None
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"]
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, list) or not names or not all(
                isinstance(n, str) and n in _TYPES for n in names):
            return None
        kinds = [_TYPES[n] for n in names]
        checks.append(kinds[0] if len(kinds) == 1 else lambda x: any(k(x) for k in kinds))
    object_check = _object_check(schema)
    if object_check is False:
        return None
    if object_check is not None:
        checks.append(object_check)
    if "items" in schema:
        item = _compile(schema["items"])
        if item is None:
            return None
        checks.append(lambda x: not isinstance(x, list) or all(item(each) for each in x))
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)
    return lambda x: all(check(x) for check in checks)


def _object_check(schema: dict[str, Any]) -> Check | None | bool:
    """The check of ``properties``, ``required`` and ``additionalProperties`` (objects
    only); None when there are none, False when one of them is beyond the subset."""
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) \
            or not all(isinstance(name, str) for name in required) or not isinstance(extra, bool):
        return False
    compiled: list[tuple[str, Check]] = []
    for name, subschema in properties.items():
        check = _compile(subschema)
        if check is None:
            return False
        compiled.append((name, check))
    if not compiled and not required and extra:
        return None
    known = frozenset(properties)

    def check(x: Any) -> bool:
        if not isinstance(x, dict):
            return True
        for name, sub in compiled:
            if name in x and not sub(x[name]):
                return False
        for name in required:
            if name not in x:
                return False
        return extra or known.issuperset(x)

    return check
