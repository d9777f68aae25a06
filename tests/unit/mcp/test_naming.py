"""Names of MCP servers and tools as the registry and the model see them."""

from __future__ import annotations

import re

from workbench.mcp.naming import (extension_name, server_name_problem, server_of, split_tool_name,
                                  tool_name)

MODEL_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_a_tool_is_named_mcp__server__tool() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert split_tool_name("mcp__time__get_current_time") == ("time", "get_current_time")
    assert split_tool_name("read_file") is None and split_tool_name("mcp__time") is None


def test_names_the_model_apis_refuse_are_made_safe_and_stay_distinct() -> None:
    dotted, underscored = tool_name("fs", "files.read"), tool_name("fs", "files_read")
    assert MODEL_SAFE.match(dotted) and dotted != underscored
    long_one = tool_name("server", "x" * 80)
    long_two = tool_name("server", "x" * 79 + "y")
    assert MODEL_SAFE.match(long_one) and MODEL_SAFE.match(long_two) and long_one != long_two
    assert long_one.startswith("mcp__server__xxx")


def test_server_names_and_their_extension_names() -> None:
    assert server_name_problem("time") is None and server_name_problem("my-server_2") is None
    assert server_name_problem("a__b") and server_name_problem("") and server_name_problem("-x")
    assert server_name_problem("x" * 33) and server_name_problem("has space")
    assert extension_name("time") == "mcp:time" and server_of("mcp:time") == "time"
    assert server_of("builtin") is None
