"""Memory providers are handed what the person saves, for real: every save — `workbench
memories add`, `host.memories.add`, a tool's `ctx.memories.write` — reaches each memory
provider on whose scopes serve it, in its sandboxed worker, in the background; a
provider's failure never fails the save. Searches ask only the providers whose scopes
serve them, and a document seen twice is answered once."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path

import pytest

from test_providers_sandboxed import install
from commands import workbench

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import Notice

CODE = '''
    import json
    import time


    def _keep(request, ctx):
        ctx.db.execute("CREATE TABLE IF NOT EXISTS asked (provider TEXT, op TEXT, request TEXT)")
        ctx.db.execute("INSERT INTO asked VALUES (?, ?, ?)",
                       [request["provider"], request["op"], json.dumps(request)])


    def keeper(request, ctx):
        """Keeps what it is put; searches answer it back, with the id it was put under."""
        _keep(request, ctx)
        if request["op"] != "search":
            return None
        rows = ctx.db.query("SELECT request FROM asked WHERE op = 'put' AND provider = ?",
                            [request["provider"]])
        return {"documents": [json.loads(row["request"])["document"] for row in rows]}


    def slow(request, ctx):
        _keep(request, ctx)
        if request["op"] == "put":
            time.sleep(1.5)
        return {"documents": []}


    def broken(request, ctx):
        raise RuntimeError("the team server is down")


    def note(arguments, ctx):
        return ctx.memories.write(arguments["title"], arguments["content"])
'''


def memory(name: str, function: str, **config) -> dict:
    return {"type": "memory", "name": name, "function": function, "config": config}


@pytest.fixture
def keepers(tmp_path, home):
    folder = tmp_path / "src" / "keepers"
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps({
        "name": "keepers", "displayName": "Keepers", "description": "Memory providers for a test.",
        "entry": "main.py", "database": True,
        "providers": [memory("all", "keeper", label="Everything"),
                      memory("agent", "keeper", scopes=["agent"]),
                      memory("chat", "keeper", scopes=["session"], label="This chat"),
                      memory("folder", "keeper", scopes=["workspace", "session"]),
                      memory("off", "keeper", enabled=False),
                      memory("slow", "slow", scopes=["all"]),
                      memory("broken", "broken")],
        "tools": [{"name": "note", "description": "Save a note as a memory.", "function": "note",
                   "parameters": {"type": "object"},
                   "permissions": {"memories": {"access": "write", "reason": "Save notes."}}}]}))
    (folder / "main.py").write_text(textwrap.dedent(CODE))
    install(home, folder)
    return home


def asked(host: Host, op: str) -> dict[str, dict]:
    """What each provider was asked with ``op``, by provider (the last request)."""
    rows = host.databases.query("keepers", "SELECT provider, request FROM asked WHERE op = ?", [op])
    return {row["provider"]: json.loads(row["request"]) for row in rows}


async def test_a_saved_memory_reaches_the_providers_whose_scopes_serve_it(keepers, workdir):
    async with Host.open(cwd=workdir) as host:
        notices: list[Notice] = []
        host.bus.subscribe(lambda event: notices.append(event) if isinstance(event, Notice) else None)
        added = host.memories.add("Release checklist", "Tag, build, then release.")
        # The save is done at once: no provider has been handed it yet (they are handed it
        # in the background, once the loop runs; the first one handed it makes its table).
        assert added["replaced"] is False
        assert host.databases.query("keepers", "SELECT name FROM sqlite_master WHERE name = 'asked'") == []
        assert host.store.get_memory("Release checklist")["content"] == "Tag, build, then release."
        await host.providers.puts_settled()
        put = asked(host, "put")
        audited = [(e["action"], e["subject"]) for e in host.store.list_audit(limit=50)]
    # ``agent`` is served by the providers listing it, ``all``, or nothing: not by
    # ``chat`` and ``folder``; ``off`` is switched off in its manifest.
    assert sorted(put) == ["keepers/agent", "keepers/all", "keepers/slow"]
    request = put["keepers/all"]
    assert request["document"] == {
        "id": "Release checklist", "title": "Release checklist", "content": "Tag, build, then release.",
        "kind": "knowledge", "summary": None, "scope": "agent",
        "updated_at": request["document"]["updated_at"]}
    assert (request["op"], request["session_id"], request["workspace"]) == ("put", None, str(workdir))
    assert request["config"] == {"label": "Everything"}
    # The failing provider is kept apart: audited, and told in a notice.
    assert ("provider.error.tool", "memory:keepers/broken") in audited
    assert [n.message for n in notices] == [
        "the memory provider keepers/broken could not take the memory 'Release checklist': "
        "RuntimeError: the team server is down"]


async def test_a_tools_memory_write_reaches_them_too(keepers, workdir, caplog):
    async with Host.open(cwd=workdir) as host:
        with caplog.at_level(logging.WARNING, logger="workbench.core.provider_runtime"):
            outcome = await host.tools.call("note", {"title": "Standup", "content": "At nine."},
                                           CallOptions(grants=(("memories", "write"),)))
            assert outcome.ok, outcome.error
            await host.providers.puts_settled()
        put = asked(host, "put")
    assert put["keepers/all"]["document"]["content"] == "At nine."
    assert "keepers.note" in [e["actor"] for e in host_audit(keepers, "provider.call")]
    assert "the memory provider keepers/broken could not take 'Standup'" in caplog.text


def host_audit(home, action: str) -> list[dict]:
    from workbench.store import Store

    with Store.open(home.db_path) as store:
        return [e for e in store.list_audit(limit=100) if e["action"] == action]


async def test_searches_ask_the_providers_of_their_scopes_and_answer_a_document_once(keepers, workdir):
    async with Host.open(cwd=workdir) as host:
        host.memories.add("Release checklist", "Tag, build, then release.")
        await host.providers.puts_settled()
        outside = await host.tools.call("memory_search", {"query": "release"})
        chat = host.chats.new()["id"]
        inside = await host.tools.call("memory_search", {"query": "release"},
                                      CallOptions(session_id=chat))
        searched = asked(host, "search")
    # Outside a chat, the provider of chats alone is not asked.
    assert [p["provider"] for p in outside.result["providers"]] == [
        "keepers/agent", "keepers/all", "keepers/broken", "keepers/folder", "keepers/slow"]
    assert [p["provider"] for p in inside.result["providers"]] == [
        "keepers/agent", "keepers/all", "keepers/broken", "keepers/chat", "keepers/folder",
        "keepers/slow"]
    assert searched["keepers/chat"]["session_id"] == chat
    # Two providers answer the memory they were put, under its title as id: the built-in
    # memory answers it once.
    for answer in (outside.result, inside.result):
        assert [(m["title"], m["source"]) for m in answer["matches"]] == [
            ("Release checklist", "user")]
        counts = {p["provider"]: p.get("count") for p in answer["providers"]}
        assert counts["keepers/all"] == 1 and counts["keepers/agent"] == 1


def test_workbench_memories_add_hands_it_over_before_it_returns(keepers, workdir):
    done = workbench("memories", "add", "Deploys", "--text", "Fridays, never.")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Added knowledge 'Deploys'.\n"
    with Host.open(cwd=workdir) as host:
        put = asked(host, "put")
    assert sorted(put) == ["keepers/agent", "keepers/all", "keepers/slow"]
    assert put["keepers/agent"]["document"]["content"] == "Fridays, never."


async def test_the_status_report_shows_each_memory_providers_label_and_scopes(keepers, workdir):
    async with Host.open(cwd=workdir) as host:
        report = host.tools.status_report()
        registered = report.to_json()["provider_registration"]["registered"]
        text = report.to_text()
    assert "  memory  chat — This chat  from keepers  scopes: session\n" in text
    assert "  memory  off" in text and "(disabled)" in text
    shown = {p["name"]: (p["label"], p.get("scopes"), p["enabled"]) for p in registered}
    assert shown["all"] == ("Everything", ["session", "agent", "workspace"], True)
    assert shown["chat"] == ("This chat", ["session"], True)
    assert shown["folder"] == (None, ["session", "workspace"], True)
    assert shown["off"][2] is False


def test_a_memory_provider_that_ignores_put_breaks_nothing(tmp_path, home, workdir):
    """The house's memory provider reads ``query`` and fails on a put: the save stands."""
    install(home, Path(__file__).resolve().parents[1] / "fixtures" / "extensions" / "house")
    with Host.open(cwd=workdir) as host:
        host.memories.add("Release day", "Thursdays.")
        assert host.store.get_memory("Release day")["content"] == "Thursdays."
        failed = [e for e in host.store.list_audit(limit=50) if e["action"].startswith("provider.error")]
    assert [e["subject"] for e in failed] == ["memory:house/team"]
