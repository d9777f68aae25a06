"""Histories a model accepts: every call answered once, right after it, and nothing else.

OpenAI-compatible servers refuse a conversation in which an assistant message's tool
calls are not followed at once by one tool message per call ("An assistant message with
'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"), or
a tool message that answers no call before it; Anthropic's API refuses a ``tool_use``
without its ``tool_result`` in the next user message, and ids that repeat. A stored
session can hold any of these, whatever the cause: a process killed between a call and
its result, results in another order, a message in between, a model that reuses ids.
``repair`` puts the conversation in the shape every wire wants, without changing what
was said, just before it is written for the wire (the store keeps what happened):

- each assistant message's calls get ids unique in the whole conversation (a repeated
  or missing id gets a suffix or a number; its result follows the new id);
- right after it comes one tool message per call, in the calls' order: the result that
  answers it — by our id (``call_id``) when both have it, else by the model's id, the
  first call before it still unanswered — wherever it was stored, or, when there is
  none, a result saying the call has none (it was interrupted);
- a tool message that answers no call before it is left out;
- every other message keeps its place.

Imports nothing of ours but the message shapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace

from workbench.agent.messages import ChatMessage, ToolCall

NO_RESULT = json.dumps({"ok": False, "error": {
    "kind": "interrupted",
    "message": "this call has no result: it was interrupted before it finished, and may or "
               "may not have taken effect"}})
"""What the model is told of a call whose result is not in the conversation."""


def repair(messages: Sequence[ChatMessage], *,
           clean: Callable[[str], str] = lambda value: value) -> list[ChatMessage]:
    """``messages`` in the shape every wire accepts; see the module docstring.

    Args:
        messages: The conversation, as stored.
        clean: Turns an id into one the wire allows (Anthropic's characters); applied
            before ids are made unique, so two ids that clean alike stay apart.

    Returns:
        A new list (the messages themselves are not changed).
    """
    answers = _answers(messages)
    used: set[str] = set()
    out: list[ChatMessage] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            continue  # written after its call, or left out
        if message.role != "assistant" or not message.tool_calls:
            out.append(message)
            continue
        calls = []
        for number, call in enumerate(message.tool_calls, start=1):
            wire_id = _unique(clean(call.id) or f"call_{index}_{number}", used)
            calls.append(replace(call, id=wire_id))
        out.append(replace(message, tool_calls=calls))
        for position, call in enumerate(calls):
            answer = answers.get((index, position))
            if answer is None:
                out.append(ChatMessage("tool", NO_RESULT, tool_call_id=call.id, name=call.name,
                                       call_id=call.call_id))
            else:
                out.append(replace(answer, tool_call_id=call.id, name=answer.name or call.name))
    return out


def _answers(messages: Sequence[ChatMessage]) -> dict[tuple[int, int], ChatMessage]:
    """Which tool message answers which call: ``(message index, call position)`` → it."""
    open_calls: list[tuple[int, int, ToolCall]] = []
    found: dict[tuple[int, int], ChatMessage] = {}
    for index, message in enumerate(messages):
        if message.role == "assistant":
            open_calls.extend((index, position, call)
                              for position, call in enumerate(message.tool_calls))
        elif message.role == "tool":
            match = None
            if message.call_id:
                match = next((entry for entry in open_calls if entry[2].call_id == message.call_id),
                             None)
            if match is None:
                match = next((entry for entry in open_calls
                              if entry[2].id == (message.tool_call_id or "")
                              and not (message.call_id and entry[2].call_id)), None)
            if match is not None:
                open_calls.remove(match)
                found[(match[0], match[1])] = message
    return found


def _unique(wanted: str, used: set[str]) -> str:
    candidate, suffix = wanted, 2
    while candidate in used:
        candidate, suffix = f"{wanted}_{suffix}", suffix + 1
    used.add(candidate)
    return candidate
