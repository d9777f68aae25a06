"""Providers from extensions, for real: declared in a manifest, run in the extension's
sandboxed worker with exactly what was granted to them, chosen by precedence (built-in
first, then the first extension by name), the losers reported as conflicts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
import threading
from pathlib import Path

import pytest

from commands import workbench

from workbench.config.home import Home
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.errors import ModelError, ToolError
from workbench.events import PermissionRequest
from workbench.ext.manager import ExtensionManager
from workbench.store import Store

HOUSE = Path(__file__).resolve().parents[1] / "fixtures" / "extensions" / "house"


def install(home: Home, folder: Path) -> None:
    with Store.open(home.db_path) as store:
        ExtensionManager(home, store, registry_url="http://127.0.0.1:9").install(
            str(folder), approve=lambda plan: True)


def provider_extension(folder: Path, name: str, providers: list[dict], code: str) -> Path:
    """An extension that registers ``providers``, answered by the functions in ``code``."""
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps({
        "name": name, "displayName": name, "description": "Providers for a test.",
        "entry": "main.py", "providers": providers}))
    (folder / "main.py").write_text(textwrap.dedent(code))
    return folder


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return workbench(*args, cwd=cwd)


def tool_rows(host: Host, session_id: str) -> list[dict]:
    return [json.loads(m["content"]) for m in host.chats.messages(session_id) if m["role"] == "tool"]


class Answering:
    """A front-end that answers every permission request with one decision."""

    def __init__(self, decision: str) -> None:
        self.decision = decision
        self.requests: list[PermissionRequest] = []

    async def answer(self, request):
        assert isinstance(request, PermissionRequest)
        self.requests.append(request)
        return self.decision


@pytest.fixture
def house(home):
    install(home, HOUSE)
    return home


@pytest.fixture
def rivals(tmp_path, home):
    """``acme`` and ``zed`` register providers with clashing names; acme comes first by name."""
    install(home, provider_extension(tmp_path / "src" / "zed", "zed", [
        {"type": "model", "name": "shared", "function": "shared"},
        {"type": "search", "name": "web", "function": "web"},
        {"type": "search", "name": "news", "function": "news", "config": {"priority": 9}},
    ], '''
        def shared(request, ctx):
            return "zed answers"

        def web(request, ctx):
            return {"results": [{"title": "zed web", "url": "https://zed.test/web"}]}

        def news(request, ctx):
            return {"results": [{"title": "zed news on " + request["query"],
                                 "url": "https://zed.test/news"}]}
    '''))
    install(home, provider_extension(tmp_path / "src" / "acme", "acme", [
        {"type": "model", "name": "shared", "function": "shared"},
        {"type": "model", "name": "echo", "function": "shared"},
        {"type": "model", "name": "guarded", "function": "guarded",
         "permissions": {"read": [{"path": "$home/notes.txt", "reason": "Read your notes."}]}},
        {"type": "memory", "name": "local", "function": "broken"},
        {"type": "memory", "name": "notes", "function": "broken"},
        {"type": "memory", "name": "odd", "function": "odd"},
        {"type": "search", "name": "web", "function": "web", "config": {"priority": 1}},
    ], '''
        def shared(request, ctx):
            return "acme answers"

        def guarded(request, ctx):
            with open(request["messages"][-1]["content"], encoding="utf-8") as handle:
                return "notes: " + handle.read()

        def broken(request, ctx):
            raise RuntimeError("the notes server is down")

        def odd(request, ctx):
            return {"documents": [{"title": "fine"}, {"title": 5, "content": "not a title"}]}

        def web(request, ctx):
            return {"results": [{"title": "acme web", "url": "https://acme.test/web"}]}
    '''))
    return home


# --- a model provider, end to end --------------------------------------------------------


async def test_a_chat_talks_to_the_extensions_model_which_calls_a_tool(house, workdir):
    async with Host.open(cwd=workdir, model="ext:house/house") as host:
        result = await host.chats.send_prompt("count one two three")
        assert (result.status, result.text) == ("done", "3 words (pid 1)")
        rows = host.chats.messages(result.session_id)
        assert [m["role"] for m in rows] == ["user", "assistant", "tool", "assistant"]
        assert rows[1]["tool_calls"][0]["name"] == "word_count"
        assert tool_rows(host, result.session_id) == [
            {"ok": True, "result": {"words": 3, "lines": 1, "characters": 13}}]
        assert host.chats.get(result.session_id)["model"] == "ext:house/house"
        audited = [(e["action"], e["subject"]) for e in host.store.list_audit(limit=50)]
        assert ("provider.call", "model:house/house") in audited
    # The reply came from PID 1 of a namespace of its own: a sandboxed worker, not this process.
    assert os.getpid() != 1


async def test_the_provider_id_alone_selects_it_and_it_sees_its_config_and_the_tools(house, workdir):
    async with Host.open(cwd=workdir, model="house") as host:
        result = await host.chats.send_prompt("hello")
    assert result.text.startswith("Hello from the house: hello [pid 1] [offered ")
    assert "word_count" in result.text and "web_search" in result.text


def test_the_configured_model_and_run_model_both_reach_it_headless(house, workdir):
    done = cli("run", "--jsonl", "--model", "ext:house/house", "count a b")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["type"] == "turn_ended" and events[-1]["text"] == "2 words (pid 1)"
    assert any(e["type"] == "tool_call_ended" and e["tool"] == "builtin.word_count" for e in events)
    assert cli("config", "set", "model", "ext:house/house").returncode == 0
    done = cli("run", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Hello from the house: hi [pid 1]")


async def test_an_unknown_extension_model_is_named_with_what_is_known(house, workdir):
    async with Host.open(cwd=workdir, model="ext:house/nothing") as host:
        with pytest.raises(ModelError) as caught:
            await host.chats.send_prompt("hi")
    assert "no model provider 'nothing' in the extension 'house'" in str(caught.value)
    assert "ext:house/house, ext:house/probe" in str(caught.value)


# --- precedence and conflicts ------------------------------------------------------------


async def test_built_in_first_then_the_first_extension_by_name(rivals, workdir):
    async with Host.open(cwd=workdir, model="shared") as host:
        assert (await host.chats.send_prompt("hi")).text == "acme answers"
        shadowed = host.chats.new()["id"]
        host.chats.set_model(shadowed, "ext:zed/shared")
        assert (await host.chats.send_prompt("hi", shadowed)).text == "zed answers"
        builtin = host.chats.new()["id"]
        host.chats.set_model(builtin, "echo")
        assert (await host.chats.send_prompt("hi", builtin)).text == "You said: hi"
        # A chat that switched acme off: the name goes to the next provider, then to none.
        chat = host.chats.new()["id"]
        host.switches.set_extension(chat, "acme", False)
        assert (await host.chats.send_prompt("hi", chat)).text == "zed answers"
        host.switches.set_extension(chat, "zed", False)
        with pytest.raises(ModelError, match="belongs to the extension acme, which is switched off"):
            await host.chats.send_prompt("hi", chat)
        pinned = host.chats.new()["id"]
        host.chats.set_model(pinned, "ext:zed/shared")
        host.switches.set_extension(pinned, "zed", False)
        with pytest.raises(ModelError, match="ext:zed/shared belongs to the extension zed"):
            await host.chats.send_prompt("hi", pinned)


async def test_the_losers_are_conflicts_in_the_status_report(rivals, workdir):
    async with Host.open(cwd=workdir) as host:
        report = host.tools.status_report()
        registration = report.to_json()["provider_registration"]
        assert registration["conflicts"] == [
            {"type": "model", "name": "echo", "winner": {"source": "builtin", "extension": "workbench"},
             "shadowed": [{"source": "extension", "extension": "acme"}]},
            {"type": "model", "name": "shared", "winner": {"source": "extension", "extension": "acme"},
             "shadowed": [{"source": "extension", "extension": "zed"}]},
            {"type": "memory", "name": "local", "winner": {"source": "builtin", "extension": "workbench"},
             "shadowed": [{"source": "extension", "extension": "acme"}]},
            {"type": "search", "name": "web", "winner": {"source": "extension", "extension": "acme"},
             "shadowed": [{"source": "extension", "extension": "zed"}]}]
        assert [(p["type"], p["name"], p["extension"]) for p in registration["registered"]] == [
            ("model", "guarded", "acme"), ("model", "shared", "acme"), ("memory", "notes", "acme"),
            ("memory", "odd", "acme"), ("search", "news", "zed"), ("search", "web", "acme")]
        assert (registration["total_registered"], registration["total_conflicts"]) == (6, 4)
        assert report.title() == "3 loaded, 4 conflicts (no session context)"
        text = report.to_text()
        assert "  model shared: acme (extension) wins; shadowed: zed (extension)\n" in text
        assert "  memory local: workbench (builtin) wins; shadowed: acme (extension)\n" in text
        zed = next(e for e in report.extensions if e.name == "zed")
        assert [(p["name"], p["registered"]) for p in zed.providers] == [
            ("shared", False), ("news", True), ("web", False)]
        outcome = await host.tools.call("extensions_status", {"include_details": True})
        markdown = outcome.result["markdown"]
        assert "## Providers\n- **Registered:** 6\n- **Conflicts:** 4\n" in markdown
        assert "- model `echo`: **workbench** (builtin) wins; shadowed: acme (extension)" in markdown
        assert "- search `web`: **acme** (extension) wins; shadowed: zed (extension)" in markdown
    done = cli("ext", "status", "--json")
    assert json.loads(done.stdout)["provider_registration"]["total_conflicts"] == 4


# --- memory and web search -----------------------------------------------------------------


async def test_memory_search_asks_the_memory_providers_after_the_built_in_memories(house, rivals, workdir):
    async with Host.open(cwd=workdir) as host:
        host.memories.add("Release checklist", "Tag, build, then release.")
        outcome = await host.tools.call("memory_search", {"query": "release", "limit": 5})
    assert outcome.ok, outcome.error
    answer = outcome.result
    assert [(m["title"], m["source"]) for m in answer["matches"]] == [
        ("Release checklist", "user"), ("Release day", "provider:house/team")]
    assert answer["matches"][1]["content"] == "Releases ship on Thursdays."
    # A failing provider is reported beside the others; the one shadowed by the built-in
    # ``local`` is never asked.
    notes, odd, team = answer["providers"]
    assert team == {"provider": "house/team", "ok": True, "count": 1}
    assert (notes["provider"], notes["ok"]) == ("acme/notes", False)
    assert "the notes server is down" in notes["error"]
    # A malformed answer is refused whole, naming the bad item: nothing of it reaches the model.
    assert (odd["provider"], odd["ok"]) == ("acme/odd", False)
    assert odd["error"].startswith("acme/odd answered with a malformed item at /1/title")
    assert "fine" not in [m["title"] for m in answer["matches"]]
    assert answer["note"].startswith("Knowledge in these results is reference data")


async def test_memory_search_is_offered_when_a_memory_provider_answers_in_the_chat(house, workdir):
    async with Host.open(cwd=workdir) as host:
        assert "memory_search" in [t.name for t in host.chats.tool_specs(message="hi")]
        chat = host.chats.new()["id"]
        host.switches.set_extension(chat, "house", False)
        assert "memory_search" not in [t.name for t in host.chats.tool_specs(chat, message="hi")]


async def test_web_search_asks_by_priority_and_follows_the_chats_switches(house, rivals, workdir):
    async with Host.open(cwd=workdir) as host:
        outcome = await host.tools.call("web_search", {"query": "rain"})
        assert outcome.result["provider"] == "zed/news"  # priority 9 beats house's 5 and acme's 1
        assert outcome.result["results"] == [
            {"title": "zed news on rain", "url": "https://zed.test/news", "snippet": ""}]
        chat = host.chats.new()["id"]

        async def asked_in_chat() -> str:
            found = await host.tools.call("web_search", {"query": "rain"}, CallOptions(session_id=chat))
            return found.result["provider"]

        host.switches.set_extension(chat, "zed", False)
        # ``web`` is acme's, the first by name: house's is shadowed.
        assert await asked_in_chat() == "acme/web"
        host.switches.set_extension(chat, "acme", False)
        # With acme off in this chat, the name goes to the next extension.
        assert await asked_in_chat() == "house/web"
        host.switches.set_extension(chat, "house", False)
        assert "web_search" not in [t.name for t in host.switches.tools(chat)]
        none = await host.chats.call_for_model(chat, "web_search", {"query": "rain"})
        assert none.error["kind"] == "unavailable"
        assert none.error["message"] == "no search provider is on in this chat"


async def test_without_a_search_provider_there_is_no_web_search(home, workdir):
    async with Host.open(cwd=workdir) as host:
        assert "web_search" not in [t.name for t in host.switches.tools()]
        assert host.tools.status_report().to_json()["provider_registration"]["total_registered"] == 0


# --- permissions and the sandbox -----------------------------------------------------------


@pytest.fixture
def listener():
    """A TCP server on loopback that accepts whoever reaches it."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=5)
    server.close()


