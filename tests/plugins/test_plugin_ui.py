"""What a plugin shows in the terminal, through the core: its pane (a card document it
serves, whose actions call its tools and actions as the person), the cards it posts
(notifications of the drawer, unread until read), and its composer switches (per
chat, kept across a restart; changed by the plugin too). Hostile documents are refused
with their JSON pointer, and never reach the drawer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from plugin_folders import EXAMPLE, trusted_project
from waits import until
from workbench.cards import FactSet
from workbench.core.host import Host
from workbench.core.plugin_service import open_plugins
from workbench.errors import WorkbenchError
from workbench.plugins.http import request

pytestmark = pytest.mark.slow


async def api(host: Host, method: str, path: str, body: object) -> tuple[int, object]:
    token = next(iter(host.plugins.tokens))
    answer = await request("127.0.0.1", host.plugins.api.port, method, "/api/plugin/v1" + path, token=token,
                           body=body, timeout=10, max_bytes=1 << 20)
    return answer.status, json.loads(answer.body)


async def test_pane_cards_and_switches(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    await (service := open_plugins(project)).install(service.plan(EXAMPLE))
    host = Host.open(cwd=project)
    try:
        ui = host.plugin_ui
        assert [(p.plugin, p.id, p.label) for p in ui.panes()] == [("echo", "main", "Echo")]
        pane = await ui.pane("echo", "main")
        facts = next(e for e in pane.body if isinstance(e, FactSet))
        assert [(f.title, f.value) for f in facts.facts] == [("Pings", "0"), ("Runs", "0")]
        assert [a.verb for a in pane.actions] == ["score", "card"]
        assert "score" in await ui.pane_action("echo", "score", {"answer": "hello"})
        with pytest.raises(WorkbenchError, match="neither a tool nor an action"):
            await ui.pane_action("echo", "rm -rf", {})
        with pytest.raises(WorkbenchError, match="no pane"):
            await ui.pane("echo", "../etc")

        before = len(host.schedules.notifications(unread_only=True))
        assert await ui.pane_action("echo", "card", {}) == "card: accepted"
        await until(lambda: len(host.schedules.notifications(unread_only=True)) > before, "the card posted")
        [note] = [n for n in host.schedules.notifications() if n["source"] == "plugin:echo"]
        assert note["title"] == "Echo: A card from Echo" and "Hello from the echo plugin" in note["body"]
        plugin, card = ui.card(note["id"])
        assert plugin == "echo" and card.body

        # Hostile cards: refused with where, nothing kept.
        bad = [{"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "Media", "sources": []}]},
               {"type": "AdaptiveCard", "version": "1.5",
                "body": [{"type": "Image", "url": "https://tracker.example/p.png"}]},
               "not a card"]
        for card_doc in bad:
            status, body = await api(host, "POST", "/cards", {"title": "x", "card": card_doc})
            assert status == 400 and "card" in body["error"], body
        assert len([n for n in host.schedules.notifications() if n["source"] == "plugin:echo"]) == 1
        # A plugin that floods the drawer is answered 429 past the hour's cards.
        ok = {"title": "flood", "card": {"type": "AdaptiveCard", "version": "1.5", "body": []}}
        statuses = [(await api(host, "POST", "/cards", ok))[0] for _ in range(60)]
        assert statuses.count(201) == 59 and statuses[-1] == 429

        chat = host.chats.new()["id"]
        [pill] = ui.switches(chat)
        assert (pill.id, pill.label, pill.title, pill.on) == ("mode", "Mode", "Mode is off", False)
        turned = await ui.turn_switch(chat, "echo", "mode", True)
        assert (turned.on, turned.title, turned.state) == (True, "Mode is on", "idle")
        status, _ = await api(host, "PUT", "/composer/switches/mode",
                              {"thread_id": chat, "state": "busy", "title": "Working\x1b[31m"})
        assert status == 200
        assert (ui.switches(chat)[0].state, ui.switches(chat)[0].title) == ("busy", "Working[31m")
        assert (await api(host, "PUT", "/composer/switches/other", {"thread_id": chat}))[0] == 404
        assert (await api(host, "PUT", "/composer/switches/mode", {"thread_id": "not-a-chat"}))[0] == 404
        other = host.chats.new()["id"]
        assert ui.switches(other)[0].on is False  # state is per chat
    finally:
        await host.aclose()
    with Host.open(cwd=project) as again:  # kept across a restart
        assert again.plugin_ui.switches(chat)[0].on is True


async def test_the_web_bundle_is_served_under_the_seeds_policy_with_the_bridge(home, workdir: Path) -> None:
    project = trusted_project(home, workdir, "echo")
    await (service := open_plugins(project)).install(service.plan(EXAMPLE))
    host = Host.open(cwd=project)

    async def get(url: str, method: str = "GET", body: object = None) -> tuple[int, dict, bytes]:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        data = b"" if body is None else json.dumps(body).encode()
        writer.write(f"{method} {parts.path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
        raw = await reader.read()
        writer.close()
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        return int(lines[0].split()[1]), headers, rest

    try:
        url = await host.plugin_ui.web_url("echo", "main")
        status, headers, page = await get(url)
        assert status == 200 and b"sandbox=allow-scripts" in page and b"host.js" in page
        status, headers, body = await get(url + "ui/main/index.html")
        assert status == 200 and headers["content-security-policy"].startswith("sandbox allow-scripts;")
        assert "default-src 'none'" in headers["content-security-policy"] and "frame-src 'none'" in headers[
            "content-security-policy"]
        for hostile in ("ui/../plugin.json", "ui/%2e%2e/server.py", "plugin.json", "ui/main/../../server.py"):
            assert (await get(url + hostile))[0] == 404, hostile
        assert (await get(url.replace(host.plugin_ui.web.token, "guess") + "ui/main/index.html"))[0] == 404
        status, _, answer = await get(url + "bridge", "POST", {"jsonrpc": "2.0", "id": 1, "method": "api.request",
                                                                "params": {"path": "/pings"}})
        assert status == 200 and json.loads(answer) == {"jsonrpc": "2.0", "id": 1,
                                                         "result": {"status": 200, "body": {"pings": 0}}}
        _, _, answer = await get(url + "bridge", "POST", {"jsonrpc": "2.0", "id": 2, "method": "fs.read"})
        assert json.loads(answer)["error"]["message"].startswith("the bridge has no method")
        with pytest.raises(WorkbenchError, match="no panel"):
            await host.plugin_ui.web_url("echo", "other")
    finally:
        host.plugin_ui.web.close()
        await host.aclose()
