"""Names of MCP servers and of their tools as the registry and the model see them.

A server ``time`` is registered as the extension ``mcp:time`` (so a chat can switch it
off like an extension), and its tool ``get_current_time`` as
``mcp__time__get_current_time``: a name the model cannot confuse with an extension's
tool, within the characters and length every model API accepts. This module is a
leaf: it imports nothing of ours.
"""

from __future__ import annotations

import hashlib
import re

MCP_RUNTIME = "mcp"
"""The registry ``runtime`` of a tool an MCP server provides; its ``handler`` calls the server."""

EXTENSION_PREFIX = "mcp:"
"""Prefix of the extension name a server's tools are registered under."""

TOOL_PREFIX = "mcp__"

MAX_TOOL_NAME = 64
"""The longest function name the model APIs accept."""

_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a server, or None when it can."""
    if not _SERVER_NAME.match(name):
        return ("a server name is 1 to 32 letters, digits, '-' or '_', starting with a "
                "letter or digit")
    if "__" in name:
        return "a server name cannot hold '__' (it separates the parts of a tool's name)"
    return None


def extension_name(server: str) -> str:
    """The extension name of ``server``'s tools: ``mcp:NAME``."""
    return f"{EXTENSION_PREFIX}{server}"


def server_of(extension: str) -> str | None:
    """The server behind an extension name, or None when it is not an MCP server's."""
    return extension[len(EXTENSION_PREFIX):] if extension.startswith(EXTENSION_PREFIX) else None


def tool_name(server: str, tool: str) -> str:
    """``mcp__server__tool``; characters the model APIs refuse become ``_``, and a name
    too long is cut and given a short digest of the original so it stays unique."""
    name = f"{TOOL_PREFIX}{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_TOOL_NAME and _UNSAFE.sub("_", tool) == tool:
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME - 9]}_{digest}"


def split_tool_name(name: str) -> tuple[str, str] | None:
    """``(server, tool part)`` of an ``mcp__server__tool`` name, or None."""
    if not name.startswith(TOOL_PREFIX):
        return None
    server, sep, rest = name[len(TOOL_PREFIX):].partition("__")
    return (server, rest) if sep and server and rest else None


def servers_named_by(tool: str) -> set[str]:
    """The servers a tool name given by a person may mean: ``mcp__S__T`` and
    ``mcp:S.T`` name ``S``; any other name, none."""
    split = split_tool_name(tool)
    if split is not None:
        return {split[0]}
    extension, dot, _ = tool.partition(".")
    server = server_of(extension) if dot else None
    return {server} if server else set()
