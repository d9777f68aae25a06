"""The worker protocol: JSON-RPC 2.0 messages, one per line, over the worker's socket.

Host to worker: ``tool/call`` (a request: ``{"arguments", "chat"}``) and
``tool/cancel`` (a notification). Worker to host: ``worker/ready`` once its tool is
imported (or failed to import), notifications ``ctx/progress``, ``ctx/log``,
``ctx/display`` and, from a function that streams its answer, ``ctx/reply.open`` then
``ctx/reply.piece`` per item, requests ``ctx/<member>`` for everything that needs an
answer, and the response to ``tool/call``. This module imports nothing but the standard library,
so the worker side stays small.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_LINE = 8 << 20
"""The longest message either side accepts (a guard, above every payload bound)."""

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a message may have (the envelope's two
levels included): deeper structures are refused before they are parsed, so that no
part of the host (parsing, validation, storing, drawing) recurses on them."""

_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_INNERMOST = re.compile(rb"\[\]|\{\}|\[\}|\{\]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class FrameError(ValueError):
    """A message that breaks the protocol; the text says how, for a person."""

# Error codes of responses (JSON-RPC reserves -32768..-32000).
TOOL_ERROR = 1
CANCELLED = 2
PERMISSION = 3
UNAVAILABLE = 4
INVALID = 5
CODE_KINDS = {TOOL_ERROR: "tool", CANCELLED: "cancelled", PERMISSION: "permission",
              UNAVAILABLE: "unavailable", INVALID: "invalid_arguments"}
KIND_CODES = {kind: code for code, kind in CODE_KINDS.items()}


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def request(id_: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(id_: int, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": value}


def error(id_: int | None, kind: str, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_,
            "error": {"code": KIND_CODES.get(kind, TOOL_ERROR), "message": message, "data": {"kind": kind}}}


def _depth_exceeds(line: bytes, limit: int) -> bool:
    """Whether arrays and objects in ``line`` nest deeper than ``limit``, without parsing."""
    if line.count(b"[") + line.count(b"{") <= limit:
        return False
    brackets = _STRINGS.sub(b"", line).translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        brackets, removed = _INNERMOST.subn(b"", brackets)
        if not brackets or not removed:
            return False
    return bool(brackets)


def _refuse_constant(name: str) -> Any:
    raise FrameError(f"a number that is not JSON ({name})")


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def decode(line: bytes, *, max_bytes: int = MAX_LINE, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """One message read from the other side, checked before and after it is parsed.

    A message is at most ``max_bytes`` long, nests at most ``max_depth`` deep, is UTF-8
    JSON without ``NaN``/``Infinity`` and without lone surrogates (``"\\ud800"``), and is
    an object. Whatever the bytes, only ``FrameError`` is raised.

    Raises:
        FrameError: The message breaks one of these rules; its text names which.
    """
    if len(line) > max_bytes:
        raise FrameError(f"a message of {len(line)} bytes, larger than {max_bytes}")
    if _depth_exceeds(line, max_depth):
        raise FrameError(f"a message nested deeper than {max_depth} levels")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameError(f"a message that is not UTF-8 (at byte {exc.start})") from None
    try:
        message = json.loads(text, parse_constant=_refuse_constant)
    except FrameError:
        raise
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"a message that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise FrameError("a message that is not an object")
    if _SURROGATE_ESCAPE.search(line) and _has_lone_surrogate(message):
        raise FrameError("a message with a lone surrogate in a string")
    return message
