"""``workbench mcp serve``, driven by the MCP SDK's own client: the installed extensions'
tools over stdio, each call through the same gateway, grants, sandbox and audit as in
the workbench, and never a question: a missing permission is an MCP error naming it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from workbench.config.home import Home
from workbench.ext.manager import ExtensionManager
from workbench.mcp.config import ServerConfig, write_server
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
TIME = ROOT / ".mcp-servers/venv/bin/mcp-server-time"

MANIFEST = {
    "name": "served", "displayName": "Served", "description": "Tools offered over MCP.",
    "entry": "main.py",
    "tools": [
        {"name": "add_one", "description": "Add one to n.", "function": "add_one",
         "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
        {"name": "count_slowly", "description": "Count to three, reporting progress.",
         "function": "count_slowly", "parameters": {"type": "object", "properties": {}}},
        {"name": "read_notes", "description": "Read the notes file.", "function": "read_notes",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
         "permissions": {"read": [{"path": "$home/notes.txt", "reason": "to read your notes"}]}},
        {"name": "ask_colour", "description": "Ask for a colour.", "function": "ask_colour",
         "parameters": {"type": "object", "properties": {}}},
    ],
}
CODE = '''
import time


def add_one(args, ctx):
    return {"n": args["n"] + 1}


def count_slowly(args, ctx):
    for step in range(1, 4):
        ctx.set_progress(step / 3, f"step {step}")
        time.sleep(0.05)
    return {"counted": 3}


def read_notes(args, ctx):
    with open(args["path"]) as handle:
        return {"text": handle.read()}


def ask_colour(args, ctx):
    return {"colour": ctx.ask_user([{"question": "Colour?", "options": [{"label": "Red", "value": "red"}]}])}
'''


@pytest.fixture
def installed(tmp_path: Path, home: Home) -> Home:
    folder = tmp_path / "src" / "served"
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps(MANIFEST))
    (folder / "main.py").write_text(CODE)
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").install(
            str(folder), approve=lambda plan: True)
    # An MCP server's tools are not offered again (that would loop).
    write_server(home.config_file, ServerConfig(name="time", command=str(TIME)))
    (tmp_path / "notes.txt").write_text("buy ferns")
    return home


def serve_params(home: Home):
    from mcp import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=["-m", "workbench", "mcp", "serve"],
                                 env={**os.environ, "WORKBENCH_HOME": str(home.root)})


async def test_another_agent_reaches_the_extension_tools_through_the_gateway(installed: Home,
                                                                            tmp_path: Path) -> None:
    from mcp import ClientSession, stdio_client

    progress: list = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((round(value, 2), total, message))

    async with stdio_client(serve_params(installed)) as (read, write), \
            ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "workbench"
        listed = await session.list_tools()
        names = {t.name for t in listed.tools}
        assert {"add_one", "count_slowly", "read_notes", "ask_colour"} <= names
        assert not any(n.startswith("mcp__") for n in names) and "extensions_status" not in names
        schema = next(t for t in listed.tools if t.name == "add_one").input_schema
        assert schema["required"] == ["n"]

        added = await session.call_tool("add_one", {"n": 41})
        assert not added.is_error and added.structured_content == {"n": 42}
        assert json.loads(added.content[0].text) == {"n": 42}

        counted = await session.call_tool("count_slowly", {}, progress_callback=on_progress)
        assert counted.structured_content == {"counted": 3}
        assert progress == [(0.33, 1.0, "step 1"), (0.67, 1.0, "step 2"), (1.0, 1.0, "step 3")]

        notes = {"path": str(tmp_path / "notes.txt")}
        refused = await session.call_tool("read_notes", notes)
        assert refused.is_error
        error = refused.structured_content["error"]
        assert error["kind"] == "permission"
        assert f"read {tmp_path / 'notes.txt'}" in refused.content[0].text
        assert "to read your notes" in refused.content[0].text
        assert error["missing"][0]["kind"] == "read"

        form = await session.call_tool("ask_colour", {})
        assert form.is_error and form.structured_content["error"]["kind"] == "cancelled"

        wrong = await session.call_tool("add_one", {"n": "x"})
        assert wrong.is_error and wrong.structured_content["error"]["kind"] == "invalid_arguments"
        hidden = await session.call_tool("mcp__time__get_current_time", {"timezone": "UTC"})
        assert hidden.is_error and hidden.structured_content["error"]["kind"] == "not_found"

    with Store.open(installed.db_path) as store:
        store.add_grant("served.read_notes", "read", str(tmp_path / "notes.txt"), "always")
        calls = [r for r in store.list_audit(None) if r["action"] == "tool.call"]
        refusals = [r for r in store.list_audit(None) if r["action"] == "tool.refused.permission"]
    assert calls and all(r["actor"] == "agent" for r in calls)
    assert refusals and refusals[0]["subject"] == "served.read_notes"

    # With the person's standing grant the same call runs, in the sandbox, as in the workbench.
    async with stdio_client(serve_params(installed)) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        granted = await session.call_tool("read_notes", {"path": str(tmp_path / "notes.txt")})
        assert not granted.is_error and granted.structured_content == {"text": "buy ferns"}
