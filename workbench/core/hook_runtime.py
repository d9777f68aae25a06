"""Running extensions' hooks for the host: each handler in a sandboxed worker, within
its budget, and the lifecycle events turned into observe-only hook calls.

A handler runs like a tool of its extension with no permissions at all, called as
``fn(event, ctx)``; past ``hooks.budget_ms`` its worker is killed (which, for
``on_tool_call``, blocks the call). Observe-only handlers run in the background and
never slow the agent; they are awaited or stopped when the host closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from workbench.errors import ToolError
from workbench.events import (Event, MessageEnded, MessageStarted, RequestDenied, ToolCallEnded,
                              TurnEnded)
from workbench.hooks import dispatch
from workbench.hooks.registry import OBSERVE_ONLY, Hook, HookRegistry
from workbench.tools.context import ToolContext
from workbench.tools.registry import Tool

log = logging.getLogger(__name__)


def _hook_tool(hook: Hook) -> Tool:
    return Tool(name=hook.event, description=f"{hook.event} hook", parameters={"type": "object"},
                extension=hook.extension, source="extension", function=hook.function,
                folder=hook.folder, entry=hook.entry, runtime=hook.runtime, owner=hook.owner)


async def _no_requests(what: Any) -> Any:
    raise RequestDenied("hooks cannot ask the person anything")


class HookRuntime:
    """Owns running hooks for one host.

    Args:
        registry: The hooks.
        runner: The sandbox runner (``SandboxRunner``).
        budget_ms: How long one handler may run.
        cwd: The working folder reported in events.
    """

    def __init__(self, *, registry: HookRegistry, runner, budget_ms: int, cwd: str) -> None:
        self.registry = registry
        self.runner = runner
        self.budget_ms = budget_ms
        self.cwd = cwd
        self._background: set[asyncio.Task] = set()
        self._turn_results: list[dict[str, Any]] = []
        self._last_message: dict[str, Any] | None = None
        self.started_sessions: set[str] = set()

    async def run(self, hook: Hook, event: dict[str, Any]) -> Any:
        """Run one handler in a sandboxed worker; raises when it fails or overruns."""
        ctx = ToolContext(sink=lambda kind, data: None, asker=lambda qs: _no_requests(qs),
                          requester=_no_requests)
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a cancellation
        # that lands in the turn the handler's answer arrives, and the answer is acted on.
        try:
            async with asyncio.timeout(self.budget_ms / 1000):
                return await self.runner(_hook_tool(hook), event, ctx, timeout_ms=self.budget_ms)
        except TimeoutError:
            raise ToolError("timeout", f"the {hook.event} hook of {hook.extension} ran past "
                            f"its {self.budget_ms} ms budget") from None

    def observe(self, event: str,
                payload: dict[str, Any] | Callable[[], dict[str, Any]]) -> None:
        """Fire an observe-only event's handlers in the background.

        Args:
            payload: The event, or what builds it (a store read, say): called, at
                once, only when a hook handles the event.
        """
        if event not in OBSERVE_ONLY:
            raise ValueError(f"{event} is not an observe-only event")
        hooks = self.registry.for_event(event)
        if not hooks:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        event_payload = payload() if callable(payload) else payload
        task = loop.create_task(dispatch.observe(hooks, event_payload, self.run))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def on_event(self, event: Event) -> None:
        """Map the core's events to lifecycle hooks (a bus listener)."""
        if isinstance(event, MessageStarted) and event.role == "assistant":
            self._turn_results = []
            self.observe("on_turn_start", {"session_id": event.session_id})
            self.observe("on_message_start", {"message": {"role": "assistant",
                                                         "session_id": event.session_id}})
        elif isinstance(event, MessageEnded) and event.role == "assistant":
            self._last_message = {"role": "assistant", "content": event.text,
                                  "session_id": event.session_id}
            self.observe("on_message_end", {"message": self._last_message})
        elif isinstance(event, ToolCallEnded):
            self._turn_results.append({"id": event.call_id, "name": event.tool, "ok": event.ok})
        elif isinstance(event, TurnEnded):
            self.observe("on_turn_end", {"message": self._last_message,
                                         "tool_results": list(self._turn_results)})

    async def session_start(self, session_id: str, *, resumed: bool) -> str | None:
        """The ``on_session_start`` context for a session starting in this host, once."""
        if session_id in self.started_sessions:
            return None
        self.started_sessions.add(session_id)
        hooks = self.registry.for_event("on_session_start")
        return await dispatch.on_session_start(hooks, {
            "session_id": session_id, "cwd": self.cwd,
            "session_scope": "resumed" if resumed else "new"}, self.run)

    async def shutdown(self, reason: str = "exit") -> None:
        """``on_session_shutdown`` for every session this host started (2-second budget),
        then wait a moment for background handlers and stop the rest."""
        hooks = self.registry.for_event("on_session_shutdown")
        if hooks:
            calls = [dispatch.observe(hooks, {"session_id": sid, "cwd": self.cwd, "reason": reason},
                                      self.run) for sid in sorted(self.started_sessions)]
            if calls:
                await asyncio.wait([asyncio.ensure_future(c) for c in calls],
                                   timeout=dispatch.SESSION_START_BUDGET_S)
        if self._background:
            await asyncio.wait(list(self._background), timeout=self.budget_ms / 1000)
        for task in list(self._background):
            task.cancel()
