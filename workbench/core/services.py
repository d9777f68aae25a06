"""The host's side of the capabilities a tool reaches through ``ctx``.

One object per Host: the private databases, one-shot completions from the
session's model, speech, the user's memories, and scheduled-prompt proposals
(which a person reviews before anything is saved).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from workbench.agent.messages import ChatMessage, TextChunk
from workbench.capabilities import speech
from workbench.capabilities.database import ExtensionDatabases
from workbench.capabilities.memories import Memories
from workbench.capabilities.schedules import check_draft
from workbench.errors import ToolError, WorkbenchError
from workbench.events import RequestDenied, ScheduleProposalRequest
from workbench.tools.context import ToolContext
from workbench.tools.registry import Tool

if TYPE_CHECKING:
    from workbench.agent.providers import ModelProvider
    from workbench.core.workspace import Workspace

MAX_PROMPT = 200_000


class ModelSource(Protocol):
    """Where a tool's ``llm.complete`` finds its model (``Chats`` is one)."""

    def talks_to(self, session_id: str | None) -> ModelProvider:
        """The model of the chat ``session_id``, else the host's."""
        ...


NET_REFUSED = "net.refused"
"""The audit action of a request the proxy refused a tool."""


class HostServices:
    """See the module docstring; built by the Host and handed to the runner.

    Args:
        store: Where proposals and refusals are kept.
        workspace: The config in force (speech switches).
        databases: The extensions' private databases.
        memories: What ``ctx.memories`` reaches.
    """

    def __init__(self, *, store, workspace: Workspace, databases: ExtensionDatabases,
                 memories: Memories) -> None:
        self.store = store
        self.workspace = workspace
        self.databases = databases
        self.memory_store = memories
        self.models: ModelSource | None = None
        """The model of a chat (``llm.complete``). Set by the host once its chats are
        built: they come after the sandbox these services are handed to."""
        self.on_scheduled: Callable[[int], None] | None = None
        """Called with a proposal's id once it is saved (the host freezes its run card)."""

    def record_net_refusal(self, tool: str, event: dict[str, Any], session_id: str | None) -> None:
        """Keep a request the proxy refused ``tool`` (``net.refused`` in the audit log),
        where ``grants explain`` finds it (``host.grants.explain``)."""
        self.store.audit("sandbox", NET_REFUSED, tool, {
            "target": str(event.get("target", "")), "status": event.get("status"),
            "reason": str(event.get("reason", ""))[:2000], "session_id": session_id})

    async def complete(self, request: dict[str, Any], session_id: str | None = None) -> dict[str, str]:
        """One completion from the model of the chat ``session_id`` (the host's model
        outside a chat): ``{prompt, systemPrompt?, maxTokens?}``."""
        prompt = request.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            raise ToolError("invalid_arguments", "llm.complete needs a prompt")
        system = request.get("systemPrompt")
        if len(prompt) + len(system or "") > MAX_PROMPT:
            raise ToolError("invalid_arguments", f"the prompt is longer than {MAX_PROMPT} characters")
        messages = ([ChatMessage("system", system)] if isinstance(system, str) and system else [])
        messages.append(ChatMessage("user", prompt))
        limit = request.get("maxTokens")
        parts: list[str] = []
        try:
            if self.models is None:
                raise ToolError("unavailable", "no model is connected here")
            async for chunk in self.models.talks_to(session_id).stream(messages, []):
                if isinstance(chunk, TextChunk):
                    parts.append(chunk.text)
        except WorkbenchError as exc:
            raise ToolError("unavailable", f"the model could not answer: {exc}") from exc
        text = "".join(parts)
        if isinstance(limit, int) and limit > 0:
            text = " ".join(text.split(" ")[: limit])
        return {"text": text}

    async def speak(self, text: str) -> dict[str, Any]:
        enabled = self.workspace.config.settings.speech.tts
        return await asyncio.to_thread(speech.speak, text, enabled=enabled)

    async def transcribe(self, request: dict[str, Any]) -> dict[str, Any]:
        enabled = self.workspace.config.settings.speech.stt
        return await asyncio.to_thread(speech.transcribe, request, enabled=enabled)

    async def memories(self, tool: Tool, member: str, params: dict[str, Any],
                       session_id: str | None = None) -> Any:
        return self.memory_store.call(member, params, actor=tool.qualified_name,
                                      session_id=session_id)

    async def schedule_prompt(self, tool: Tool, draft: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """Show the draft to a person; save what they accept (possibly edited)."""
        draft = check_draft(draft)
        request = ScheduleProposalRequest(tool=tool.qualified_name, draft=draft)
        try:
            answer = await ctx.ask(request)
        except RequestDenied:
            return {"accepted": False}
        if not isinstance(answer, dict) or not answer.get("accepted"):
            return {"accepted": False}
        saved = check_draft(answer.get("draft") or draft)
        prompt_id = self.store.add_scheduled_prompt(saved, source=tool.qualified_name)
        if self.on_scheduled is not None:
            # The run card is frozen now, with what the person had when they accepted.
            self.on_scheduled(prompt_id)
        self.store.audit("person", "schedule.accepted", tool.qualified_name, {"title": saved["title"]})
        return {"accepted": True, "draft": saved}