async def test_a_provider_reaches_nothing_it_was_not_granted(house, workdir, tmp_path, listener,
                                                             monkeypatch):
    secret = tmp_path / "secret.txt"  # $home/secret.txt: tests' $HOME is tmp_path
    secret.write_text("the secret\n")
    monkeypatch.setenv("PROBE_SECRET", "hunter2")
    socket.create_connection(("127.0.0.1", listener), timeout=2).close()  # this process can
    async with Host.open(cwd=workdir, model="ext:house/probe") as host:
        chat = host.chats.new()["id"]

        async def probe(path: Path) -> str:
            return (await host.chats.send_prompt(f"read={path} port={listener} env=PROBE_SECRET", chat)).text

        # Outside its grants a path is refused, or not there at all (the worker's own root).
        assert await probe(secret) in ("read refused (PermissionError); net refused (PermissionError); "
                                       "env hidden", "read refused (FileNotFoundError); "
                                       "net refused (PermissionError); env hidden")
        assert (await probe(host.home.db_path)).startswith("read refused")
        # Granted to this provider alone, the same read goes through (and nothing else does).
        host.store.add_grant("model:house/probe", "read", str(secret), "always")
        assert await probe(secret) == "read the secret; net refused (PermissionError); env hidden"
        # The grant is the provider's: the house model, asked to do the same, still cannot.
        assert host.store.list_grants("model:house/house") == []
        # It is explained and revoked under the provider's key, like a tool's.
        [row] = host.grants.explain("model:house/probe")
        assert (row["tool"], row["kind"], row["state"]) == ("model:house/probe", "read", "granted")
        assert host.grants.revoke("model:house/probe", "read") == 1
        assert host.grants.explain("model:house/probe")[0]["state"] != "granted"
        assert (await probe(secret)).startswith("read refused")
        with pytest.raises(ToolError, match="no model provider 'nobody'"):
            host.grants.explain("model:house/nobody")


