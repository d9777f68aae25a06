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
from typing import Any

MAX_LINE = 8 << 20
"""The longest message either side accepts (a guard, above every payload bound)."""

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
    return {"jsonrpc": "2.0", "id": id_,
            "error": {"code": KIND_CODES.get(kind, TOOL_ERROR), "message": message, "data": {"kind": kind}}}
