"""A server's tools as registry tools: ``mcp__server__tool``, source ``mcp``, runtime ``mcp``.

Each keeps the server's description and input schema (an invalid schema is replaced
by an open object schema: the server still checks its own arguments), the entry's
time limit, and ``parallel_safe`` when the server marks the tool read-only. Tools the
entry switched off (``disabled_tools``) are left out, and so are tools that can only run
as an MCP task (``execution.taskSupport: required``), which this client does not drive.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.mcp.config import ServerConfig
from workbench.mcp.naming import MCP_RUNTIME, extension_name, tool_name
from workbench.tools.registry import HostHandler, Tool


def registry_tools(config: ServerConfig, specs: list[dict[str, Any]], folder: Path,
                   handler: Callable[[str], HostHandler]) -> list[Tool]:
    """The registry tools of ``config``'s server from its listing (``tools/list`` JSON).

    Args:
        config: The server's entry.
        specs: Its tools, as listed.
        folder: The folder shown as where they come from.
        handler: Builds the handler that calls one tool (by its MCP name).
    """
    tools = []
    for spec in specs:
        if spec["name"] in config.disabled_tools or usable(spec) is not None:
            continue
        annotations = spec.get("annotations") or {}
        tools.append(Tool(
            name=tool_name(config.name, spec["name"]),
            description=spec.get("description") or spec.get("title") or "",
            parameters=checked_schema(spec.get("inputSchema")), extension=extension_name(config.name),
            source="mcp", function=spec["name"], folder=folder, entry=None, runtime=MCP_RUNTIME,
            timeout_ms=config.timeout_ms, parallel_safe=annotations.get("readOnlyHint") is True,
            handler=handler(spec["name"])))
    return tools


def usable(spec: dict[str, Any]) -> str | None:
    """Why a listed tool cannot be offered, or None when it can."""
    if (spec.get("execution") or {}).get("taskSupport") == "required":
        return "it runs only as an MCP task, which the workbench does not drive"
    return None


def checked_schema(schema: Any) -> dict[str, Any]:
    """``schema`` when it is a valid JSON Schema object, else an open object schema."""
    import jsonschema

    if not isinstance(schema, dict):
        return {"type": "object"}
    try:
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator) \
            .check_schema(schema)
    except jsonschema.SchemaError:
        return {"type": "object"}
    return schema
