"""The add-ons' namespace in the registry: a tool named ``addon__…`` is registered only
as a first-party add-on's own tool under its own extension's name, whatever source
offers it (an MCP server, a plugin or an extension claiming it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.tools.registry import Tool, ToolRegistry


def tool(name: str, *, extension: str = "calendar", source: str = "extension", declared: str = "",
         first_party: bool = False) -> Tool:
    return Tool(name=name, description="d", parameters={"type": "object"}, extension=extension,
                source=source, function="f", folder=Path("/nonexistent"), entry=None, runtime="python",
                declared=declared, first_party=first_party)


@pytest.mark.parametrize("offered", [
    tool("addon__calendar__events-list"),                                 # an extension claiming it
    tool("ADDON__calendar__events-list", declared="events-list", first_party=True),
    tool("addon__calendar__events-list", source="mcp", extension="srv"),  # an MCP server
    tool("addon__calendar__events-list", source="plugin", extension="p"),
    tool("addon__contacts__contacts-search", declared="contacts-search", first_party=True),  # another id
    tool("addon__calendar__x", declared="events-list", first_party=True),  # not its own name
])
def test_a_name_in_the_namespace_is_left_out_unless_it_is_the_addons_own(offered):
    registry = ToolRegistry(platforms={"linux"})
    registry.add(offered)
    assert registry.all_tools() == []
    [error] = registry.load_errors
    assert "kept for the add-ons shipped with workbench" in error.message


def test_the_addons_own_tool_is_registered():
    registry = ToolRegistry(platforms={"linux"})
    registry.add(tool("addon__calendar__events-list", declared="events-list", first_party=True))
    assert [t.name for t in registry.all_tools()] == ["addon__calendar__events-list"]
    assert registry.resolve("calendar.addon__calendar__events-list").own_name == "events-list"
