"""Serving one call's ctx on the host: what the worker's ``ctx`` members reach.

Notifications (progress, logs, display bubbles, what the tool printed, and what the
host's proxy refused or could not carry for the worker) become events through the
call's ``ToolContext``; a streamed answer goes to its ``stream``,
which only a model provider's call has. Requests are checked before they are
served: capabilities are asked for at their first use, the private database only
exists for an extension that declared ``"database": true``, and every payload is
checked for shape so that a hostile worker cannot make the host misbehave.
"""

from __future__ import annotations

from typing import Any

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
        name = method.removeprefix("ctx/")
        if name == "askUser":
            return await self.ctx.ask_user(check_questions(params.get("questions")))
        if name == "schedulePrompt":
            draft = _require(params, "draft", dict)
            return await self.services.schedule_prompt(self.tool, draft, self.ctx)
        group, _, member = name.partition(".")
        if group == "memories":
            access = "write" if member in ("write", "edit") else "read"
            await self.ctx.authorize("memories", access)
            return await self.services.memories(self.tool, member, params,
                                                session_id=self.ctx.chat.session_id)
        if group == "db":
            if not self.tool.database:
                raise ToolError("permission", f"{self.tool.extension} has no private database: "
                                "set \"database\": true in its loca.json")
            sql = _require(params, "sql")
            if member == "query":
                return self.services.databases.query(self.tool.storage_name, sql, params.get("params"))
            if member == "execute":
                return self.services.databases.execute(self.tool.storage_name, sql, params.get("params"))
        if group == "llm" and member == "complete":
            await self.ctx.authorize("llm", "")
            request = params.get("request", params)
            return await self.services.complete(request if isinstance(request, dict) else {},
                                                session_id=self.ctx.chat.session_id)
        if group == "tts" and member == "speak":
            await self.ctx.authorize("tts", "")
            return await self.services.speak(_require(params, "text"))
        if group == "stt" and member == "transcribe":
            await self.ctx.authorize("stt", "")
            request = params.get("request", params)
            return await self.services.transcribe(request if isinstance(request, dict) else {})
        raise ToolError("invalid_arguments", f"ctx has no member {name!r}")
