"""Run a Python tool function inside the host's own process.

This runner serves the built-in tools until every call moves behind the sandbox. It
imports the entry module by file path (cached per path and modification time) and
calls ``fn(args, ctx)``: a coroutine function is awaited, a plain function runs in a
worker thread so that a slow tool never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from workbench.errors import ToolError
from workbench.tools.context import ToolContext
from workbench.tools.registry import Tool

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


async def run_inprocess(tool: Tool, arguments: dict[str, Any], ctx: ToolContext, **_: Any) -> Any:
    """Call ``tool`` with ``arguments`` and ``ctx`` and return what it returns.

    Raises:
        ToolError: ``unavailable`` for a runtime this runner cannot host; ``tool``
            when the function is missing or raises (the message carries its own).
    """
    if tool.runtime != "python" or tool.entry is None:
        raise ToolError("unavailable",
                        f"{tool.qualified_name} needs the {tool.runtime or 'unknown'} runtime, "
                        "which only the sandboxed worker provides")
    module = _import_entry(tool.entry)
    function = getattr(module, tool.function, None)
    if not callable(function):
        raise ToolError("tool", f"{tool.entry.name} has no function {tool.function!r}")
    try:
        if inspect.iscoroutinefunction(function):
            return await function(arguments, ctx)
        result = await asyncio.to_thread(function, arguments, ctx)
        if inspect.isawaitable(result):
            result = await result
        return result
    except ToolError:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise ToolError("tool", f"{type(exc).__name__}: {exc}") from exc
