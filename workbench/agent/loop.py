"""The turn loop: a user message, the model, tool calls, their results, the model again.

Every message is persisted as it completes and every step is published as an event.
Tool calls go through a callable the core injects (its gateway), so the loop never
runs a tool itself and cannot skip a check.

Each call gets our own id (``ToolCall.call_id``, the key of its record) before it is
stored; the model's id stays as it said it — made unique within its message when the
model repeated one or gave none — and is what the call's result answers on the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from workbench.agent.history import message_of, with_head
from workbench.agent.messages import (ChatMessage, TextChunk, ToolCall, ToolCallChunk, ToolSpec,
                                     new_call_id)
from workbench.agent.providers import ModelProvider
from workbench.errors import WorkbenchError
from workbench.events import MessageEnded, MessageStarted, Notice, TextDelta, TurnEnded

CallTool = Callable[[ToolCall, str], Awaitable[Any]]
"""``(call, user_message) -> outcome`` where outcome has ``to_json()``; the call carries
our id (``call_id``) and its stored message (``message_id``) beside the model's id."""

DEFAULT_MAX_STEPS = 24

CANCELLED = {"ok": False, "error": {
    "kind": "cancelled", "message": "the turn was cancelled before this call finished"}}
"""The result of a call the turn's cancellation left without one."""

T = TypeVar("T")


async def off_loop(write: Callable[[], T]) -> T:
    """``write`` (store work) in a worker thread, off the event loop. A cancellation
    that comes while it runs waits for it to end, then goes on: a write is never left
    half-known, and what it stored can be answered for (a call's result)."""
    job = asyncio.ensure_future(asyncio.to_thread(write))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        while not job.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(job)
        raise


@dataclass
class TurnResult:
    """How a turn ended and the assistant's last text."""

    session_id: str
    status: str
    text: str
    error: str | None = None


def history(store, session_id: str) -> list[ChatMessage]:
    """The persisted conversation of ``session_id`` in the providers' shape, read whole
    (a turn reads it through ``Histories``, which reads only what was added)."""
    return [message_of(*row) for row in store.history_rows(session_id)]


def distinct_ids(calls: list[ToolCall]) -> None:
    """Give the calls of one message distinct model ids: a repeated (or missing) id
    gets a suffix, ``c1`` then ``c1_2``; the first keeps its own."""
    seen: set[str] = set()
    for number, call in enumerate(calls, start=1):
        base = call.id or f"call_{number}"
        candidate, suffix = base, 2
        while candidate in seen:
            candidate, suffix = f"{base}_{suffix}", suffix + 1
        call.id = candidate
        seen.add(candidate)


