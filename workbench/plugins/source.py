"""A plugin's tools as registry tools, offered by the tool source ``plugins``.

Each tool of an installed plugin the project enables is ``plugin_<tool>`` (the name the
seed gives a plugin's tools in an agent run), from the extension ``plugin:<id>`` under
the ``plugin`` precedence, so it cannot shadow a built-in, an extension's or an MCP
server's tool. Its parameters are the manifest's ``input_schema`` (the gateway checks
the input before the plugin sees it); its handler calls the plugin through the
service that owns the instances.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from workbench.plugins.installed import Installed
from workbench.tools.registry import Tool
from workbench.tools.source import SourceRow, ToolSource

TOOL_PREFIX = "plugin_"


def extension_name(plugin: str) -> str:
    return f"plugin:{plugin}"


class PluginSource(ToolSource):
    """The tools of the plugins that apply here.

    Args:
        plugins: The installed plugins this folder enables (read at each load).
        call: Calls ``(plugin, tool, arguments)`` on the plugin's instance.
        rows: One status row per installed plugin.
        stop: Stops every instance.
        close: Kills what still runs, from outside any loop.
        notices: What the last load found wrong.
    """

    name = "plugins"
    precedence = "plugin"

    def __init__(self, *, plugins: Callable[[], list[Installed]],
                 call: Callable[[str, str, Any], Awaitable[Any]],
                 rows: Callable[[], list[SourceRow]], stop: Callable[[], Awaitable[None]],
                 notices: Callable[[], list[str]], follow: Callable[[], None],
                 close: Callable[[], None] = lambda: None) -> None:
        self._plugins = plugins
        self._call = call
        self._rows = rows
        self._stop = stop
        self._notices = notices
        self._follow = follow
        self._close = close
        self._tools: list[Tool] = []

    def load(self) -> None:
        tools = []
        for installed in self._plugins():
            for spec in installed.manifest.tools:
                tools.append(self._tool(installed, spec.name, spec.description, spec.input_schema))
        self._tools = tools

    def _tool(self, installed: Installed, name: str, description: str, schema: dict[str, Any]) -> Tool:
        plugin = installed.manifest.id

        async def handler(arguments: Any, ctx: Any) -> Any:
            return await self._call(plugin, name, arguments)

        return Tool(name=TOOL_PREFIX + name, description=description, parameters=schema,
                    extension=extension_name(plugin), source="plugin", function=name,
                    folder=installed.code, entry=None, runtime="plugin", handler=handler,
                    timeout_ms=None)

    def tools(self) -> list[Tool]:
        return list(self._tools)

    def notices(self) -> list[str]:
        return self._notices()

    def status_rows(self) -> list[SourceRow]:
        return self._rows()

    async def stop(self) -> None:
        await self._stop()

    def close(self) -> None:
        self._close()

    def follow_config(self, settings: Any) -> None:
        self._follow()
