"""JSON as the JSON spec has it, for what comes from outside: files, arguments, results.

Python's ``json`` reads and writes more than JSON: ``NaN`` and ``Infinity``, lone
surrogates (``"\\ud800"``, which no UTF-8 file or SQLite text can hold), and nesting
as deep as the interpreter's stack, past which it raises ``RecursionError``. Here a
value from outside is refused for any of them with what and where, and output is
written as JSON (non-finite numbers become ``null``) so that it always parses.

A leaf: imports nothing of ours but ``errors``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from workbench.errors import ExitCode, WorkbenchError

MAX_DEPTH = 100
"""The deepest nesting of lists and objects accepted from outside."""


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def problem(value: Any) -> tuple[str, str] | None:
    """The first thing in ``value`` that JSON cannot hold, as ``(pointer, what)``, or None.

    Walks without recursion, so a value nested past the stack is named, not crashed on.
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, pointer, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH:
                return pointer or "/", f"nested more than {MAX_DEPTH} lists or objects deep"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str) and _has_surrogate(key):
                    return pointer or "/", "a key holds a lone surrogate, which is not Unicode text"
                name = str(key).replace("~", "~0").replace("/", "~1")
                stack.append((child, f"{pointer}/{name}", depth + 1))
        elif isinstance(item, float) and not math.isfinite(item):
            return pointer or "/", f"{item!r} is not a JSON number"
        elif isinstance(item, str) and _has_surrogate(item):
            return pointer or "/", "the text holds a lone surrogate, which is not Unicode text"
    return None


def encodable(value: Any) -> tuple[str, str] | None:
    """``problem`` for a value that is usually fine: one C-speed encoding first, the walk
    only when it fails (a tool's result may be megabytes). Types JSON has no name for
    are left to the caller's own check."""
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except TypeError:
        return None
    except (ValueError, RecursionError):
        return problem(value) or ("/", "not JSON")
    return None


def printable(text: str) -> str:
    """``text`` with any lone surrogate written as its escape (``\\ud800``), so it can be
    stored, printed and sent as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest JSON file read from outside (an answers file, a scripted model)."""


def read_file(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a file a person named: a regular file (a FIFO or a device would
    never end), at most ``max_bytes``.

    Raises:
        OSError: It cannot be read.
        WorkbenchError: (exit code 2) not a regular file, or larger than ``max_bytes``.
    """
    import os
    import stat

    with open(path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK)) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise WorkbenchError("not a regular file", where=str(path), exit_code=ExitCode.USAGE)
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise WorkbenchError(f"larger than {max_bytes} bytes", where=str(path), exit_code=ExitCode.USAGE)
    return data


def decode(data: bytes, where: str) -> str:
    """Bytes from outside (a file, stdin) as text: UTF-8, or refused where it is not.

    Raises:
        WorkbenchError: (exit code 2) not UTF-8; ``where`` is given the line and column
            of the first byte that is not.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object.count(b"\n", 0, exc.start) + 1
        column = exc.start - (exc.object.rfind(b"\n", 0, exc.start) + 1) + 1
        raise WorkbenchError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x})",
                             where=f"{where}:{line}:{column}", exit_code=ExitCode.USAGE) from None


def loads(text: str | bytes, where: str) -> Any:
    """Parse JSON from outside (a file, an option), refusing what JSON cannot hold.

    Args:
        text: The JSON text, or bytes read from a file (UTF-8).
        where: What it is, for messages: a path or ``--args``.

    Raises:
        WorkbenchError: (exit code 2) not UTF-8, not JSON, nested more than
            ``MAX_DEPTH`` deep, or holding NaN, Infinity or a lone surrogate; the
            message gives the line and column, or the JSON pointer.
    """
    if isinstance(text, bytes):
        text = decode(text, where)
    try:
        value = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise WorkbenchError(f"not valid JSON: {exc.msg}", where=f"{where}:{exc.lineno}:{exc.colno}",
                             exit_code=ExitCode.USAGE) from None
    except ValueError as exc:  # NaN, Infinity
        raise WorkbenchError(f"not valid JSON: {exc}", where=where, exit_code=ExitCode.USAGE) from None
    except RecursionError:
        raise WorkbenchError(f"not readable: nested more than {MAX_DEPTH} lists or objects deep",
                             where=where, exit_code=ExitCode.USAGE) from None
    found = problem(value)
    if found is not None:
        raise WorkbenchError(found[1], where=f"{where}#{found[0]}", exit_code=ExitCode.USAGE)
    return value


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    """``value`` as JSON text that any JSON reader accepts: NaN and ±Infinity become ``null``
    (the JSON spec has no such numbers), lone surrogates are written escaped."""
    options.setdefault("default", str)
    try:
        text = json.dumps(value, allow_nan=False, **options)
    except ValueError:
        text = json.dumps(_finite(value), allow_nan=False, **options)
    if not options.get("ensure_ascii", True) and _has_surrogate(text):
        text = json.dumps(_finite(value), allow_nan=False, **{**options, "ensure_ascii": True})
    return text
