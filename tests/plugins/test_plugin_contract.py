"""Both halves of the contract, written down as OpenAPI 3.1 documents in docs/openapi/,
checked against the code: the host's Plugin API routes and capabilities, its answers,
and the SDK-built example plugin driven through the whole contract by the test kit
(`workbench_plugin_sdk.testing`), each answer matching the document's schema."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from plugin_folders import EXAMPLE, trusted_project
from workbench.core.host import Host
from workbench.core.plugin_service import open_plugins
from workbench.plugins.api import PREFIX, ROUTES
from workbench.plugins.http import request
from workbench_plugin_sdk import read_manifest
from workbench_plugin_sdk.testing import FakeHost, check

pytestmark = pytest.mark.slow
DOCS = Path(__file__).resolve().parents[2] / "docs" / "openapi"


def document(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((DOCS / name).read_text(encoding="utf-8"))
    assert doc["openapi"] == "3.1.0"
    return doc


def operation(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    for pattern, item in doc["paths"].items():
        parts, given = pattern.strip("/").split("/"), path.strip("/").split("/")
        if len(parts) == len(given) and all(p.startswith("{") or p == g for p, g in zip(parts, given)):
            if method.lower() in item:
                return item[method.lower()]
    raise AssertionError(f"{method} {path} is not in the document")


def problems(doc: dict[str, Any], method: str, path: str, status: int, body: Any) -> list[str]:
    responses = operation(doc, method, path)["responses"]
    response = responses.get(str(status), responses.get("default"))
    assert response is not None, f"{method} {path} answered {status}, which the document does not name"
    if "$ref" in response:
        response = doc["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    schema = response["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": doc["components"]})
    return [f"{method} {path} {status}: {e.message}" for e in validator.iter_errors(body)]


def test_the_documents_name_every_route_with_its_capabilities() -> None:
    api = document("plugin-api-v1.yaml")
    for (method, path), needed in ROUTES.items():
        assert set(operation(api, method, path)["x-capabilities"]) == set(needed), (method, path)
    contract = document("plugin-contract-v1.yaml")
    assert problems(contract, "POST", "/switches/x", 200, {"on": "yes"})  # the check can fail
    for path in ("/healthz", "/tools/x", "/actions/x", "/runs/x/done", "/events", "/switches/x", "/x/panes/x"):
        assert operation(contract, "GET" if path in ("/healthz", "/x/panes/x") else "POST", path)


async def test_the_hosts_answers_match_the_plugin_api_document(home, workdir: Path) -> None:
    api = document("plugin-api-v1.yaml")
    project = trusted_project(home, workdir, "echo")
    await (service := open_plugins(project)).install(service.plan(EXAMPLE))
    host = Host.open(cwd=project)
    try:
        await host.plugins.call_tool("echo", "score", {"answer": "a"})  # its instance, and its token
        token = next(iter(host.plugins.tokens))
        chat = host.chats.new()["id"]
        card = {"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": "hi"}]}
        calls = [("GET", "/channel", None), ("POST", "/notifications", {"title": "x"}),
                 ("POST", "/cards", {"title": "t", "card": card}), ("POST", "/cards", {"title": "t", "card": {}}),
                 ("POST", "/runs", {"agent": "nobody", "prompt": "p"}),
                 ("PUT", "/composer/switches/mode", {"thread_id": chat, "on": True}),
                 ("DELETE", "/composer/switches/mode", {"thread_id": chat})]
        seen, found = [], []
        for method, path, body in calls:
            answer = await request("127.0.0.1", host.plugins.api.port, method, PREFIX + path, token=token,
                                   body=body, timeout=10, max_bytes=1 << 20)
            seen.append(answer.status)
            found += problems(api, method, path, answer.status, json.loads(answer.body))
        assert seen == [200, 403, 201, 400, 404, 200, 200] and found == []
    finally:
        await host.aclose()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_example_passes_the_kits_check(tmp_path: Path) -> None:
    manifest = read_manifest(str(EXAMPLE / "plugin.json"))
    fake = FakeHost(manifest).start()
    port, secret = free_port(), "a-secret"
    env = {**os.environ, **fake.env(tmp_path / "run", port, secret)}
    server = subprocess.Popen([sys.executable, "server.py"], cwd=EXAMPLE, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:  # until it listens
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read() if server.stderr else ""
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)

        def settle() -> None:  # the actions run in the background: their calls come
            end = time.monotonic() + 30
            while len(fake.runs) < 3 or len(fake.cards) < 3:
                assert time.monotonic() < end, (fake.runs, fake.cards, fake.calls)
                time.sleep(0.05)

        report = check(url, secret, manifest, host=fake, settle=settle)
        assert report.problems == []
        contract = document("plugin-contract-v1.yaml")
        assert [p for a in report.answers for p in problems(contract, a.method, a.path, a.status, a.body)] == []
        assert {r["agent"] for r in fake.runs} == {"say"} and fake.cards[0]["title"] == "A card from Echo"
        # The fake holds a plugin to its manifest: what it did not ask for is refused.
        status, _ = fake.handle("POST", PREFIX + "/notifications", f"Bearer {fake.token}", b'{"title": "x"}')
        assert status == 403
        assert fake.handle("GET", PREFIX + "/channel", "Bearer wrong", b"")[0] == 401
    finally:
        server.kill()
        server.wait()
        fake.close()
