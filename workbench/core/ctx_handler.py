"""Serving one call's ctx on the host: what the worker's ``ctx`` members reach.

Notifications (progress, logs, display bubbles, what the tool printed, and what the
host's proxy refused or could not carry for the worker) become events through the
call's ``ToolContext``; a streamed answer goes to its ``stream``,
which only a model provider's call has. Requests are checked before they are
served: capabilities are asked for at their first use, the private database only
exists for an extension that declared ``"database": true``, and every payload is
checked for shape so that a hostile worker cannot make the host misbehave.

Which requests exist, and how each is gated, is ``workbench.ctx_spec``; each
capability's answer is a function registered here with ``@handles(name)``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from workbench import ctx_spec
from workbench.errors import ToolError
from workbench.tools.context import LOG_LEVELS, NoStream, ToolContext
from workbench.tools.registry import Tool

DISPLAY_KINDS = ("markdown", "image", "table", "diff")
QUESTION_KINDS = ("choice", "diff", "files", "image", "table")
MAX_QUESTIONS = 20


def _require(params: dict[str, Any], name: str, kind: type | tuple = str) -> Any:
    value = params.get(name)
    if not isinstance(value, kind):
        raise ToolError("invalid_arguments", f"{name} is missing or of the wrong type")
    return value


def check_questions(questions: Any) -> list[dict[str, Any]]:
    """Refuse a malformed ask-user form before it reaches a person."""
    if not isinstance(questions, list) or not questions:
        raise ToolError("invalid_arguments", "askUser needs a non-empty list of questions")
    if len(questions) > MAX_QUESTIONS:
        raise ToolError("invalid_arguments", f"askUser takes at most {MAX_QUESTIONS} questions")
    for index, question in enumerate(questions):
        if not isinstance(question, dict) or not isinstance(question.get("question"), str):
            raise ToolError("invalid_arguments", f"question {index} needs a `question` text")
        kind = question.get("kind", "choice")
        if kind not in QUESTION_KINDS:
            raise ToolError("invalid_arguments", f"question {index} has an unknown kind {kind!r}")
    return questions


class CallHandler:
    """The ``CtxHandler`` of one call; see the module docstring."""

    def __init__(self, tool: Tool, ctx: ToolContext, services) -> None:
        self.tool = tool
        self.ctx = ctx
        self.services = services

    # --- one-way -------------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        if method == "ctx/progress":
            progress = params.get("progress")
            if isinstance(progress, (int, float)):
                label, description = params.get("label"), params.get("description")
                self.ctx.set_progress(float(progress), label if isinstance(label, str) else None,
                                      description if isinstance(description, str) else None)
        elif method == "ctx/log":
            level = params.get("level")
            self.ctx.log(level if level in LOG_LEVELS else "info", str(params.get("message", ""))[:10_000])
        elif method == "ctx/display":
            if params.get("display") in DISPLAY_KINDS and isinstance(params.get("payload"), dict):
                self.ctx.sink("display", {"display": params["display"], "payload": params["payload"]})
        elif method in ("ctx/reply.open", "ctx/reply.piece"):
            self._reply(method, params)
        elif method == "net/event":
            self._net(params)

    def _net(self, event: dict[str, Any]) -> None:
        """What the host's proxy answered itself: to the call's log, and a refusal by the
        grants also to the record ``grants explain`` shows."""
        self.ctx.log("warn", str(event.get("message", ""))[:10_000])
        if event.get("outcome") == "refused":
            self.services.record_net_refusal(self.tool.qualified_name, event,
                                             session_id=self.ctx.chat.session_id)

    def _reply(self, method: str, params: dict[str, Any]) -> None:
        """A streamed answer: the call's ``stream`` takes it, or the call fails."""
        stream = self.ctx.stream or NoStream(f"the tool {self.tool.qualified_name}",
                                             self.tool.function)
        if method == "ctx/reply.open":
            stream.open()
        else:
            stream.piece(params.get("piece"))

    def output(self, text: str) -> None:
        for line in text.splitlines():
            if line.strip():
                self.ctx.sink("log", {"level": "debug", "message": line[:10_000]})

    # --- requests ------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Answer a request ``ctx/<member>``: the member must be one the spec declares
        (``ctx_spec``) with a handler here, and its capability's gate must hold."""
        name = method.removeprefix("ctx/")
        found = ctx_spec.find(name) if method.startswith("ctx/") else None
        handler = HANDLERS.get(found[0].name) if found is not None else None
        if found is None or handler is None:
            raise ToolError("invalid_arguments", f"ctx has no member {name!r}")
        capability, member = found
        if capability.gate == "permission":
            assert capability.permission is not None
            await self.ctx.authorize(capability.permission.kind, member.access)
        elif capability.gate == "database" and not self.tool.database:
            raise ToolError("permission", f"{self.tool.extension} has no private database: "
                            "set \"database\": true in its loca.json")
        return await handler(self, member.name, params)


Handler = Callable[[CallHandler, str, dict[str, Any]], Awaitable[Any]]
"""``(call, member, params)``: one capability's answer to one request of a call, once
its gate holds; ``member`` is the member's Python name."""

HANDLERS: dict[str, Handler] = {}
"""The handler of each capability, by the capability's name in ``ctx_spec``."""


def handles(capability: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of ``capability``."""
    def register(handler: Handler) -> Handler:
        HANDLERS[capability] = handler
        return handler
    return register


@handles("askUser")
async def _ask_user(call: CallHandler, member: str, params: dict[str, Any]) -> Any:
    return await call.ctx.ask_user(check_questions(params.get("questions")))


@handles("schedulePrompt")
async def _schedule_prompt(call: CallHandler, member: str, params: dict[str, Any]) -> Any:
    draft = _require(params, "draft", dict)
    return await call.services.schedule_prompt(call.tool, draft, call.ctx)


@handles("memories")
async def _memories(call: CallHandler, member: str, params: dict[str, Any]) -> Any:
    return await call.services.memories(call.tool, member, params,
                                        session_id=call.ctx.chat.session_id)


@handles("db")
async def _db(call: CallHandler, member: str, params: dict[str, Any]) -> Any:
    databases = call.services.databases
    run = databases.query if member == "query" else databases.execute
    return run(call.tool.storage_name, _require(params, "sql"), params.get("params"))


@handles("llm")
async def _llm(call: CallHandler, member: str, params: dict[str, Any]) -> Any:
    request = params.get("request", params)
    return await call.services.complete(request if isinstance(request, dict) else {},
                                        session_id=call.ctx.chat.session_id)


@handles("tts")
async def _tts(call: CallHandler, member: str, params: dict[str, Any]) -> Any:
    return await call.services.speak(_require(params, "text"))


@handles("stt")
async def _stt(call: CallHandler, member: str, params: dict[str, Any]) -> Any:
    request = params.get("request", params)
    return await call.services.transcribe(request if isinstance(request, dict) else {})
