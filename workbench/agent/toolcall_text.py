"""Tool calls a model wrote as text instead of sending them as structured calls.

Small local models (and servers whose chat template has no tool support) often
answer a tool prompt with the call written out as JSON: bare, in a fenced block,
or between ``<tool_call>`` tags. ``parse_tool_calls`` recognises a reply that is
*exactly* such a call (or a list of them) for tools on offer, and nothing else:
prose around the JSON, an unknown tool name or arguments that are not an object
mean the text stays text.

Shapes understood, each alone or in a list:

- ``{"name": "T", "arguments": {...}}`` (``parameters`` or ``input`` for ``arguments``;
  arguments may also be a JSON string holding the object);
- ``{"tool_call": {...}}``, ``{"function": {...}}``, ``{"tool_calls": [...]}``;
- ``{"tool": "T", "arguments": {...}}`` (the shape of the local grammar).

A leaf: imports nothing of ours but the message shapes.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection
from typing import Any

from workbench.agent.messages import ToolCall

_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\r?\n(?P<body>.*?)\r?\n?```\Z", re.DOTALL)
_TAGS = re.compile(r"\A<tool_call>(?P<body>.*?)</tool_call>\Z", re.DOTALL)

_FENCE_TAGS = ("", "json", "tool_call", "tool_code")


def could_be_tool_call(text: str) -> bool:
    """Whether ``text``, a reply's beginning, may still turn out to be a written tool call.

    The provider holds such text back instead of streaming it, until the reply is
    complete and ``parse_tool_calls`` decides; anything else streams at once (a
    reply opening with a Python code block or a ``[1]`` reference is not held).
    """
    start = text.lstrip()
    if not start:
        return True
    if start[0] == "{":
        rest = start[1:].lstrip()
        return not rest or rest[0] == '"'
    if start[0] == "[":
        return could_be_tool_call(start[1:]) and not start[1:].lstrip().startswith(("[", "`", "<"))
    if start.startswith("`"):
        if not "```".startswith(start[:3]):
            return False
        if len(start) <= 3:
            return True
        line, newline, body = start[3:].partition("\n")
        tag = line.strip().lower()
        if not newline:
            return any(known.startswith(tag) for known in _FENCE_TAGS)
        return tag in _FENCE_TAGS and could_be_tool_call(body)
    if start.startswith("<"):
        tag = "<tool_call>"
        return tag.startswith(start) or (start.startswith(tag) and could_be_tool_call(start[len(tag):]))
    return False


def parse_tool_calls(text: str, tool_names: Collection[str]) -> list[ToolCall] | None:
    """The tool calls ``text`` consists of, or None when it is anything else.

    Args:
        text: The whole reply.
        tool_names: The tools on offer; a call to any other name means "not a call".

    Returns:
        The calls (with fresh ids), or None.
    """
    body = text.strip()
    for pattern in (_FENCE, _TAGS):
        match = pattern.match(body)
        if match:
            body = match.group("body").strip()
            break
    if not body.startswith(("{", "[")):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    items = data if isinstance(data, list) else [data]
    calls: list[ToolCall] = []
    for item in items:
        found = _calls_in(item)
        if not found:
            return None
        calls.extend(found)
    if not calls or any(call.name not in tool_names for call in calls):
        return None
    return calls


def _calls_in(item: Any) -> list[ToolCall] | None:
    if not isinstance(item, dict):
        return None
    if set(item) == {"tool_calls"} and isinstance(item["tool_calls"], list):
        nested = [_calls_in(entry) for entry in item["tool_calls"]]
        if not nested or any(not found for found in nested):
            return None
        return [call for found in nested for call in found]  # type: ignore[union-attr]
    for wrapper in ("tool_call", "function"):
        if set(item) - {"id", "type"} == {wrapper} and isinstance(item[wrapper], dict):
            return _calls_in({**item[wrapper], **({"id": item["id"]} if "id" in item else {})})
    name = item.get("name", item.get("tool"))
    if not isinstance(name, str) or not name:
        return None
    keys = set(item) - {"id", "type", "name", "tool"}
    argument_keys = keys & {"arguments", "parameters", "input"}
    if keys - argument_keys or len(argument_keys) > 1:
        return None
    arguments = item[argument_keys.pop()] if argument_keys else {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    call_id = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else None
    return [ToolCall(id=call_id or f"call_{uuid.uuid4().hex[:12]}", name=name, arguments=arguments)]
