"""The chat-completions wire format: messages and tools out, streamed deltas in.

``to_wire`` and ``tools_to_wire`` write the request's ``messages`` and ``tools``;
``Reply`` puts the streamed tool-call deltas together, by ``index``, or by id and
order from servers that send no index, and turns them into ``ToolCall``s. Imports
nothing of ours but the message shapes, ``Usage`` and the errors.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

from workbench.agent.history_repair import repair
from workbench.agent.messages import ChatMessage, ToolCall, ToolSpec
from workbench.agent.wire import Usage
from workbench.errors import ModelError


@dataclass
class Slot:
    """One tool call being put together from deltas."""

    id: str = ""
    name: str = ""
    pieces: list[str] = field(default_factory=list)
    whole: dict[str, Any] | None = None


@dataclass
class Reply:
    """What one streamed reply said, apart from its text: tool calls being put together,
    the finish reason, whether ``[DONE]`` came, and the usage."""

    slots: dict[Any, Slot] = field(default_factory=dict)
    finish_reason: str | None = None
    done: bool = False
    usage: Usage | None = None

    def add_delta(self, delta: dict[str, Any]) -> None:
        index = delta.get("index")
        call_id = delta.get("id") if isinstance(delta.get("id"), str) else ""
        function = delta.get("function") or {}
        if isinstance(index, int):
            key = index
        else:
            key = next((k for k, s in self.slots.items() if call_id and s.id == call_id), None)
            if key is None:
                last = next(reversed(self.slots), None)
                starts_new = call_id or last is None or (function.get("name") and self.slots[last].name)
                key = ("n", len(self.slots)) if starts_new else last
        slot = self.slots.setdefault(key, Slot())
        if call_id and not slot.id:
            slot.id = call_id
        name = function.get("name")
        if isinstance(name, str) and name and not slot.name:
            slot.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            slot.whole = arguments
        elif isinstance(arguments, str) and arguments:
            slot.pieces.append(arguments)

    def calls(self) -> list[ToolCall]:
        return [self._call(slot) for slot in self.slots.values()]

    def _call(self, slot: Slot) -> ToolCall:
        if not slot.name:
            raise ModelError("the server sent a tool call without a tool name")
        raw = "".join(slot.pieces).strip()
        arguments: Any = slot.whole if slot.whole is not None and not raw else {}
        if raw:
            cut = " (the reply was cut off at the token limit)" if self.finish_reason == "length" else ""
            try:
                arguments = json.loads(raw)
                if isinstance(arguments, str):  # sent twice encoded
                    arguments = json.loads(arguments)
            except ValueError:
                shown = raw if len(raw) <= 120 else raw[:117] + "..."
                raise ModelError(f"the model called {slot.name!r} with arguments that are not "
                                 f"valid JSON{cut}: {shown}") from None
            if not isinstance(arguments, dict):
                raise ModelError(f"the model called {slot.name!r} with arguments that are not a "
                                 f"JSON object{cut}")
        return ToolCall(id=slot.id or f"call_{uuid.uuid4().hex[:12]}", name=slot.name,
                        arguments=arguments)


def to_wire(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as chat-completions messages, repaired first (``history_repair``:
    each call answered right after it, ids unique, no result without its call)."""
    out: list[dict[str, Any]] = []
    for message in repair(messages):
        if message.role == "assistant" and message.tool_calls:
            out.append({"role": "assistant", "content": message.content or None,
                        "tool_calls": [{"id": call.id, "type": "function",
                                        "function": {"name": call.name,
                                                     "arguments": json.dumps(call.arguments,
                                                                             ensure_ascii=False)}}
                                       for call in message.tool_calls]})
        elif message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id or "",
                        "content": message.content})
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def tools_to_wire(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The tools as ``function`` specs."""
    return [{"type": "function",
             "function": {"name": tool.name, "description": tool.description,
                          "parameters": tool.parameters or {"type": "object", "properties": {}}}}
            for tool in tools]
