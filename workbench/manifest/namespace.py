"""The tool namespace kept for the first-party add-ons: ``addon__<id>__<tool>``.

A first-party add-on (``workbench.ext.addons``) declares its tools by their own names
(``events-list``); the host offers them as ``addon__calendar__events-list``, a name the
model cannot confuse with another tool's. No manifest may declare a tool in that
namespace (``manifest/checks.py``), and the tool registry refuses any tool there that is
not a first-party add-on's own (``tools/registry.py``). MCP tools (``mcp__…``) and
plugin tools (``plugin__…``) carry prefixes of their own.

This module imports nothing.
"""

from __future__ import annotations

import re

RESERVED_PREFIX = "addon__"
"""The start of every first-party add-on tool's name, and of no other tool's."""

ID_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
"""What an add-on id looks like: it is part of its tools' names."""

MAX_TOOL_NAME = 64
"""The longest tool name a model's function list takes."""


def tool_name(addon_id: str, tool: str) -> str:
    """The name a first-party add-on's tool is offered under: ``addon__<id>__<tool>``."""
    return f"{RESERVED_PREFIX}{addon_id}__{tool}"


def is_reserved(name: str) -> bool:
    """Whether a tool name is in the add-ons' namespace (in any case, so that no name
    even looks like one to a model)."""
    return name.lower().startswith(RESERVED_PREFIX)
