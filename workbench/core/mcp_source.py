"""MCP servers as a ``ToolSource``: their tools, their rows, their stop.

The servers themselves live in the host's MCP area (``workbench.core.mcp_servers``, ``host.mcp``): this
source is how the registry, reload, shutdown, the status report and the Tools menu
reach them like any other source. Each tool runs by its handler, which calls the
server (the default ``ToolSource.call``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from workbench.mcp.naming import extension_name
from workbench.tools.registry import Tool
from workbench.tools.source import SourceRow, ToolSource

if TYPE_CHECKING:
    from workbench.config.settings import Settings

NOTES = {"disabled": "switched off everywhere (Settings: mcp.disabled)",
         "untrusted": "in a project config that is not trusted"}
"""Why a chat cannot switch a server in a state, as its row says."""


class McpSource(ToolSource):
    """The tools of the MCP servers that apply here.

    Args:
        load: Reads the server entries again and starts those whose tools were never
            listed (the host's ``add_mcp_tools``).
        tools: The tools of every configured server, from its listing or its cache.
        servers: One row per server entry (``host.mcp.servers``); empty when there is
            none, without starting anything.
        notices: What the last load found wrong (a server that could not start...).
        stop: Stops every server and what it started.
        follow_config: Gives the servers started from now on the config's limits.
    """

    name = "mcp"
    precedence = "mcp"

    def __init__(self, *, load: Callable[[], None], tools: Callable[[], list[Tool]],
                 servers: Callable[[], list[dict[str, Any]]], notices: Callable[[], list[str]],
                 stop: Callable[[], Awaitable[None]], follow_config: Callable[[], None]) -> None:
        self._load = load
        self._tools = tools
        self._servers = servers
        self._notices = notices
        self._stop = stop
        self._follow_config = follow_config

    def load(self) -> None:
        self._load()

    def tools(self) -> list[Tool]:
        return self._tools()

    def notices(self) -> list[str]:
        return self._notices()

    async def stop(self) -> None:
        await self._stop()

    def follow_config(self, settings: Settings) -> None:
        self._follow_config()

    def status_rows(self) -> list[SourceRow]:
        """One row per server (``mcp:NAME``, kind ``MCP server``): its tools as registered,
        else as last listed; a disabled or untrusted one with why it cannot be switched."""
        counts: dict[str, int] = {}
        for tool in self._tools():
            counts[tool.extension] = counts.get(tool.extension, 0) + 1
        rows = []
        for server in self._servers():
            name = extension_name(server["name"])
            rows.append(SourceRow(name, server["name"], "MCP server",
                                  counts.get(name, len(server["tools"])), server["state"],
                                  NOTES.get(server["state"], "")))
        return rows
