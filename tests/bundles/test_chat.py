"""The issue's "done when", as a new user would see it: in a chat with a scripted model,
the agent creates a small Node tool bundle, reads back its digest and calls it by that
digest; a file changed afterwards makes the call refuse; a skill bundle and an MCP bundle
work the same way. And what a chat is offered: the bundle tools only beside the shell and
the project's write tools, never changed by a bundle."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bundle_samples import COUNT, MCP, SKILL, Grants, tool_bundle

from workbench.core.bundles import check
from workbench.core.host import Host


def tool_results(host: Host, session_id: str) -> list[dict]:
    return [json.loads(m["content"]) for m in host.chats.messages(session_id) if m["role"] == "tool"]


def step(tool: str, **arguments) -> dict:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


async def test_the_agent_creates_calls_and_is_refused_after_a_change(tmp_path: Path, home):
    project = tmp_path / "project"
    project.mkdir()
    digest, skill, mcp = check(COUNT)["digest"], check(SKILL)["digest"], check(MCP)["digest"]
    script = [step("extension_manage", action="create", bundle=COUNT),
              step("extension_call", id="count-entries", digest=digest, input={"a": 1, "b": 2}),
              {"text": "It counted 2 entries."},
              step("extension_call", id="count-entries", digest=digest, input={"a": 1}),
              {"text": "It refused."},
              step("extension_manage", action="create", bundle=SKILL),
              step("extension_call", id="release-notes", digest=skill),
              step("extension_manage", action="create", bundle=MCP),
              step("extension_manage", action="inspect", id="shout", digest=mcp),
              step("extension_call", id="shout", digest=mcp, tool_name="shout", input={"text": "done"}),
              {"text": "All three worked."}]
    (project / "model.json").write_text(json.dumps(script))
    grants = Grants()
    async with Host.open(cwd=project, model="scripted:model.json", responder=grants) as host:
        first = await host.chats.send_prompt("Create a reusable Node tool that counts the entries "
                                             "in a JSON object, then call it on this input.")
        assert (first.status, first.text) == ("done", "It counted 2 entries.")
        created, called = tool_results(host, first.session_id)
        assert created["ok"] and created["result"]["digest"] == digest  # the digest it reads back
        assert called["ok"] and called["result"]["result"] == {"count": 2}
        asked = [r for r in grants.asked if getattr(r, "tool", "").endswith("extension_manage")]
        assert asked, "creating asked for the project's write permission"

        entry = project / ".workbench" / "bundles" / "count-entries" / digest / "files" / "index.mjs"
        os.chmod(entry, 0o644)
        entry.write_text("export function run() { return { count: 999 } }")
        second = await host.chats.send_prompt("Call it again.", first.session_id)
        assert second.text == "It refused."
        refused = tool_results(host, first.session_id)[2]
        assert not refused["ok"] and "no longer match its digest" in refused["error"]["message"]

        third = await host.chats.send_prompt("Now a skill and an MCP server.", first.session_id)
        assert third.text == "All three worked."
        _, made_skill, skill_text, made_mcp, inspected, shouted = tool_results(host, first.session_id)[2:]
        assert made_skill["result"]["digest"] == skill and made_mcp["result"]["digest"] == mcp
        assert skill_text["result"]["skill"].startswith("# Release notes")
        assert [t["name"] for t in inspected["result"]["tools"]] == ["shout"]
        assert shouted["result"]["result"]["content"][0]["text"] == "DONE"


async def test_bundles_never_change_the_chats_tools(tmp_path: Path, home):
    project = tmp_path / "project"
    project.mkdir()
    async with Host.open(cwd=project, model="echo", responder=Grants()) as host:
        session_id = host.chats.new("t")["id"]
        before = [(t.name, t.description, json.dumps(t.parameters)) for t in host.switches.tools(session_id)]
        specs_before = host.chats.tool_specs(session_id)
        from workbench.core.bundles import bundles

        bundles(host).create(project, tool_bundle("export const run = () => 1", bundle_id="zq-private"))
        bundles(host).create(project, MCP)
        host.loading.reload()
        after = [(t.name, t.description, json.dumps(t.parameters)) for t in host.switches.tools(session_id)]
        assert after == before
        assert host.chats.tool_specs(session_id) == specs_before
        assert "zq-private" not in json.dumps([list(t) for t in after])


async def test_the_bundle_tools_are_offered_only_beside_the_shell_and_project_writes(tmp_path: Path, home):
    project = tmp_path / "project"
    project.mkdir()
    async with Host.open(cwd=project, model="echo", responder=Grants()) as host:
        session_id = host.chats.new("t")["id"]
        names = {t.name for t in host.switches.tools(session_id)}
        assert {"extension_manage", "extension_call"} <= names
        host.switches.set_extension(session_id, "shell", False)
        names = {t.name for t in host.switches.tools(session_id)}
        assert "shell" not in names and not names & {"extension_manage", "extension_call"}
        from workbench.core.calls import CallOptions

        refused = await host.tools.call("bundles.extension_manage", {"action": "list"},
                                        CallOptions(caller="model", session_id=session_id))
        assert not refused.ok and "offered only in a chat whose tools include" in refused.error["message"]
        host.switches.set_extension(session_id, "shell", True)
        host.switches.set_tool(session_id, "write_file", False)
        host.switches.set_tool(session_id, "edit_file", False)
        names = {t.name for t in host.switches.tools(session_id)}
        assert not names & {"extension_manage", "extension_call"}
