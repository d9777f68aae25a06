"""Tool calls from models that cannot make them: a JSON-schema grammar and a plain prompt.

A small local model (SmolLM2, whose chat template knows nothing of tools) is asked
to reply with one JSON object, and llama.cpp's ``response_format`` turns the schema
into a grammar so the reply *is* such an object: one branch per tool on offer
(``{"tool": NAME, "arguments": {...}}`` with that tool's argument schema) plus a
final answer (``{"answer": TEXT}``). The conversation is written in plain roles
(system, user, assistant) so any chat template renders it: earlier calls become the
JSON the model would have written, tool results become user turns.

``AnswerStream`` decodes the answer's text while it streams, so a reply shows as it
is written even though it arrives wrapped in JSON.

A leaf: imports nothing of ours but the message shapes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from workbench.agent.messages import ChatMessage, ToolSpec

# Worded and ordered by measurement with SmolLM2-135M (ten prompts, greedy): this
# form chose right 7 times in 10; putting the answer first, or adding examples,
# made it answer everything itself (4 in 10).
_INSTRUCTIONS = (
    "You are a helpful assistant. Reply with one JSON object.\n"
    "Tools:\n{tools}\n"
    'If the user asks for what one of these tools does, reply {{"tool": "NAME", "arguments": {{...}}}}.\n'
    'Otherwise answer yourself: reply {{"answer": "..."}}.'
)


def reply_schema(tools: list[ToolSpec], *, loose: bool = False) -> dict[str, Any]:
    """The JSON schema of a reply: one branch per tool, then the answer.

    Args:
        tools: The tools on offer.
        loose: Accept any object as arguments (when the server cannot turn a tool's
            own schema into a grammar; the gateway still validates the call).
    """
    branches: list[dict[str, Any]] = []
    for tool in tools:
        arguments = {"type": "object"} if loose else _object_schema(tool.parameters)
        branches.append({
            "type": "object",
            "properties": {"tool": {"const": tool.name}, "arguments": arguments},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        })
    branches.append({
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    })
    return {"anyOf": branches}


def _object_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    schema = dict(parameters or {})
    schema.setdefault("type", "object")
    schema.pop("$schema", None)
    return schema


def response_format(tools: list[ToolSpec], *, loose: bool = False) -> dict[str, Any]:
    """The ``response_format`` field of an OpenAI-style request that applies the grammar."""
    return {"type": "json_schema",
            "json_schema": {"name": "reply", "strict": True,
                            "schema": reply_schema(tools, loose=loose)}}


def tool_list(tools: list[ToolSpec]) -> str:
    """The tools as prompt lines: name, what it does, its arguments' schemas."""
    lines = []
    for tool in tools:
        properties = (tool.parameters or {}).get("properties") or {}
        lines.append(f"- {tool.name}: {tool.description.strip().rstrip('.') or 'no description'}. "
                     f"Arguments: {json.dumps(properties, ensure_ascii=False)}")
    return "\n".join(lines)


def plain_messages(messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> list[dict[str, str]]:
    """The conversation in system/user/assistant roles only, with the tool instructions
    added to the system prompt when tools are on offer."""
    system = [m.content for m in messages if m.role == "system" and m.content]
    if tools:
        system.append(_INSTRUCTIONS.format(tools=tool_list(tools)))
    out: list[dict[str, str]] = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant":
            content = message.content
            if message.tool_calls:
                content = "\n".join(json.dumps({"tool": call.name, "arguments": call.arguments},
                                               ensure_ascii=False)
                                    for call in message.tool_calls)
            elif tools:
                content = json.dumps({"answer": content}, ensure_ascii=False)
            out.append({"role": "assistant", "content": content})
        elif message.role == "tool":
            out.append({"role": "user",
                        "content": f"Result of the tool {message.name or 'call'}: {message.content}"})
        else:
            out.append({"role": "user", "content": message.content})
    return out


_ANSWER_START = re.compile(r'\A\s*\{\s*"answer"\s*:\s*"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class AnswerStream:
    """Decodes ``{"answer": "..."}`` text as it streams; tool calls wait for the end.

    Feed the reply's pieces; ``feed`` returns answer text ready to show (escape
    sequences decoded, never cut inside one). ``raw`` is everything fed, for the
    final parse.
    """

    def __init__(self) -> None:
        self.raw = ""
        self._pos: int | None = None
        self._done = False
        self._high_surrogate = ""

    @property
    def answering(self) -> bool:
        """Whether the reply has shown itself to be an answer."""
        return self._pos is not None

    def feed(self, piece: str) -> str:
        self.raw += piece
        if self._done:
            return ""
        if self._pos is None:
            match = _ANSWER_START.match(self.raw)
            if not match:
                return ""
            self._pos = match.end()
        out: list[str] = []
        raw, pos = self.raw, self._pos
        while pos < len(raw):
            char = raw[pos]
            if char == '"':
                self._done = True
                pos += 1
                break
            if char != "\\":
                out.append(self._flush_surrogate() + char)
                pos += 1
                continue
            if pos + 1 >= len(raw):
                break
            code = raw[pos + 1]
            if code == "u":
                if pos + 6 > len(raw):
                    break
                out.append(self._unicode(raw[pos + 2:pos + 6]))
                pos += 6
            else:
                out.append(self._flush_surrogate() + _ESCAPES.get(code, code))
                pos += 2
        self._pos = pos
        return "".join(out)

    def _unicode(self, digits: str) -> str:
        try:
            value = int(digits, 16)
        except ValueError:
            return ""
        if 0xD800 <= value < 0xDC00:
            pending, self._high_surrogate = self._flush_surrogate(), chr(value)
            return pending
        if 0xDC00 <= value < 0xE000 and self._high_surrogate:
            pair = self._high_surrogate + chr(value)
            self._high_surrogate = ""
            return pair.encode("utf-16", "surrogatepass").decode("utf-16")
        return self._flush_surrogate() + chr(value)

    def _flush_surrogate(self) -> str:
        pending, self._high_surrogate = self._high_surrogate, ""
        return pending.encode("utf-8", "replace").decode("utf-8") if pending else ""
