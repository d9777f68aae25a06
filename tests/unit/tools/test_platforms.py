"""Which tools run here: a tool's ``platforms`` against the system the registry sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.tools.registry import Tool, ToolRegistry, session_platforms


def _tool(*platforms: str) -> Tool:
    return Tool(name="t", description="t", parameters={"type": "object"}, extension="e",
                source="extension", function="t", folder=Path("."), entry=None, runtime="python",
                platforms=platforms)


@pytest.mark.parametrize(("env", "expected"), [
    ({}, {"linux"}),
    ({"DISPLAY": ":0"}, {"linux", "linux_x11"}),
    ({"WAYLAND_DISPLAY": "wayland-0"}, {"linux", "linux_wayland"}),
])
def test_a_linux_session_is_linux_and_its_display_servers(monkeypatch, env, expected):
    monkeypatch.setattr("sys.platform", "linux")
    assert session_platforms(env) == expected


def test_a_tool_runs_where_one_of_its_platforms_is_the_session():
    x11 = ToolRegistry(platforms={"linux", "linux_x11"})
    assert x11.runs_here(_tool()) and x11.runs_here(_tool("linux"))
    assert x11.runs_here(_tool("linux_x11", "darwin"))
    assert not x11.runs_here(_tool("linux_wayland")) and not x11.runs_here(_tool("darwin"))
    assert not ToolRegistry(platforms={"darwin"}).runs_here(_tool("linux"))
