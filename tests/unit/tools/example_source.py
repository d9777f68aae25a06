"""The minimal example of a new kind of tool source (``workbench.tools.source``).

One class: a name, a precedence and the tools it offers; the rest of the contract
has defaults. It is added to a host by one line::

    host.sources.register(Greetings())

(before the extensions load, or followed by ``host.loading.reload()``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.config.settings import Settings
from workbench.tools.registry import Tool
from workbench.tools.source import SourceRow, ToolSource

GREET_PARAMETERS: dict[str, Any] = {
    "type": "object", "properties": {"name": {"type": "string", "minLength": 1}},
    "required": ["name"], "additionalProperties": False}


class Greetings(ToolSource):
    """The smallest useful source: one tool, run in this process by its handler (it
    also counts what the host did to it, for the tests)."""

    name = "greetings"
    precedence = "plugin"

    def __init__(self) -> None:
        self.loads = 0
        self.stopped = False
        self.timeout_ms: list[int] = []

    def load(self) -> None:
        self.loads += 1

    def tools(self) -> list[Tool]:
        return [Tool(name="greet", description="Say hello to someone by name.",
                     parameters=GREET_PARAMETERS, extension="greetings", source="plugin",
                     function="greet", folder=Path(__file__).parent, entry=None,
                     runtime="plugin", handler=self.greet)]

    async def greet(self, arguments: dict[str, Any], ctx: Any) -> dict[str, str]:
        return {"greeting": f"Hello, {arguments['name']}!"}

    def follow_config(self, settings: Settings) -> None:
        self.timeout_ms.append(settings.tools.timeout_ms)

    def status_rows(self) -> list[SourceRow]:
        return [SourceRow("greetings", "Greetings", "greeter", len(self.tools()))]

    async def stop(self) -> None:
        self.stopped = True
