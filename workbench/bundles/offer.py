"""Which chats are offered the bundle tools: those whose tools already include running
commands and writing the project. Light on purpose: the core's tool list imports it."""

from __future__ import annotations

from workbench.tools.registry import Tool

EXTENSION = "bundles"
MANAGE = "extension_manage"
CALL = "extension_call"
SHELL = "shell"


def writes_project(tool: Tool) -> bool:
    return any(entry.get("path") == "$project" for entry in tool.permissions.get("write", []))


def offered_beside(tools: list[Tool]) -> list[Tool]:
    """``tools`` without the bundle tools unless they include running commands (``shell``)
    and writing the project (a tool other than the bundles' that writes ``$project``)."""
    runs = any(t.name == SHELL for t in tools)
    writes = any(writes_project(t) and t.extension not in (EXTENSION, SHELL) for t in tools)
    if runs and writes:
        return tools
    return [t for t in tools if t.extension != EXTENSION]
