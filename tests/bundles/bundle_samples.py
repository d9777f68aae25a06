"""Bundles the tests make, and a responder that grants what a tool asks for."""

from __future__ import annotations

from typing import Any

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
