"""``workbench mcp serve``: the workbench as an MCP server, over stdio, for another agent.

It offers the installed extensions' tools (the winner of each name, as the model sees
them; never MCP servers' tools, which would loop, nor the host's own). Each call goes
through the host's gateway exactly as inside the workbench — the person's standing
grants, the sandbox, hooks, audit (caller ``agent``) — and never asks anyone: a tool
that needs a permission nobody granted answers with an MCP error naming it
(``isError``), and a form a tool raises is refused. Progress reported by a tool is
forwarded as ``notifications/progress`` when the client asked for it; cancelling a
request cancels the call.

This module does not know the host: the CLI hands it a ``ServeBackend``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import workbench
from workbench.events import ToolCallProgress

log = logging.getLogger(__name__)

Progress = Callable[[float, "str | None"], None]


@dataclass
class ServeBackend:
    """What the server needs from the host.

    Attributes:
        tools: The tools to offer: ``(name, description, input schema)`` triples.
        call: Runs one call: ``(name, arguments, progress)`` to an outcome with ``ok``,
            ``result`` and ``error`` (a ``ToolOutcome``).
    """

    tools: Callable[[], list[tuple[str, str, dict[str, Any]]]]
    call: Callable[[str, dict[str, Any], Progress], Awaitable[Any]]


def host_backend(*, tools: Callable[[], list[tuple[str, str, dict[str, Any]]]],
                 call: Callable[[str, dict[str, Any], str], Awaitable[Any]],
                 subscribe: Callable[[Callable[[Any], None]], Callable[[], None]]) -> ServeBackend:
    """A backend over a host: ``call(name, arguments, call_id)`` runs one call, and the
    ``ToolCallProgress`` events ``subscribe`` delivers for that call id become its progress."""

    async def run(name: str, arguments: dict[str, Any], progress: Progress) -> Any:
        call_id = f"call_{uuid.uuid4().hex[:12]}"

        def forward(event: Any) -> None:
            if isinstance(event, ToolCallProgress) and event.call_id == call_id:
                progress(event.progress, event.label)

        unsubscribe = subscribe(forward)
        try:
            return await call(name, arguments, call_id)
        finally:
            unsubscribe()

    return ServeBackend(tools=tools, call=run)


def call_result(outcome: Any) -> Any:
    """A ``ToolOutcome`` as an MCP ``CallToolResult``: the result as JSON text and, for
    an object, as ``structuredContent``; an error as ``isError`` with its kind and message."""
    from mcp.types import CallToolResult, TextContent

    if outcome.ok:
        result = outcome.result
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        if outcome.context:
            text += f"\n\n{outcome.to_json().get('hook_context', '')}"
        return CallToolResult(content=[TextContent(text=text)],
                              structured_content=result if isinstance(result, dict) else None)
    error = outcome.error or {"kind": "tool", "message": "the call failed"}
    return CallToolResult(content=[TextContent(text=f"{error.get('kind')}: {error.get('message')}")],
                          structured_content={"error": error}, is_error=True)


def build_server(backend: ServeBackend) -> Any:
    """The SDK's low-level ``Server`` with ``tools/list`` and ``tools/call`` on ``backend``."""
    from mcp.server.lowlevel import Server
    from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

    async def list_tools(ctx: Any, params: Any) -> Any:
        return ListToolsResult(tools=[Tool(name=name, description=description, input_schema=schema)
                                      for name, description, schema in backend.tools()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        offered = {name for name, _, _ in backend.tools()}
        if params.name not in offered:
            return CallToolResult(content=[TextContent(text=f"not_found: no tool named {params.name!r}")],
                                  structured_content={"error": {"kind": "not_found",
                                                                "message": f"no tool named {params.name!r}"}},
                                  is_error=True)
        sent: set[asyncio.Task] = set()

        def progress(value: float, label: str | None) -> None:
            task = asyncio.ensure_future(ctx.session.report_progress(value, 1.0, label))
            sent.add(task)
            task.add_done_callback(sent.discard)

        outcome = await backend.call(params.name, dict(params.arguments or {}), progress)
        if sent:
            await asyncio.gather(*sent, return_exceptions=True)
        return call_result(outcome)

    return Server("workbench", version=workbench.__version__,
                  instructions="The workbench's extension tools, run with the person's grants.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(backend: ServeBackend) -> None:
    """Serve ``backend`` on this process's stdin and stdout until the client leaves."""
    from mcp.server.stdio import stdio_server

    server = build_server(backend)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
