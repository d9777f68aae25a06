"""Tool disclosure through the Host: with 300 tools enabled the model is offered the
relevant ones and the bridge, finds the right tool with ``tool_search`` and calls it
with ``tool_invoke`` — through the gateway, so switches, hooks and permissions apply."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from workbench.agent.messages import TextChunk, ToolCall, ToolCallChunk
from workbench.config.home import Home
from workbench.core.host import Host
from workbench.events import PermissionRequest, ToolCallStarted
from workbench.ext.manager import ExtensionManager
from workbench.store import Store
from workbench.tools.disclosure import schema_tokens

GUARD = Path(__file__).resolve().parents[2] / "fixtures" / "extensions" / "guard"

VERBS = ["export", "import", "archive", "validate", "render", "sync", "audit", "tag", "merge",
         "rotate", "encrypt", "compress", "preview", "index", "restore"]
NOUNS = ["email signature", "calendar feed", "file checksum", "folder permission", "image metadata",
         "currency symbol", "weather station", "git hook", "timer log", "contact group"]


def big_extension(folder: Path) -> Path:
    """``big``: 298 generated tools, ``convert_currency`` and ``read_notes`` (which needs
    to read ``$home/notes``)."""
    tools = []
    for suffix, verb, noun in itertools.islice(itertools.product(("", "_v2"), VERBS, NOUNS), 298):
        tools.append({
            "name": f"{verb}_{noun.replace(' ', '_')}{suffix}",
            "description": f"{verb.capitalize()} the {noun} of a project. Use when the user asks "
                           f"to {verb} a {noun}.",
            "parameters": {"type": "object", "properties": {
                "project": {"type": "string", "description": f"The project whose {noun} to {verb}."},
                "dry_run": {"type": "boolean", "description": "Only say what would change."}}},
            "triggers": [f"{verb} my {noun}"], "function": "echo"})
    tools.append({
        "name": "convert_currency",
        "description": "Convert an amount of money from one currency to another at today's rate.",
        "parameters": {"type": "object", "properties": {
            "amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
            "required": ["amount", "from", "to"], "additionalProperties": False},
        "triggers": ["how much is 100 dollars in euros", "convert pounds to yen"],
        "function": "convert"})
    tools.append({
        "name": "read_notes", "description": "Read the person's notes folder.",
        "parameters": {"type": "object"}, "function": "echo",
        "permissions": {"read": [{"path": "$home/notes", "reason": "Read your notes."}]}})
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps({
        "name": "big", "displayName": "Big", "description": "Many tools.", "entry": "main.py",
        "tools": tools}))
    (folder / "main.py").write_text(
        "def echo(args, ctx):\n    return {'echo': args}\n\n"
        "def convert(args, ctx):\n    return {'amount': round(args['amount'] * 0.9, 2), 'currency': args['to']}\n")
    return folder


def install(home: Home, *folders: Path) -> None:
    with Store.open(home.db_path) as store:
        manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
        for folder in folders:
            manager.install(str(folder), approve=lambda plan: True)


@pytest.fixture
def big(tmp_path: Path, home: Home) -> Home:
    install(home, big_extension(tmp_path / "src" / "big"))
    return home


class Steps:
    """A model that plays ``steps`` in order: each gets the messages and the offered tool
    names and returns a tool call ``(name, arguments)`` or the final text."""

    def __init__(self, *steps) -> None:
        self.steps = list(steps)
        self.offered: list[list[str]] = []
        self.seen: list[list] = []

    async def stream(self, messages, tools):
        self.offered.append([spec.name for spec in tools])
        self.seen.append(list(messages))
        answer = self.steps.pop(0)(messages, self.offered[-1]) if self.steps else "done"
        if isinstance(answer, str):
            yield TextChunk(answer)
        else:
            name, arguments = answer
            yield ToolCallChunk(ToolCall(f"c{len(self.offered)}", name, arguments))


def last_result(messages) -> dict:
    return json.loads(next(m.content for m in reversed(messages) if m.role == "tool"))


def tool_rows(host: Host, session_id: str) -> list[dict]:
    return [json.loads(m["content"]) for m in host.chats.messages(session_id) if m["role"] == "tool"]


async def test_with_300_tools_the_model_finds_and_calls_the_right_one(big, workdir):
    model = Steps(
        lambda messages, tools: ("tool_search", {"query": "exchange money into another currency"}),
        lambda messages, tools: ("tool_invoke", {
            "name": last_result(messages)["result"]["matches"][0]["name"],
            "arguments": {"amount": 100, "from": "USD", "to": "EUR"}}))
    async with Host.open(cwd=workdir, model="echo", provider=model) as host:
        enabled = host.switches.tools()
        assert len(enabled) > 300
        assert sum(schema_tokens(t) for t in enabled) > int(host.config.get("tools.schema_token_budget"))
        seen = []
        host.bus.subscribe(seen.append)
        result = await host.chats.send_prompt("Hi! Can you help me with my trip budget?")
        assert result.text == "done"

        offered = model.offered[0]
        assert {"tool_search", "tool_invoke"} <= set(offered)
        assert len(offered) < 40
        assert "convert_currency" not in offered  # nothing in the message points at it
        specs = {t.name: t for t in host.registry.available()}
        assert sum(schema_tokens(specs[name]) for name in offered) <= 6000

        search, invoke = tool_rows(host, result.session_id)
        assert search["result"]["matches"][0]["name"] == "convert_currency"
        assert search["result"]["matches"][0]["parameters"]["required"] == ["amount", "from", "to"]
        assert invoke == {"ok": True, "result": {"tool": "big.convert_currency",
                                                 "result": {"amount": 90.0, "currency": "EUR"}}}
        started = [e.tool for e in seen if isinstance(e, ToolCallStarted)]
        assert started == ["workbench.tool_search", "workbench.tool_invoke", "big.convert_currency"]
        audit = host.store._all("SELECT actor, action, subject FROM audit_log WHERE action = 'tool.ok'")
        assert [(r["actor"], r["subject"]) for r in audit] == [
            ("model", "workbench.tool_search"), ("model", "big.convert_currency"),
            ("model", "workbench.tool_invoke")]


async def test_the_relevant_tools_are_offered_directly(big, workdir):
    model = Steps()
    async with Host.open(cwd=workdir, model="echo", provider=model) as host:
        await host.chats.send_prompt("How much is 100 dollars in euros?")
        offered = model.offered[0]
        always = [t.name for t in host.switches.tools() if t.always_available]
        assert always and offered[:len(always)] == always  # unranked, offered first
        assert offered[len(always)] == "convert_currency"
        assert offered[-2:] == ["tool_search", "tool_invoke"]


async def test_under_the_budget_every_tool_is_offered_and_no_bridge(big, workdir, home):
    home.config_file.write_text("[tools]\nschema_token_budget = 1000000\n")
    model = Steps()
    async with Host.open(cwd=workdir, model="echo", provider=model) as host:
        await host.chats.send_prompt("How much is 100 dollars in euros?")
        assert model.offered[0][0] == "convert_currency"
        assert len(model.offered[0]) == len(host.switches.tools())
        assert "tool_search" not in model.offered[0] and "tool_invoke" not in model.offered[0]
        assert not host.tools.status_report().disclosure_active


async def test_a_tool_needing_a_permission_is_refused_through_tool_invoke_without_a_grant(big, workdir):
    model = Steps(lambda messages, tools: ("tool_invoke", {"name": "read_notes"}))
    async with Host.open(cwd=workdir, model="echo", provider=model) as host:
        result = await host.chats.send_prompt("read my notes")
        (row,) = tool_rows(host, result.session_id)
        assert row["ok"] is False and row["error"]["kind"] == "permission"
        assert row["error"]["tool"] == "big.read_notes"
        assert "Read your notes." in row["error"]["message"]
        refused = host.store._all("SELECT actor, subject FROM audit_log "
                                  "WHERE action = 'tool.refused.permission'")
        assert [(r["actor"], r["subject"]) for r in refused] == [("model", "big.read_notes")]


async def test_tool_invoke_asks_for_the_permission_like_a_direct_call(big, workdir, tmp_path):
    (tmp_path / "notes").mkdir()

    class AllowOnce:
        def __init__(self):
            self.requests = []

        async def answer(self, request):
            self.requests.append(request)
            return "once"

    responder = AllowOnce()
    model = Steps(lambda messages, tools: ("tool_invoke", {"name": "read_notes",
                                                           "arguments": {"x": 1}}))
    async with Host.open(cwd=workdir, model="echo", responder=responder, provider=model) as host:
        result = await host.chats.send_prompt("read my notes")
        (row,) = tool_rows(host, result.session_id)
        assert row == {"ok": True, "result": {"tool": "big.read_notes", "result": {"echo": {"x": 1}}}}
        (request,) = responder.requests
        assert isinstance(request, PermissionRequest) and request.tool == "big.read_notes"
        assert request.session_id == result.session_id


async def test_tool_invoke_keeps_the_chats_switches_and_validation(big, workdir):
    model = Steps(
        lambda messages, tools: ("tool_invoke", {"name": "convert_currency",
                                                 "arguments": {"amount": 1, "from": "USD", "to": "EUR"}}),
        lambda messages, tools: ("tool_invoke", {"name": "word_count", "arguments": {"txt": "a"}}),
        lambda messages, tools: ("tool_invoke", {"name": "tool_invoke", "arguments": {}}))
    async with Host.open(cwd=workdir, model="echo", provider=model) as host:
        session = host.chats.new()["id"]
        host.switches.set_extension(session, "big", False)
        await host.chats.send_prompt("convert", session_id=session)
        switched_off, invalid, recursive = tool_rows(host, session)
        assert switched_off["error"]["kind"] == "not_found"
        assert "switched off in this chat" in switched_off["error"]["message"]
        assert invalid["error"]["kind"] == "invalid_arguments"
        assert recursive["error"]["kind"] == "invalid_arguments"
        # In that chat big's schemas are gone, so disclosure is off there.
        assert not host.tools.status_report(session).disclosure_active
        assert host.tools.status_report().disclosure_active


async def test_hooks_apply_to_calls_made_through_tool_invoke(big, home, workdir):
    install(home, GUARD)
    model = Steps(
        lambda messages, tools: ("tool_invoke", {"name": "word_count",
                                                 "arguments": {"text": "some forbidden words"}}),
        lambda messages, tools: ("tool_invoke", {"name": "word_count",
                                                 "arguments": {"text": "rewrite me"}}))
    async with Host.open(cwd=workdir, model="echo", provider=model) as host:
        host.extensions.set_hook_rewrite("guard", True)  # it rewrites the built-in's word_count
        result = await host.chats.send_prompt("count")
        blocked, rewritten = tool_rows(host, result.session_id)
        assert blocked["ok"] is False and blocked["error"]["kind"] == "blocked"
        assert blocked["error"]["message"] == "blocked by a hook: forbidden words"
        assert blocked["error"]["hook_context"] == "[hook context]\nthe guard looked"
        assert rewritten["ok"] is True
        assert rewritten["result"]["result"] == {"words": 3, "lines": 1, "characters": 13}
        assert rewritten["result"]["hook_context"] == "[hook context]\nrewritten"


async def test_the_status_report_shows_disclosure_tokens_per_extension_and_the_budget(big, workdir):
    async with Host.open(cwd=workdir) as host:
        report = host.tools.status_report()
        data = report.to_json()["tool_disclosure"]
        assert data["active"] is True and data["budget"] == 6000
        assert next(iter(data["by_extension"])) == "big"
        assert data["by_extension"]["big"] > 6000
        assert sum(data["by_extension"].values()) == data["estimated_schema_tokens"]
        assert data["by_source"] == {"extension": data["by_extension"]["big"],
                                     "builtin": data["estimated_schema_tokens"] - data["by_extension"]["big"]}
        always = sum(1 for t in host.switches.tools() if t.always_available)
        assert data["exposed"] == always + 2  # and the two bridge tools
        assert data["ranked_per_message"] == len(host.switches.tools()) - always
        assert set(data["on_demand_tools"]) == {"tool_search", "tool_invoke", "memory_search",
                                                "skill_load", "skill_file"}
        markdown = report.to_markdown()
        assert "- **Active:** true (active)" in markdown
        assert f"- **Estimated schema tokens:** {data['estimated_schema_tokens']} (budget 6000)" in markdown
        assert "- **By extension or server:** big " in markdown
        assert "Tool disclosure: active" in report.to_text()
