"""A headless turn's ``--grant`` flags, tried by tools that want more than was granted:
a tool declaring the whole filesystem, the home or the granted folder's parent is not
covered by a grant of one folder; a tool granted that folder reads nothing outside it;
a grant for one tool is no grant for its sibling. Real host, real sandboxed workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.core.run_grants import resolve_run_grants
from workbench.headless.responder import HeadlessResponder

CODE = '''
def peek(args, ctx):
    try:
        with open(args["path"]) as handle:
            return {"text": handle.read()}
    except OSError as exc:
        return {"refused": type(exc).__name__}
'''


def tool(name: str, path: str) -> dict:
    return {"name": name, "description": f"Peek ({name}).", "function": "peek",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            "permissions": {"read": [{"path": path, "reason": "Peek."}]}}


@pytest.fixture
def lab(tmp_path: Path) -> dict:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("the docs")
    (tmp_path / "secret.txt").write_text("the combination")
    source = tmp_path / "hostile"
    source.mkdir()
    (source / "main.py").write_text(CODE)
    (source / "loca.json").write_text(json.dumps({
        "name": "hostile", "displayName": "Hostile", "description": "Wants more.", "entry": "main.py",
        "tools": [tool("everything", "/"), tool("home", "$home"), tool("parent", str(tmp_path)),
                  tool("docs", str(docs)), tool("sibling", str(docs))]}))
    return {"docs": docs, "secret": tmp_path / "secret.txt", "source": source}


async def call(host: Host, name: str, path: Path):
    return await host.tools.call(name, {"path": str(path)}, CallOptions(prompt=True))


async def test_a_grant_of_one_folder_covers_no_tool_that_asks_for_more(lab, workdir):
    with Host.open(cwd=workdir) as host:
        host.extensions.install(str(lab["source"]), lambda plan: True)
        grants = resolve_run_grants(host, [f"read:{lab['docs']}", f"hostile.docs:read:{lab['docs']}"])
        host.answer_with(HeadlessResponder("deny", grants=grants[:1]))
        for name in ("everything", "home", "parent"):
            outcome = await call(host, name, lab["secret"])
            assert not outcome.ok and outcome.error["kind"] == "permission", (name, outcome)
            assert "the combination" not in json.dumps(outcome.to_json())
        granted = await call(host, "docs", lab["docs"] / "a.txt")
        assert granted.ok and granted.result == {"text": "the docs"}
        # Within the grant's folder only: the file beside it does not exist for the tool.
        outside = await call(host, "docs", lab["secret"])
        assert outside.ok and outside.result == {"refused": "FileNotFoundError"}
        through = await call(host, "docs", lab["docs"] / ".." / "secret.txt")
        assert "the combination" not in json.dumps(through.to_json())
        # Nothing was kept: a turn without the flag is refused again.
        host.answer_with(HeadlessResponder("deny"))
        assert (await call(host, "docs", lab["docs"] / "a.txt")).error["kind"] == "permission"


async def test_a_grant_for_one_tool_is_no_grant_for_its_sibling(lab, workdir):
    with Host.open(cwd=workdir) as host:
        host.extensions.install(str(lab["source"]), lambda plan: True)
        grants = resolve_run_grants(host, [f"hostile.docs:read:{lab['docs']}"])
        assert [(g.kind, g.value, g.tool) for g in grants] == [("read", str(lab["docs"]), "hostile.docs")]
        host.answer_with(HeadlessResponder("deny", grants=grants))
        assert (await call(host, "docs", lab["docs"] / "a.txt")).ok
        sibling = await call(host, "sibling", lab["docs"] / "a.txt")
        assert not sibling.ok and sibling.error["kind"] == "permission"
