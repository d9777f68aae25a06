"""``workbench memories add|show|rm``: the person's own memories; shipped ones are read-only."""

from __future__ import annotations

import json
from pathlib import Path

from commands import workbench

from workbench.config.home import Home
from workbench.store import Store

SKILL = "---\nname: packing\ndescription: Pack for a trip from a checklist.\n---\n# Packing\n\n1. Passport.\n"


def shipping_extension(folder: Path) -> Path:
    (folder / "skills" / "release").mkdir(parents=True)
    (folder / "skills" / "release" / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes.\n---\n# Release notes\n")
    (folder / "skills" / "release" / "template.md").write_text("## Added\n")
    (folder / "loca.json").write_text(json.dumps({
        "name": "house-style", "displayName": "House style", "description": "How we write.",
        "memories": [{"kind": "skill", "path": "skills/release"}]}))
    return folder


def test_add_show_and_remove_knowledge_and_skills(tmp_path: Path, home: Home) -> None:
    done = workbench("memories", "add", "Groceries", "--text", "milk, eggs")
    assert (done.returncode, done.stdout) == (0, "Added knowledge 'Groceries'.\n"), done.stderr
    skill = tmp_path / "SKILL.md"
    skill.write_text(SKILL)
    done = workbench("memories", "add", "packing", "--file", str(skill), "--kind", "skill")
    assert (done.returncode, done.stdout) == (0, "Added skill 'packing'.\n"), done.stderr
    done = workbench("memories", "add", "Recipes", "--file", "-", input="# Soup\nBoil water.\n")
    assert done.returncode == 0, done.stderr

    with Store.open(home.db_path) as store:
        assert store.get_memory("Groceries")["content"] == "milk, eggs"
        packing = store.get_memory("packing")
        assert (packing["kind"], packing["summary"]) == ("skill", "Pack for a trip from a checklist.")
        assert store.get_memory("Recipes")["content"] == "# Soup\nBoil water.\n"

    shown = workbench("memories", "show", "packing")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("packing  (skill, yours)\nPack for a trip from a checklist.\n\n---\n")
    assert "1. Passport." in shown.stdout
    as_json = json.loads(workbench("memories", "show", "Groceries", "--json").stdout)
    assert as_json == {"title": "Groceries", "kind": "knowledge", "source": "user", "readOnly": False,
                       "summary": None, "content": "milk, eggs"}

    listed = {m["title"]: m for m in json.loads(workbench("memories", "list", "--json").stdout)}
    assert set(listed) == {"Groceries", "packing", "Recipes"}

    done = workbench("memories", "rm", "Groceries")
    assert (done.returncode, done.stdout) == (0, "Removed 'Groceries'.\n")
    assert "Groceries" not in [m["title"] for m in json.loads(workbench("memories", "list", "--json").stdout)]
    gone = workbench("memories", "rm", "Groceries")
    assert gone.returncode == 1
    assert gone.stderr == "error: no memory titled 'Groceries'; `workbench memories list` shows them\n"
    with Store.open(home.db_path) as store:
        audit = store._all("SELECT actor, action, subject FROM audit_log WHERE action LIKE 'memory.%'")
    assert [(r["action"], r["subject"]) for r in audit] == [
        ("memory.add", "Groceries"), ("memory.add", "packing"), ("memory.add", "Recipes"),
        ("memory.remove", "Groceries")]
    assert {r["actor"] for r in audit} == {"person"}


def test_a_title_in_use_needs_replace_and_replace_can_change_the_kind(home: Home) -> None:
    assert workbench("memories", "add", "Plan", "--text", "first").returncode == 0
    again = workbench("memories", "add", "Plan", "--text", "second")
    assert again.returncode == 1 and "already have a memory titled 'Plan'" in again.stderr
    assert "--replace" in again.stderr
    done = workbench("memories", "add", "Plan", "--text", SKILL, "--kind", "skill", "--replace")
    assert (done.returncode, done.stdout) == (0, "Replaced skill 'Plan'.\n"), done.stderr
    with Store.open(home.db_path) as store:
        row = store.get_memory("Plan")
    assert (row["kind"], row["content"], row["summary"]) == ("skill", SKILL, "Pack for a trip from a checklist.")


def test_bad_input_is_a_usage_error(tmp_path: Path, home: Home) -> None:
    both = workbench("memories", "add", "X", "--text", "a", "--file", str(tmp_path / "f"))
    assert both.returncode == 2 and "--file FILE or --text TEXT" in both.stderr
    neither = workbench("memories", "add", "X")
    assert neither.returncode == 2 and "--file FILE or --text TEXT" in neither.stderr
    no_description = workbench("memories", "add", "X", "--text", "# Steps\n1. Go.", "--kind", "skill")
    assert no_description.returncode == 2 and "front matter gives its description" in no_description.stderr
    kind = workbench("memories", "add", "X", "--text", "a", "--kind", "recipe")
    assert kind.returncode == 2 and "knowledge or a skill, not 'recipe'" in kind.stderr
    folder = workbench("memories", "add", "X", "--file", str(tmp_path))
    assert folder.returncode == 2 and "is a folder" in folder.stderr
    missing = workbench("memories", "add", "X", "--file", str(tmp_path / "nope.md"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    empty = workbench("memories", "add", "X", "--text", "  ")
    assert empty.returncode == 2 and "has no text" in empty.stderr
    with Store.open(home.db_path) as store:
        assert store.list_memories() == []


def test_shipped_memories_show_but_cannot_be_removed_or_overwritten(tmp_path: Path, home: Home) -> None:
    done = workbench("ext", "install", str(shipping_extension(tmp_path / "style")), "--yes")
    assert done.returncode == 0, done.stderr

    shown = json.loads(workbench("memories", "show", "release-notes", "--json").stdout)
    assert (shown["readOnly"], shown["source"], shown["extension"]) == (True, "extension:house-style",
                                                                       "house-style")
    assert shown["files"] == ["template.md"] and shown["content"].startswith("---\nname: release-notes")
    plain = workbench("memories", "show", "release-notes").stdout
    assert plain.startswith("release-notes  (skill, read-only, from house-style)\n")
    assert plain.rstrip().endswith("Files: template.md")

    removed = workbench("memories", "rm", "release-notes")
    assert removed.returncode == 3
    assert removed.stderr == ("error: 'release-notes' ships with the extension house-style and is "
                              "read-only: it cannot be removed on its own; it goes with the extension "
                              "(`workbench ext remove house-style`)\n")
    taken = workbench("memories", "add", "release-notes", "--text", "mine")
    assert taken.returncode == 1 and "ships with the extension house-style" in taken.stderr
    assert workbench("memories", "show", "nothing").returncode == 1