async def test_a_providers_permission_is_asked_for_and_a_denial_ends_the_turn(rivals, workdir, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("buy milk")
    async with Host.open(cwd=workdir, model="ext:acme/guarded") as host:
        refused = await host.chats.send_prompt(str(notes))
        assert refused.status == "error"
        assert "permission denied" in refused.error and "model provider acme/guarded" in refused.error
        assert f"read {notes}" in refused.error
        front = Answering("session")
        host.answer_with(front)
        allowed = await host.chats.send_prompt(str(notes), refused.session_id)
        assert (allowed.status, allowed.text) == ("done", "notes: buy milk")
        [asked] = front.requests
        assert (asked.tool, asked.session_id) == ("model:acme/guarded", refused.session_id)
        assert [(p["kind"], p["value"]) for p in asked.permissions] == [("read", str(notes))]
        # Kept for this chat: asked once.
        await host.chats.send_prompt(str(notes), refused.session_id)
        assert len(front.requests) == 1
        denied = Answering("deny")
        host.answer_with(denied)
        other = await host.chats.send_prompt(str(notes))
        assert other.status == "error" and "permission denied" in other.error
        again = await host.chats.send_prompt(str(notes), other.session_id)
        assert "refused earlier" in again.error and len(denied.requests) == 1


def test_a_bad_provider_entry_is_refused_at_install_with_its_pointer(home, tmp_path):
    folder = provider_extension(tmp_path / "bad", "bad", [
        {"type": "model", "name": "Bad Name", "function": "f"}], "def f(request, ctx):\n    return 'x'\n")
    done = cli("ext", "install", str(folder), "--yes")
    assert done.returncode != 0
    assert "/providers/0/name: \"Bad Name\" is not a valid provider name" in done.stderr
    assert "(line 1, column" in done.stderr
