"""Extensions' pages through the real CLI, a real host and real sandboxed workers: listed
from the manifest, opened by calling the extension's own tool as the person, acted on
through the tools its manifest declares — and never through any other tool, whatever its
card says."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from page_samples import PLANNER, PLANNER_MAIN, install_samples, write

from commands import workbench

from workbench.core.host import Host
from workbench.core.pages import PageError


def test_a_page_opens_and_its_action_runs_as_the_person(tmp_path: Path) -> None:
    install_samples(tmp_path / "src")
    listed = workbench("ext", "pages", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(row["extension"], row["id"], row["tool"]) for row in json.loads(listed.stdout)] == [
        ("planner", "main", "board"), ("planner", "hostile", "hostile"), ("planner", "broken", "broken"),
        ("planner", "text", "not-a-card")]
    assert "planner/main     Planner  (Planner)" in workbench("ext", "pages", "planner").stdout
    unknown = workbench("ext", "pages", "nothing")
    assert unknown.returncode == 1 and "no extension named 'nothing'" in unknown.stderr

    opened = workbench("ext", "page", "planner", "main")
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.splitlines()[:2] == ["To do", "Items: 0"]
    assert "[Add] (item-add)  [Clear] (item-clear)" in opened.stdout

    # A required input left empty is named, and nothing runs.
    missing = workbench("ext", "page", "planner", "main", "--action", "item-add")
    assert missing.returncode == 1 and "title: New item is required" in missing.stderr
    added = workbench("ext", "page", "planner", "main", "--action", "item-add",
                      "--data", '{"title": "Buy milk", "done": true}')
    assert added.returncode == 0, added.stderr
    assert '"added": "Buy milk"' in added.stdout
    assert "Buy milk | yes" in added.stdout and "Items: 1" in added.stdout
    # The tool's own schema still holds: the gateway checks the merged data.
    too_long = workbench("ext", "page", "planner", "main", "--action", "item-add", "--data",
                         json.dumps({"title": "x" * 41}))
    assert too_long.returncode == 1 and "at most 40 characters" in too_long.stderr
    as_json = json.loads(workbench("ext", "page", "planner", "main", "--json").stdout)
    assert as_json["page"]["id"] == "main" and as_json["card"]["type"] == "AdaptiveCard"
    # A person-only tool of the page's own extension is the person's to run.
    cleared = workbench("ext", "page", "planner", "main", "--action", "item-clear", "--json")
    assert cleared.returncode == 0, cleared.stderr
    outcome = json.loads(cleared.stdout)
    assert outcome["ok"] and outcome["result"] == {"cleared": 1} and outcome["verb"] == "item-clear"
    no_action = workbench("ext", "page", "planner", "main", "--action", "item-remove")
    assert no_action.returncode == 1 and "offers no action 'item-remove'" in no_action.stderr

    broken = workbench("ext", "page", "planner", "broken")
    assert broken.returncode == 1
    assert "page planner/broken: the card#/body/0/type: 'Media' is not an element" in broken.stderr
    text = workbench("ext", "page", "planner", "text")
    assert text.returncode == 1 and "its tool not-a-card returned no card" in text.stderr
    missing_page = workbench("ext", "page", "planner", "calendar")
    assert missing_page.returncode == 1 and "its pages: main, hostile, broken, text" in missing_page.stderr


def test_a_page_never_gains_a_tool_its_manifest_does_not_declare(tmp_path: Path) -> None:
    install_samples(tmp_path / "src")
    shown = workbench("ext", "page", "planner", "hostile")
    assert shown.returncode == 0, shown.stderr
    # The card's escapes reach the terminal as visible text, never as sequences.
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout and "\x9b" not in shown.stdout
    assert "\\u001b]0;owned\\u0007\\u001b[2JHostile \\u202epage" in shown.stdout
    for verb in ("read_file", "other-secret", "other.other-secret", "wipe"):
        refused = workbench("ext", "page", "planner", "hostile", "--action", verb)
        assert refused.returncode == 1, (verb, refused.stdout)
        assert f"'{verb}' is not a tool of planner" in refused.stderr
        assert "secret" not in refused.stdout and "root:" not in refused.stdout

    async def core() -> None:
        with Host.open(cwd=tmp_path) as host:
            # The core refuses whatever a face hands it: built-ins, another extension's
            # tools by any name, person-only ones, undeclared exports, the add-on namespace.
            for verb in ("read_file", "builtin.read_file", "other-secret", "other.other-secret",
                         "planner.other-secret", "addon__other__other-secret", "wipe", "planner.wipe",
                         "../other-secret", ""):
                with pytest.raises(PageError, match="is not a tool of planner"):
                    await host.pages.act("planner", "main", verb, {})
            with pytest.raises(PageError, match="JSON object"):
                await host.pages.act("planner", "main", "item-add", ["title"])
            with pytest.raises(PageError, match="lone surrogate"):
                await host.pages.act("planner", "main", "item-add", {"title": "\ud800"})
            done = await host.pages.act("planner", "main", "item-add", {"title": "From the core"})
            assert done.outcome.ok and done.reopened is not None
            assert "From the core" in [item.text for element in done.reopened.card.elements()
                                       for item in [element] if hasattr(item, "text")]

    asyncio.run(core())


def test_a_page_naming_a_tool_outside_its_manifest_does_not_install(tmp_path: Path) -> None:
    manifest = {**PLANNER, "name": "planner2",
                "pages": [{"id": "main", "title": "x", "tool": "read_file"},
                          {"id": "main", "title": "y", "tool": "board"},
                          {"id": "Bad Id", "title": " ", "tool": "board"}]}
    folder = write(tmp_path / "planner2", manifest, PLANNER_MAIN)
    checked = workbench("ext", "validate", str(folder), "--json")
    assert checked.returncode == 1
    errors = {problem["pointer"]: problem["message"] for problem in json.loads(checked.stdout)["errors"]}
    assert "is not a tool of this extension" in errors["/pages/0/tool"]
    assert "already used by /pages/0" in errors["/pages/1/id"]
    assert "/pages/2/id" in errors and "/pages/2/title" in errors
    refused = workbench("ext", "install", str(folder), "--yes")
    assert refused.returncode != 0 and "/pages/0/tool" in refused.stderr
