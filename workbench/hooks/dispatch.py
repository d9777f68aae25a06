"""The rules that combine hook handlers' answers, to the letter of the format.

A handler answers with JSON. ``on_tool_call``:

- ``{"block": reason}`` stops the call; the model gets an error naming the reason
  (at most 500 characters). The first block wins: later handlers do not run.
- ``{"replace_args": {...}}`` runs the tool with those arguments. Several
  replacements: the last wins; every handler sees the model's original arguments.
  Which hook made the replacement that won is kept (``CallDecision.replaced_by``):
  the gateway validates the new arguments against the tool's schema again and lets a
  hook rewrite another extension's tool only with the ``hooks.rewrite`` grant.
- ``{"additional_context": text}`` adds context to the eventual result; it combines
  with either form above (``{"block": …, "additional_context": …}``). Context of
  earlier handlers survives a later block.
- Anything else has no effect. A handler that fails or runs past its budget blocks
  the call (fail closed); the log names the tool and the failure class, never the
  arguments.

``on_tool_result`` (``args`` being what the tool ran with):

- ``{"replace": {"content": …, "details": {…}}}`` on a successful result overrides
  the content and/or details (the last replacement wins); omitted or null details
  keep the original; protected receipt keys cannot be added, removed or changed; an
  error result cannot be replaced; error status is never changed.
- ``{"additional_context": text}`` adds context, errors included.
- A failing handler is logged and the original result kept (fail open).

Context texts are valid UTF-8 with unsafe control characters stripped and the ends
trimmed (empty ones ignored), joined in registration order — call hooks first —
with a 4,000-character cap per tool call including separators and the ellipsis, and
handed back as one block labelled ``[hook context]`` after all replacements.
``on_session_start`` contexts follow the same cleaning and cap, within a 2-second
budget for the whole event: a handler still running at the deadline is killed and
the event's context discarded.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.hooks.registry import Hook

log = logging.getLogger(__name__)

BLOCK_REASON_MAX = 500
CONTEXT_MAX = 4000
CONTEXT_LABEL = "[hook context]"
SEPARATOR = "\n\n"
ELLIPSIS = "…"
SESSION_START_BUDGET_S = 2.0

PROTECTED_DETAILS = frozenset({
    "checkpoint_id", "checkpoint_ids", "checkpoint_kind", "affected_paths", "changed_paths",
    "written_paths", "mutation", "action", "outcome", "applied", "success", "partial", "error",
    "is_error", "acp", "provenance", "original", "snapshot", "snapshots", "per_file",
    "per_file_results", "oldText", "newText", "old_text", "new_text", "resolvedPath",
    "first_changed_line", "location", "trust", "trust_level",
})
"""Receipt keys a result hook cannot add, remove or replace in ``details``."""

RunHook = Callable[[Hook, dict[str, Any]], Awaitable[Any]]
"""Runs one handler with its event; raises on failure or when past its budget."""

_UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def clean_context(value: Any) -> str | None:
    """A context text made safe, or None when it is not text or nothing is left."""
    if not isinstance(value, str):
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    text = _UNSAFE.sub("", value).strip()
    return text or None


def join_contexts(texts: list[str], cap: int = CONTEXT_MAX) -> str | None:
    """Join in order with the cap counting separators and the ellipsis."""
    if not texts:
        return None
    joined = SEPARATOR.join(texts)
    if len(joined) > cap:
        joined = joined[: cap - len(ELLIPSIS)] + ELLIPSIS
    return joined


@dataclass
class CallDecision:
    """What ``on_tool_call`` handlers decided for one call."""

    arguments: Any
    blocked: str | None = None
    contexts: list[str] = field(default_factory=list)
    replaced_by: Hook | None = None
    """The hook whose replacement of the arguments won; None when none replaced them."""


@dataclass
class ResultDecision:
    """What ``on_tool_result`` handlers made of one result."""

    result: Any
    details: dict[str, Any]
    contexts: list[str] = field(default_factory=list)


async def on_tool_call(hooks: list[Hook], event: dict[str, Any], run: RunHook) -> CallDecision:
    """Apply every ``on_tool_call`` handler to ``event`` (tool_call_id, tool_name, args,
    cwd, session_id); see the module docstring."""
    original = event.get("args")
    decision = CallDecision(arguments=original)
    for hook in hooks:
        try:
            answer = await run(hook, {**event, "args": copy.deepcopy(original)})
        except Exception as exc:  # fail closed
            log.warning("on_tool_call hook of %s failed on %s: %s", hook.extension,
                        event.get("tool_name"), type(exc).__name__)
            decision.blocked = (f"a hook of {hook.extension} failed ({type(exc).__name__}); "
                                "the call was blocked")
            return decision
        if not isinstance(answer, dict):
            continue
        context = clean_context(answer.get("additional_context"))
        if context:
            decision.contexts.append(context)
        reason = answer.get("block")
        if isinstance(reason, str) and reason.strip():
            decision.blocked = reason.strip()[:BLOCK_REASON_MAX]
            return decision
        if "replace_args" in answer and isinstance(answer["replace_args"], dict):
            decision.arguments = answer["replace_args"]
            decision.replaced_by = hook
    return decision


def merge_details(original: dict[str, Any], replacement: Any) -> dict[str, Any]:
    """New display details, with the protected receipt keys as they were."""
    if not isinstance(replacement, dict):
        return original
    merged = {k: v for k, v in replacement.items() if k not in PROTECTED_DETAILS}
    merged.update({k: v for k, v in original.items() if k in PROTECTED_DETAILS})
    return merged


async def on_tool_result(hooks: list[Hook], event: dict[str, Any], run: RunHook, *,
                         details: dict[str, Any] | None = None) -> ResultDecision:
    """Apply every ``on_tool_result`` handler to ``event`` (tool_call_id, tool_name, args,
    result, is_error, cwd, session_id); see the module docstring."""
    decision = ResultDecision(result=event.get("result"), details=dict(details or {}))
    is_error = bool(event.get("is_error"))
    for hook in hooks:
        try:
            answer = await run(hook, copy.deepcopy(event))
        except Exception as exc:  # fail open
            log.warning("on_tool_result hook of %s failed on %s: %s", hook.extension,
                        event.get("tool_name"), type(exc).__name__)
            continue
        if not isinstance(answer, dict):
            continue
        context = clean_context(answer.get("additional_context"))
        if context:
            decision.contexts.append(context)
        replacement = answer.get("replace")
        if is_error or not isinstance(replacement, dict):
            continue
        if replacement.get("content") is not None:
            decision.result = replacement["content"]
        if replacement.get("details") is not None:
            decision.details = merge_details(decision.details, replacement["details"])
    return decision


async def on_session_start(hooks: list[Hook], event: dict[str, Any], run: RunHook,
                           budget_s: float = SESSION_START_BUDGET_S) -> str | None:
    """Run the session-start handlers together within one budget; their joined context,
    or None when there is none or the event ran out of time."""
    if not hooks:
        return None
    tasks = [asyncio.ensure_future(run(hook, copy.deepcopy(event))) for hook in hooks]
    done, pending = await asyncio.wait(tasks, timeout=budget_s)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
        log.warning("on_session_start ran past its %g s budget; its context was discarded", budget_s)
        return None
    texts = []
    for hook, task in zip(hooks, tasks):
        if task.exception() is not None:
            log.warning("on_session_start hook of %s failed: %s", hook.extension,
                        type(task.exception()).__name__)
            continue
        answer = task.result()
        if isinstance(answer, dict):
            context = clean_context(answer.get("additional_context"))
            if context:
                texts.append(context)
    return join_contexts(texts)


async def observe(hooks: list[Hook], event: dict[str, Any], run: RunHook) -> None:
    """Run observe-only handlers; their answers are ignored and failures only logged."""
    for hook in hooks:
        try:
            await run(hook, copy.deepcopy(event))
        except Exception as exc:
            log.warning("%s hook of %s failed: %s", hook.event, hook.extension, type(exc).__name__)
