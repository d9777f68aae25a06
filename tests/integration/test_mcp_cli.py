"""``workbench mcp add|list|show|rm|enable|disable`` as a person uses them, against the real
servers: secrets kept in the config and masked wherever they are shown, tools listed at
once, and the agent's tools callable with ``workbench call``."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from commands import workbench

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
TIME = ROOT / ".mcp-servers/venv/bin/mcp-server-time"
SECRET = "sk-live-0123456789"


@pytest.fixture(autouse=True)
def servers_installed() -> None:
    missing = [str(p) for p in (EVERYTHING, TIME) if not p.exists()]
    assert not missing, f"the MCP test servers are missing ({missing}); `make test` installs them"


def test_adding_listing_and_removing_servers_with_secrets_masked(tmp_path: Path) -> None:
    added = workbench("mcp", "add", "everything", "--env", f"API_KEY={SECRET}", "--",
                      "node", str(EVERYTHING), "stdio")
    assert added.returncode == 0, added.stderr
    assert "added MCP server everything" in added.stdout
    assert "mcp__everything__echo" in added.stdout and SECRET not in added.stdout
    config = Path(os.environ["WORKBENCH_HOME"]) / "config.toml"
    assert f'API_KEY = "{SECRET}"' in config.read_text()
    assert stat.S_IMODE(config.stat().st_mode) == 0o600

    timed = workbench("mcp", "add", "time", "--timeout-ms", "5000", "--", str(TIME),
                      "--local-timezone", "UTC")
    assert timed.returncode == 0, timed.stderr
    assert "2 tools: mcp__time__get_current_time, mcp__time__convert_time" in timed.stdout

    listed = workbench("mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert set(rows) == {"everything", "time"} and SECRET not in listed.stdout
    assert rows["everything"]["config"]["env"] == {"API_KEY": "••••"}
    assert rows["time"]["config"]["timeout_ms"] == 5000 and rows["time"]["state"] == "stopped"
    assert {t["name"] for t in rows["time"]["tools"]} == {"mcp__time__get_current_time",
                                                         "mcp__time__convert_time"}
    plain = workbench("mcp", "show", "everything")
    assert "API_KEY=••••" in plain.stdout and SECRET not in plain.stdout
    assert "mcp__everything__echo" in plain.stdout and "simple-prompt" in plain.stdout

    called = workbench("call", "mcp__everything__get-env", "--json")
    assert called.returncode == 0, called.stderr
    assert SECRET in json.loads(called.stdout)["result"]["content"][0]["text"]  # the server got it

    assert workbench("mcp", "disable", "time", "--tool", "convert_time").returncode == 0
    assert workbench("mcp", "disable", "everything").returncode == 0
    rows = {row["name"]: row for row in json.loads(workbench("mcp", "list", "--json").stdout)}
    assert rows["everything"]["state"] == "disabled"
    assert [t["enabled"] for t in rows["time"]["tools"] if t["mcp_name"] == "convert_time"] == [False]
    refused = workbench("call", "mcp__everything__echo", "--args", '{"message": "x"}')
    assert refused.returncode != 0 and "no tool named" in refused.stderr
    assert workbench("mcp", "enable", "everything").returncode == 0
    echoed = workbench("call", "mcp__everything__echo", "--args", '{"message": "x"}')
    assert echoed.returncode == 0 and "Echo: x" in echoed.stdout

    assert workbench("mcp", "rm", "everything").returncode == 0
    assert SECRET not in config.read_text()
    missing = workbench("mcp", "rm", "everything")
    assert missing.returncode == 1 and "no MCP server named 'everything'" in missing.stderr


def test_a_server_that_cannot_start_is_reported_with_its_reason() -> None:
    broken = workbench("mcp", "add", "broken", "--", str(TIME), "--no-such-flag")
    assert broken.returncode == 1
    assert "could not start: it exited with status 2" in broken.stderr
    assert "unrecognized arguments: --no-such-flag" in broken.stderr
    shown = json.loads(workbench("mcp", "show", "broken", "--json").stdout)
    assert shown["tools_known"] is False and "status 2" in shown["reason"]


def test_usage_mistakes_exit_2() -> None:
    both = workbench("mcp", "add", "x", "--url", "http://127.0.0.1:1/mcp", "--", "node")
    assert both.returncode == 2 and "command after -- (stdio) or --url" in both.stderr
    bad_name = workbench("mcp", "add", "a__b", "--no-check", "--", "node")
    assert bad_name.returncode == 1 and "cannot hold '__'" in bad_name.stderr
    bad_header = workbench("mcp", "add", "web", "--url", "http://127.0.0.1:1/mcp", "--header", "nokey")
    assert bad_header.returncode == 2 and "KEY=VALUE" in bad_header.stderr