class TurnLoop:
    """Runs turns of one session against one provider.

    Args:
        store: The store (sessions and messages).
        provider: The model.
        publish: Where events go.
        call_tool: The core's gateway, injected.
        tools: What the model is offered, fetched at each step.
        max_steps: Model round-trips allowed in one turn before it stops with an error.
        system_context: Messages put before the history at each step and never stored
            (the memories the core hands the model), fetched at each step.
        read_history: The session's conversation as stored (``Histories.of``, which reads
            only what was added since it last looked); read whole by default.

    Store work runs in a worker thread, off the event loop the TUI draws on; only
    what is written while the turn is being cancelled is written on the loop, so
    every call of the turn is answered before the cancellation goes on.
    """

    def __init__(self, *, store, provider: ModelProvider, publish: Callable,
                 call_tool: CallTool, tools: Callable[[], list[ToolSpec]],
                 parallel_safe: Callable[[str], bool] = lambda name: False,
                 max_steps: int = DEFAULT_MAX_STEPS,
                 system_context: Callable[[], list[ChatMessage]] | None = None,
                 read_history: Callable[[str], Sequence[ChatMessage]] | None = None) -> None:
        self.store = store
        self.provider = provider
        self.publish = publish
        self.call_tool = call_tool
        self.tools = tools
        self.parallel_safe = parallel_safe
        self.max_steps = max_steps
        self.system_context = system_context
        self.read_history = read_history or functools.partial(history, store)

    async def run(self, session_id: str, text: str) -> TurnResult:
        """Run one turn; cancellation ends it with status ``cancelled``, kept in the store.

        A store write that fails because the disk is full ends it with status ``error``:
        the turn is kept up to there and marked failed (``Store.fail_turn``), what the
        person typed included."""
        last_text = ""
        typed: str | None = text
        try:
            await self._add(session_id, "user", text)
            typed = None
            for _ in range(self.max_steps):
                reply, calls = await self._model_step(session_id)
                last_text = reply or last_text
                if not calls:
                    return await self._end_off_loop(session_id, "done", last_text)
                await self._run_batch(session_id, calls, text)
            message = f"the turn stopped after {self.max_steps} model steps without a final answer"
            self.publish(Notice(level="warning", message=message))
            return self._end(session_id, "error", last_text, message)
        except asyncio.CancelledError:
            self._end(session_id, "cancelled", last_text)
            raise
        except Exception as exc:
            said = self.store.disk_full(exc)
            if said is not None:
                return self._failed(session_id, last_text, said, typed)
            if isinstance(exc, WorkbenchError):
                return self._end(session_id, "error", last_text, str(exc))
            raise

    def _failed(self, session_id: str, text: str, said: str, typed: str | None) -> TurnResult:
        """End a turn the disk cut short (the failed write said ``said``): marked failed
        in the room the store keeps."""
        marked = self.store.fail_turn(
            session_id, f"the disk holding the store was full ({said}); what the turn said "
            "after this point was not saved", typed)
        where = getattr(self.store, "path", "the store")
        error = (f"{where}: the disk is full ({said}); the turn was cut short and "
                 + ("is kept up to there, marked failed" if marked else
                    "could not be marked failed: its calls are answered when the session next runs")
                 + "; free some space and send it again")
        return self._ended_turn(session_id, "error", text, error)

    async def _run_batch(self, session_id: str, calls: list[ToolCall], user_text: str) -> None:
        """Run one model message's calls: consecutive parallel-safe calls together, the
        others one at a time, in order. Results are stored in the order of the calls;
        on cancellation every call without a result gets a ``cancelled`` one, so the
        session stays consistent (each call answered) and can resume."""
        results: dict[str, Any] = {}

        async def run_one(call: ToolCall) -> None:
            results[call.call_id] = (await self.call_tool(call, user_text)).to_json()

        groups: list[list[ToolCall]] = []
        for call in calls:
            if groups and self.parallel_safe(call.name) and all(self.parallel_safe(c.name) for c in groups[-1]):
                groups[-1].append(call)
            else:
                groups.append([call])
        def save() -> None:
            self._answer(session_id, calls, results)

        try:
            for group in groups:
                if len(group) == 1:
                    await run_one(group[0])
                else:
                    await asyncio.gather(*(run_one(call) for call in group))
        except BaseException:
            save()  # on the loop: every call is answered before the cancellation goes on
            raise
        await off_loop(save)

    def _answer(self, session_id: str, calls: list[ToolCall], results: dict[str, Any]) -> None:
        """Store each call's result, in the calls' order; one without is ``CANCELLED``."""
        for call in calls:
            self.store.add_message(session_id, "tool", content=json.dumps(results.get(call.call_id, CANCELLED)),
                                   tool_call_id=call.id, name=call.name, call_id=call.call_id)

    async def _model_step(self, session_id: str) -> tuple[str, list[ToolCall]]:
        message_id = uuid.uuid4().hex[:12]
        self.publish(MessageStarted(session_id=session_id, message_id=message_id, role="assistant"))
        parts: list[str] = []
        calls: list[ToolCall] = []

        def view() -> Sequence[ChatMessage]:
            messages = self.read_history(session_id)
            if self.system_context is not None:
                messages = with_head(self.system_context(), messages)
            return messages

        def save() -> None:
            text = "".join(parts)
            distinct_ids(calls)
            for call in calls:
                call.call_id = new_call_id()
            if text or calls:
                stored = self.store.add_message(session_id, "assistant", content=text,
                                                tool_calls=[c.to_json() for c in calls] or None)
                for call in calls:
                    call.message_id = stored

        try:
            messages = await off_loop(view)
            async for chunk in self.provider.stream(messages, self.tools()):
                if isinstance(chunk, TextChunk):
                    parts.append(chunk.text)
                    self.publish(TextDelta(session_id=session_id, message_id=message_id, text=chunk.text))
                elif isinstance(chunk, ToolCallChunk):
                    calls.append(chunk.call)
        except asyncio.CancelledError:
            save()  # on the loop: what was said is kept, its calls answered, before it goes on
            self._answer(session_id, calls, {})
            self._ended(session_id, message_id, parts)
            raise
        except BaseException:
            save()
            self._ended(session_id, message_id, parts)
            raise
        try:
            await off_loop(save)
        except asyncio.CancelledError:
            self._answer(session_id, calls, {})  # stored: answered before it goes on
            self._ended(session_id, message_id, parts)
            raise
        self._ended(session_id, message_id, parts)
        return "".join(parts), calls

    def _ended(self, session_id: str, message_id: str, parts: list[str]) -> None:
        self.publish(MessageEnded(session_id=session_id, message_id=message_id,
                                  role="assistant", text="".join(parts)))

    async def _add(self, session_id: str, role: str, text: str) -> None:
        await off_loop(lambda: self.store.add_message(session_id, role, content=text))
        self.publish(MessageEnded(session_id=session_id, message_id=uuid.uuid4().hex[:12],
                                  role=role, text=text))

    async def _end_off_loop(self, session_id: str, status: str, text: str) -> TurnResult:
        await off_loop(lambda: self.store.touch_session(session_id))
        return self._ended_turn(session_id, status, text)

    def _end(self, session_id: str, status: str, text: str, error: str | None = None) -> TurnResult:
        self.store.touch_session(session_id)
        return self._ended_turn(session_id, status, text, error)

    def _ended_turn(self, session_id: str, status: str, text: str,
                    error: str | None = None) -> TurnResult:
        self.publish(TurnEnded(session_id=session_id, status=status, text=text, error=error))
        return TurnResult(session_id, status, text, error)
