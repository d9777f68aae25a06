"""Opening a session with a server, and listing what it offers.

``connect`` opens the transport (stdio, sandboxed or not, or streamable HTTP) and an
initialized ``ClientSession`` on an exit stack; closing the stack stops the server.
``probe`` lists a server's tools, prompts and resources with a connection of its own,
for a caller that has no loop to keep a server on. ``mcp`` is imported inside.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from workbench.mcp.config import ServerConfig
from workbench.mcp.transport import StdioProcess, open_http


EXIT_WAIT_S = 1.0
"""How long a server that broke off its start has to exit, so its exit status is known."""


class ServerExited(RuntimeError):
    """The server exited before it answered; the message says how, with its stderr."""


class ProtocolError(RuntimeError):
    """The server wrote something that is not an MCP message before it had started;
    the message quotes it. (A stdio server must write nothing else on stdout.)"""


@dataclass
class Launcher:
    """What a server needs from its owner to start: how to build its transport."""

    open_stdio: Callable[[ServerConfig], Awaitable[tuple[StdioProcess, Any]]]
    """Returns the process (not yet started) and a proxy-starting coroutine or None."""
    startup_timeout_s: float


async def connect(stack: contextlib.AsyncExitStack, config: ServerConfig, launcher: Launcher, *,
                  elicit: Any = None, on_message: Any = None) -> tuple[Any, Any, StdioProcess | None]:
    """Open the transport and an initialized ``ClientSession`` on ``stack``.

    Returns:
        The session, the server's ``InitializeResult``, and the process for a stdio server.
    """
    import anyio
    from mcp import ClientSession
    from mcp.types import Implementation

    import workbench

    process = None
    if config.transport == "stdio":
        process, start_proxy = await launcher.open_stdio(config)
        read, write = await stack.enter_async_context(process.open())
        if start_proxy is not None:
            stack.push_async_callback(await start_proxy())
    else:
        read, write = await stack.enter_async_context(open_http(config.url or "", config.headers))
    unreadable: list[Exception] = []
    broken = anyio.Event()
    started = False

    async def watch(message: Any) -> None:
        if isinstance(message, Exception) and not started:
            unreadable.append(message)
            broken.set()
            return
        if on_message is not None:
            await on_message(message)

    session = ClientSession(read, write, elicitation_callback=elicit, message_handler=watch,
                            client_info=Implementation(name="workbench", version=workbench.__version__))
    await stack.enter_async_context(session)
    init = None
    try:
        with anyio.fail_after(launcher.startup_timeout_s):
            async with anyio.create_task_group() as group:
                async def stop_at_garbage() -> None:
                    await broken.wait()
                    group.cancel_scope.cancel()

                group.start_soon(stop_at_garbage)
                init = await session.initialize()
                group.cancel_scope.cancel()
    except Exception as exc:
        if process is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(EXIT_WAIT_S):
                    await process.exited.wait()
            if process.returncode is not None:
                raise ServerExited(process.exit_reason()) from exc
        raise
    if init is None:
        if process is not None:
            process.kill_now()  # it broke the protocol: nothing to stop gently
        raise ProtocolError(f"a protocol error: instead of answering initialize it wrote "
                            f"{unreadable[0]}")
    started = True
    return session, init, process


async def list_all(session: Any, what: str) -> list[Any]:
    """Every page of ``tools``, ``prompts`` or ``resources``."""
    from mcp.types import PaginatedRequestParams

    method = {"tools": "list_tools", "prompts": "list_prompts", "resources": "list_resources"}[what]
    found, cursor = [], None
    while True:
        page = await getattr(session, method)(
            params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        found += getattr(page, what)
        cursor = page.next_cursor
        if not cursor:
            return found


async def list_everything(session: Any, init: Any, timeout_s: float) -> dict[str, Any]:
    """Tools, and prompts and resources when the server offers them; its ``server_info``."""
    import anyio

    with anyio.fail_after(timeout_s):
        return {"server_info": init.server_info.model_dump(mode="json", exclude_none=True),
                "tools": await list_all(session, "tools"),
                "prompts": await list_all(session, "prompts") if init.capabilities.prompts else [],
                "resources": await list_all(session, "resources") if init.capabilities.resources else []}


LIST_SETTLE_S = 0.3
"""How long a probe waits for ``tools/list_changed`` after its first listing: servers
add tools as soon as they know what the client supports (server-everything adds its
elicitation tools so), and the probe should see what a session will."""


async def probe(config: ServerConfig, launcher: Launcher,
                listed: Callable[[dict[str, Any]], None]) -> None:
    """Start a server just to list what it offers; ``listed`` gets the listing before
    the server is stopped again (``McpServer`` objects start at a call instead)."""
    import anyio
    from mcp.types import ElicitResult

    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") == "notifications/tools/list_changed":
            changed.set()

    async def decline(context: Any, params: Any) -> Any:
        return ElicitResult(action="decline")

    async with contextlib.AsyncExitStack() as stack:
        session, init, _ = await connect(stack, config, launcher, elicit=decline,
                                         on_message=on_message)
        listing = await list_everything(session, init, launcher.startup_timeout_s)
        tools = init.capabilities.tools
        if tools is not None and tools.list_changed:
            with anyio.move_on_after(LIST_SETTLE_S):
                await changed.wait()
            if changed.is_set():
                await anyio.sleep(0.05)  # let a burst of them end
                listing["tools"] = await list_all(session, "tools")
        listed(listing)
