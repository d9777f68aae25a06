"""Run a Python tool function inside the host's own process.

Only for a tool the person allowed to run without a sandbox on a machine that cannot
sandbox (``sandbox.unsandboxed_tools`` in their own config). The tool gets the very
``ctx`` a sandboxed worker gives it (``workbench.sandbox.worker.Context``), over a
``LocalChannel`` instead of the worker's socket: notifications and requests reach the
same per-call handler on the host (progress, logs, bubbles, forms, memories, the
private database, the model, speech, schedule proposals), with the same checks.

It imports the entry module by file path (cached per path and modification time) and
calls ``fn(args, ctx)``: a coroutine function is awaited, a plain function runs in a
worker thread so that a slow tool never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import importlib.util
import inspect
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from workbench.errors import ToolError
from workbench.sandbox.worker import Context, PermissionDenied, RemoteError
from workbench.sandbox.worker_host import CtxHandler
from workbench.tools.context import NoStream, ToolContext
from workbench.tools.registry import Tool

ASK_POLL_S = 0.25
"""How often a request waiting for the host checks whether the call was cancelled."""

_modules: dict[tuple[Path, int], ModuleType] = {}


def _import_entry(entry: Path) -> ModuleType:
    """Import ``entry`` under a private module name; re-import when the file changes."""
    key = (entry, entry.stat().st_mtime_ns)
    if key in _modules:
        return _modules[key]
    name = "workbench_tool_" + hashlib.sha256(str(entry).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, entry)
    if spec is None or spec.loader is None:
        raise ToolError("tool", f"cannot import {entry}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ToolError("tool", f"importing {entry.name} failed: {type(exc).__name__}: {exc}") from exc
    _modules[key] = module
    return module


class LocalChannel:
    """The worker's channel to the host, inside the host: what the tool's ``ctx`` sends
    goes to ``handler`` on ``loop``.

    Args:
        handler: The call's handler on the host (the one a worker's socket reaches).
        loop: The host's event loop, where the handler runs.
        aborted: Set when the call is cancelled (``ctx.signal``).
    """

    def __init__(self, handler: CtxHandler, loop: asyncio.AbstractEventLoop,
                 aborted: threading.Event) -> None:
        self.handler = handler
        self.loop = loop
        self.aborted = aborted

    def notify(self, method: str, params: Any) -> None:
        """A one-way message (progress, a log line, a bubble)."""
        if _on(self.loop):
            self.handler.notify(method, params)
        else:
            self.loop.call_soon_threadsafe(self.handler.notify, method, params)

    def ask(self, method: str, params: Any) -> Any:
        """A request, answered on the host's loop; blocks the calling thread (never the
        loop's: the worker's ``ctx`` asks from a thread inside a running loop).

        Raises:
            RemoteError: The host refused (``PermissionDenied`` for a permission), as
                in a worker.
        """
        future = asyncio.run_coroutine_threadsafe(self.handler.request(method, params), self.loop)
        while True:
            try:
                return future.result(ASK_POLL_S)
            except concurrent.futures.TimeoutError:
                if self.aborted.is_set() or self.loop.is_closed():
                    future.cancel()  # the request stops on the loop too (a form closes)
                    raise RemoteError("cancelled", "the call was cancelled") from None
            except ToolError as exc:
                cls = PermissionDenied if exc.kind == "permission" else RemoteError
                raise cls(exc.kind, exc.message) from None


def _on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


async def run_inprocess(tool: Tool, arguments: dict[str, Any], ctx: ToolContext,
                        handler: CtxHandler, **_: Any) -> Any:
    """Call ``tool`` with ``arguments`` and a worker's ``ctx`` reaching ``handler``;
    return what it returns.

    Raises:
        ToolError: ``unavailable`` for a runtime this runner cannot host; the host's
            own kind when a ``ctx`` request was refused; ``tool`` when the function is
            missing, streams (only a model provider may), or raises.
    """
    if tool.runtime != "python" or tool.entry is None:
        raise ToolError("unavailable",
                        f"{tool.qualified_name} needs the {tool.runtime or 'unknown'} runtime, "
                        "which only the sandboxed worker provides")
    module = _import_entry(tool.entry)
    function = getattr(module, tool.function, None)
    if not callable(function):
        raise ToolError("tool", f"{tool.entry.name} has no function {tool.function!r}")
    channel = LocalChannel(handler, asyncio.get_running_loop(), ctx.signal.event)
    toolkit = Context(channel, ctx.chat.to_json())
    try:
        if inspect.iscoroutinefunction(function):
            result = await function(arguments, toolkit)
        else:
            result = await asyncio.to_thread(function, arguments, toolkit)
            if inspect.isawaitable(result):
                result = await result
    except ToolError:
        raise
    except asyncio.CancelledError:
        raise
    except RemoteError as exc:
        raise ToolError(exc.kind, str(exc)) from None
    except Exception as exc:
        raise ToolError("tool", f"{type(exc).__name__}: {exc}") from exc
    if inspect.isgenerator(result) or inspect.isasyncgen(result):
        raise NoStream(f"the tool {tool.qualified_name}", tool.function).refusal()
    return result
