"""``workbench memories list``: the user's memories and the read-only ones extensions ship."""

from __future__ import annotations

import json
from pathlib import Path

from commands import workbench

from workbench.config.home import Home
from workbench.store import Store


def _knowledge_extension(folder: Path) -> Path:
    """An extension holding only knowledge and a skill: valid on its own."""
    (folder / "knowledge").mkdir(parents=True)
    (folder / "knowledge" / "style.md").write_text("# House style\n\nShort sentences.\n")
    (folder / "skills" / "release").mkdir(parents=True)
    (folder / "skills" / "release" / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from a changelog.\n---\n"
        "# Release notes\n")
    (folder / "skills" / "release" / "template.md").write_text("## Added\n")
    (folder / "loca.json").write_text(json.dumps({
        "name": "house-style", "displayName": "House style", "description": "How we write.",
        "memories": [{"kind": "knowledge", "path": "knowledge/style.md"},
                     {"kind": "skill", "path": "skills/release"}]}))
    return folder


def test_lists_the_users_memories_and_the_shipped_ones(tmp_path: Path, home: Home) -> None:
    done = workbench("ext", "install", str(_knowledge_extension(tmp_path / "style")), "--yes")
    assert done.returncode == 0, done.stderr
    with Store.open(home.db_path) as store:
        store.put_memory("Groceries", "milk", summary="What to buy.")

    done = workbench("memories", "list", "--json")
    assert done.returncode == 0, done.stderr
    found = {m["title"]: m for m in json.loads(done.stdout)}
    assert set(found) == {"Groceries", "House style", "release-notes"}
    assert found["Groceries"]["readOnly"] is False and "extension" not in found["Groceries"]
    assert found["Groceries"]["summary"] == "What to buy."
    assert {k: found["House style"][k] for k in ("kind", "readOnly", "extension")} == {
        "kind": "knowledge", "readOnly": True, "extension": "house-style"}
    assert {k: found["release-notes"][k] for k in ("kind", "readOnly", "extension", "summary")} == {
        "kind": "skill", "readOnly": True, "extension": "house-style",
        "summary": "Write release notes from a changelog."}

    plain = workbench("memories", "list")
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert any(line.startswith("Groceries ") and line.endswith("  yours") for line in lines)
    assert any(line.startswith("release-notes ") and "skill" in line
               and line.endswith("read-only, from house-style") for line in lines)

    assert workbench("ext", "remove", "house-style", "--yes").returncode == 0
    after = [m["title"] for m in json.loads(workbench("memories", "list", "--json").stdout)]
    assert after == ["Groceries"]


def test_no_memories() -> None:
    done = workbench("memories", "list")
    assert (done.returncode, done.stdout) == (0, "No memories yet.\n")
    assert json.loads(workbench("memories", "list", "--json").stdout) == []
