"""One MCP tool switched off in one chat and kept on in another, with the real
server-everything (``make test`` installs it into ``.mcp-servers/``): what the model is
offered, its calls, ``tool_invoke`` and direct calls in each chat, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commands import workbench

from workbench.config.home import Home
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import ToolCallStarted
from workbench.mcp.config import ServerConfig, write_server

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
ECHO = "mcp__everything__echo"


@pytest.fixture(autouse=True)
def server_installed(home: Home) -> None:
    assert EVERYTHING.exists(), f"{EVERYTHING} is missing; `make test` installs it"
    write_server(home.config_file, ServerConfig(name="everything", command="node",
                                                args=(str(EVERYTHING), "stdio")), replace=True)


def echoed(text: str) -> dict:
    return {"tool_calls": [{"id": f"call-{text}", "name": ECHO, "arguments": {"message": text}}]}


async def test_an_mcp_tool_switched_off_in_one_chat_still_runs_in_another(workdir: Path) -> None:
    script = workdir / "script.json"
    script.write_text(json.dumps([echoed("hi"), {"text": "done"}] * 2))
    host = Host.open(cwd=workdir, model=f"scripted:{script}")
    try:
        off, on = host.chats.new()["id"], host.chats.new()["id"]
        switched = host.switches.set_tool(off, ECHO, False)
        assert switched.qualified_name == f"mcp:everything.{ECHO}"
        assert ECHO not in {spec.name for spec in host.chats.tool_specs(off)}
        assert "mcp__everything__get-sum" in {spec.name for spec in host.chats.tool_specs(off)}
        assert ECHO in {spec.name for spec in host.chats.tool_specs(on)}

        started: list[ToolCallStarted] = []
        host.bus.subscribe(lambda e: started.append(e) if isinstance(e, ToolCallStarted) else None)
        await host.chats.send_prompt("echo it", session_id=off)
        await host.chats.send_prompt("echo it", session_id=on)
        (refused,) = [json.loads(m["content"]) for m in host.chats.messages(off) if m["role"] == "tool"]
        assert refused == {"ok": False, "error": {
            "kind": "not_found", "message": f"'{ECHO}' is switched off in this chat"}}
        (ran,) = [json.loads(m["content"]) for m in host.chats.messages(on) if m["role"] == "tool"]
        assert ran["ok"] and ran["result"]["content"][0]["text"] == "Echo: hi"
        assert [(e.tool, e.session_id) for e in started] == [(f"mcp:everything.{ECHO}", on)]

        # tool_invoke and a person's direct call in each chat see the same switches.
        bridged = await host.chats.call_for_model(off, "tool_invoke", {"name": ECHO, "arguments": {"message": "x"}})
        assert bridged.error["kind"] == "not_found" and "switched off in this chat" in bridged.error["message"]
        direct = await host.tools.call(ECHO, {"message": "x"}, CallOptions(session_id=off))
        assert direct.error["kind"] == "not_found"
        direct = await host.tools.call(ECHO, {"message": "y"}, CallOptions(session_id=on))
        assert direct.ok and direct.result["content"][0]["text"] == "Echo: y"
        calls = [(row["tool"], row["session_id"], row["status"]) for row in host.store.list_tool_calls()]
        assert sorted(calls) == sorted([(f"mcp:everything.{ECHO}", on, "ok")] * 2
                                       + [("workbench.tool_invoke", off, "error")])

        host.switches.set_tool(off, ECHO, True)
        again = await host.tools.call(ECHO, {"message": "z"}, CallOptions(session_id=off))
        assert again.ok and again.result["content"][0]["text"] == "Echo: z"
    finally:
        await host.aclose()


def test_the_cli_switches_an_mcp_tool_in_one_session(workdir: Path) -> None:
    assert workbench("run", "hello").returncode == 0
    assert workbench("run", "hello again").returncode == 0
    off, on = [row["id"] for row in json.loads(workbench("sessions", "list", "--json").stdout)]

    done = workbench("sessions", "disable-tool", off[:8], ECHO)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Switched mcp:everything.{ECHO} off in session {off[:12]}\n"
    listing = json.loads(workbench("sessions", "tools", off, "--json").stdout)
    assert listing["tools_off"] == [f"mcp:everything.{ECHO}"]
    assert ECHO not in {t["name"] for t in listing["tools"]}
    plain = workbench("sessions", "tools", off).stdout
    assert plain.rstrip().endswith(f"Tools switched off in this session: mcp:everything.{ECHO}")
    assert ECHO in {t["name"] for t in json.loads(workbench("sessions", "tools", on, "--json").stdout)["tools"]}

    every = json.loads(workbench("sessions", "tools", off, "--all", "--json").stdout)
    (echo,) = [t for t in every["tools"] if t["name"] == ECHO]
    assert (echo["on"], echo["own"], echo["offered"], echo["extension"]) == (False, True, False, "mcp:everything")
    lines = workbench("sessions", "tools", off, "--all").stdout.splitlines()
    assert f"off*  {ECHO}" in [line[:len(ECHO) + 6] for line in lines]

    assert workbench("sessions", "enable-tool", off, ECHO).returncode == 0
    assert json.loads(workbench("sessions", "tools", off, "--json").stdout)["tools_off"] == []
    missing = workbench("sessions", "disable-tool", off, "mcp__everything__nope")
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: no tool named 'mcp__everything__nope' here")
