"""A project and a host to make and call bundles in, under each JavaScript runtime.

``bundle_lab`` opens a host in ``tmp_path/project`` whose responder grants what a tool
asks for this chat; ``lab.manage`` and ``lab.call`` go through the gateway as the
model's calls do (``extension_manage``, ``extension_call``), ``lab.service`` is the
service the CLI calls. ``runtime`` runs every test of a module that uses it under
Node and under Deno's Node compatibility.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workbench.core.bundles import bundles, set_runtime
from workbench.core.calls import CallOptions, ToolOutcome
from workbench.core.host import Host
from workbench.events import AskUserRequest, PermissionAnswer, Request


class Grants:
    """Answers every permission prompt with a grant for the chat, and each review of a
    write with ``verdict``."""

    def __init__(self, verdict: str = "accept") -> None:
        self.verdict = verdict
        self.asked: list[Request] = []

    async def answer(self, request: Request) -> Any:
        self.asked.append(request)
        if isinstance(request, AskUserRequest):
            return [self.verdict for _ in request.questions]
        return PermissionAnswer("session")

    def forms(self) -> list[AskUserRequest]:
        return [r for r in self.asked if isinstance(r, AskUserRequest)]


def tool_bundle(code: str, *, entry: str = "index.mjs", bundle_id: str = "count-entries",
                **manifest: Any) -> dict[str, Any]:
    """A ``tool`` bundle whose entrypoint is ``code``."""
    return {"manifest": {"schemaVersion": 1, "id": bundle_id, "kind": "tool",
                         "description": "A test tool", "entrypoint": entry,
                         "inputSchema": {"type": "object"}, **manifest},
            "files": {entry: code}}


COUNT = tool_bundle("export function run(input) { return { count: Object.keys(input).length } }")
"""The seed's example: counts the entries of a JSON object."""

MCP_SERVER = r"""
const readline = require("node:readline");
const rl = readline.createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.method === "initialize") send({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion: "2025-06-18",
    capabilities: { tools: {} }, serverInfo: { name: "shout", version: "1.0.0" } } });
  else if (msg.method === "tools/list") send({ jsonrpc: "2.0", id: msg.id, result: { tools: [
    { name: "shout", description: "Upper-cases a text", inputSchema: { type: "object",
      properties: { text: { type: "string" } }, required: ["text"] } }] } });
  else if (msg.method === "tools/call") send({ jsonrpc: "2.0", id: msg.id, result: {
    content: [{ type: "text", text: String(msg.params.arguments.text).toUpperCase() }] } });
});
"""

MCP = {"manifest": {"schemaVersion": 1, "id": "shout", "kind": "mcp",
                    "description": "An MCP server that shouts", "entrypoint": "server.js"},
       "files": {"server.js": MCP_SERVER}}

SKILL = {"manifest": {"schemaVersion": 1, "id": "release-notes", "kind": "skill",
                      "description": "How to write release notes", "entrypoint": "SKILL.md",
                      "references": ["style.md"]},
         "files": {"SKILL.md": "# Release notes\nList what changed, newest first.\n",
                   "style.md": "Short sentences. No jargon.\n",
                   "unlisted.txt": "not a reference\n"}}


class BundleLab:
    def __init__(self, host: Host, project: Path, grants: Grants) -> None:
        self.host = host
        self.project = project
        self.grants = grants
        self.service = bundles(host)
        self.session_id = host.chats.new("bundles")["id"]

    async def outcome(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        return await self.host.tools.call(tool, arguments, CallOptions(caller="model", session_id=self.session_id))

    async def manage(self, **arguments: Any) -> dict[str, Any]:
        outcome = await self.outcome("extension_manage", arguments)
        assert outcome.ok, outcome.error
        return outcome.result

    async def call(self, **arguments: Any) -> dict[str, Any]:
        outcome = await self.outcome("extension_call", arguments)
        assert outcome.ok, outcome.error
        return outcome.result

    async def failed(self, tool: str, **arguments: Any) -> dict[str, Any]:
        outcome = await self.outcome(tool, arguments)
        assert not outcome.ok, outcome.result
        return outcome.error

    def revision(self, bundle_id: str, digest: str) -> Path:
        return self.project / ".workbench" / "bundles" / bundle_id / digest


@pytest.fixture(params=["node", "deno"])
def runtime(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def bundle_lab(tmp_path: Path, home, runtime: str):
    project = tmp_path / "project"
    project.mkdir()
    grants = Grants()
    async with Host.open(cwd=project, model="echo", responder=grants) as host:
        set_runtime(host, runtime)
        yield BundleLab(host, project, grants)
