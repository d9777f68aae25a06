"""The worker protocol: JSON-RPC 2.0 messages, one per line, over the worker's socket.

Host to worker: ``tool/call`` (a request: ``{"arguments", "chat", "ctx"}``, where
``ctx`` lists the members that ask the host, ``workbench.ctx_spec.wire()``, from which
the worker builds them) and ``tool/cancel`` (a notification). Worker to host: ``worker/ready`` once its tool is
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
"""The deepest nesting of arrays and objects a message may have (the envelope's levels
included): deeper structures are refused as they are read, so that no later part of
the host (validation, storing, drawing) recurses on them."""

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
    # A lone surrogate (a tool's text may hold one) goes out as its JSON escape.
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
        "utf-8", "backslashreplace")


def request(id_: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(id_: int, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": value}


def error(id_: int | None, kind: str, message: str) -> dict[str, Any]:
    # An error's words are for people: a lone surrogate in them (an exception's text may
    # hold one) is written as its visible escape, so the answer is never refused for it.
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return {"jsonrpc": "2.0", "id": id_,
            "error": {"code": KIND_CODES.get(kind, TOOL_ERROR), "message": message, "data": {"kind": kind}}}


def _too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects deeper than ``limit`` (looking at
    containers only, and stopping at the first that is too deep)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


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
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrameError(f"a message that is not UTF-8 (at byte {exc.start})") from None
    try:
        message = json.loads(text, parse_constant=_refuse_constant)
    except FrameError:
        raise
    except RecursionError:  # the parser's own guard, far deeper than ``max_depth``
        raise FrameError(f"a message nested deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise FrameError(f"a message that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise FrameError("a message that is not an object")
    # Fewer brackets than the limit cannot nest deeper than it: most messages stop here.
    if line.count(b"[") + line.count(b"{") > max_depth and _too_deep(message, max_depth):
        raise FrameError(f"a message nested deeper than {max_depth} levels")
    if _SURROGATE_ESCAPE.search(line) and _has_lone_surrogate(message):
        raise FrameError("a message with a lone surrogate in a string")
    return message
