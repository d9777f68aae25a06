"""Updates: the consent diff with reasons, declining keeps the old version, the swap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ext_samples import extension_rows, no, tool, tree, write_extension, yes

from workbench.config.home import Home
from workbench.ext.consent import diff_consent
from workbench.ext.errors import ExtensionError, InstallDeclined
from workbench.ext.manager import ExtensionManager
from workbench.ext.plan import InstallPlan
from workbench.store import Store

NAME = "loca-extension-foo"

V1 = {
    "read": [{"path": "$home/Documents", "reason": "Read the notes you point at."}],
    "net": [{"host": "example.com", "ports": [443], "reason": "Fetch the page you ask for."}],
    "env": [{"key": "FOO_TOKEN", "reason": "Sign in to Foo."}],
}
V2 = {
    "read": [{"path": "$home", "reason": "Read any file in your home folder."}],
    "net": [{"host": "*", "ports": [443, 80], "reason": "Fetch pages from any site."}],
    "run": [{"binary": "git", "reason": "Read the history of your repositories."}],
}


def _versions(tmp_path: Path) -> tuple[Path, Path]:
    v1 = write_extension(tmp_path / "v1", version="1.0.0", tools=[tool("foo", V1), tool("bar")])
    v2 = write_extension(tmp_path / "v2", version="2.0.0", tools=[tool("foo", V2), tool("baz")])
    return v1, v2


def test_update_shows_widened_permissions_with_reasons(manager: ExtensionManager,
                                                       tmp_path: Path) -> None:
    v1, v2 = _versions(tmp_path)
    manager.install(str(v1), approve=yes)
    plan = manager.plan_update(NAME, source=str(v2))
    try:
        diff = plan.diff
        assert plan.action == "update" and plan.previous_version == "1.0.0"
        assert diff.tools_added == ("baz",) and diff.tools_removed == ("bar",)
        changes = {(c.tool, c.change, c.kind): c for c in diff.permissions}
        read = changes[("foo", "widened", "read")]
        assert (read.previous, read.value, read.reason) == (
            "$home/Documents", "$home", "Read any file in your home folder.")
        net = changes[("foo", "widened", "net")]
        assert (net.previous, net.value, net.reason) == (
            "example.com:443", "*:443,80", "Fetch pages from any site.")
        run = changes[("foo", "added", "run")]
        assert (run.value, run.reason) == ("git", "Read the history of your repositories.")
        env = changes[("foo", "removed", "env")]
        assert (env.value, env.reason) == ("FOO_TOKEN", "Sign in to Foo.")
        assert diff.widens and not diff.empty
        text = "\n".join(plan.describe())
        assert "Update Loca Extension Foo (loca-extension-foo 1.0.0 -> 2.0.0)" in text
        assert ("permission widened: foo: read $home/Documents -> $home — "
                "Read any file in your home folder.") in text
        assert "permission added: foo: run git — Read the history of your repositories." in text
        assert "tool added: baz" in text and "tool removed: bar" in text
    finally:
        manager.discard(plan)


def test_declining_an_update_keeps_the_old_version_intact(manager: ExtensionManager, home: Home,
                                                          store: Store, tmp_path: Path) -> None:
    v1, v2 = _versions(tmp_path)
    manager.install(str(v1), approve=yes)
    (home.extensions_dir / NAME / "data.db").write_bytes(b"the user's rows")
    before_tree, before_rows = tree(home.root), extension_rows(store)
    with pytest.raises(InstallDeclined, match="1.0.0 stays installed"):
        manager.update(NAME, source=str(v2), approve=no)
    assert tree(home.root) == before_tree
    assert extension_rows(store) == before_rows
    assert manager.get(NAME).state == "ok" and manager.get(NAME).version == "1.0.0"


def test_accepted_update_swaps_files_and_keeps_the_private_database(
        manager: ExtensionManager, home: Home, store: Store, tmp_path: Path) -> None:
    v1, v2 = _versions(tmp_path)
    first = manager.install(str(v1), approve=yes)
    (first.path / "data.db").write_bytes(b"the user's rows")
    (v2 / "only-in-v2.txt").write_text("new")
    seen: list[InstallPlan] = []
    updated = manager.update(NAME, source=str(v2), approve=lambda p: seen.append(p) or True)
    assert updated.version == "2.0.0" and updated.state == "ok"
    assert updated.tools == ("foo", "baz") and updated.source == str(v2)
    assert (updated.path / "data.db").read_bytes() == b"the user's rows"
    assert (updated.path / "only-in-v2.txt").is_file()
    consent = store.get_consent(NAME)
    assert consent["digest"] == updated.digest == seen[0].digest
    assert consent["approved"]["tools"]["foo"]["run"][0]["binary"] == "git"
    assert not (home.root / "staging").exists()
    assert store.get_extension(NAME)["installed_at"] <= store.get_extension(NAME)["updated_at"]


def test_update_from_the_recorded_source(manager: ExtensionManager, tmp_path: Path) -> None:
    v1, _ = _versions(tmp_path)
    manager.install(str(v1), approve=yes)
    manifest = json.loads((v1 / "loca.json").read_text())
    manifest["description"] = "Now better."
    (v1 / "loca.json").write_text(json.dumps(manifest))
    (v1 / "package.json").write_text(json.dumps({"version": "1.0.1"}))
    plans: list[InstallPlan] = []
    updated = manager.update(NAME, approve=lambda p: plans.append(p) or True)
    assert updated.version == "1.0.1"
    assert plans[0].diff is not None and plans[0].diff.empty
    assert "no change in tools, permissions or hooks" in "\n".join(plans[0].describe())


def test_a_failed_update_restores_the_old_version(manager: ExtensionManager, home: Home,
                                                  store: Store, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    v1, v2 = _versions(tmp_path)
    manager.install(str(v1), approve=yes)
    (home.extensions_dir / NAME / "data.db").write_bytes(b"rows")
    before_tree, before_rows = tree(home.root), extension_rows(store)

    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "record_consent", broken)
    with pytest.raises(OSError, match="No space left"):
        manager.update(NAME, source=str(v2), approve=yes)
    assert tree(home.root) == before_tree
    assert extension_rows(store) == before_rows


def test_update_refuses_another_extension(manager: ExtensionManager, tmp_path: Path) -> None:
    v1, _ = _versions(tmp_path)
    manager.install(str(v1), approve=yes)
    other = write_extension(tmp_path / "other", name="loca-extension-other")
    with pytest.raises(ExtensionError, match="holds the extension 'loca-extension-other'"):
        manager.update(NAME, source=str(other), approve=yes)
    assert not any((manager.home.root / "staging").glob("*"))


def test_update_of_what_is_not_installed(manager: ExtensionManager) -> None:
    with pytest.raises(ExtensionError, match="nope is not installed"):
        manager.update("nope", approve=yes)


def test_update_when_the_recorded_source_is_gone(manager: ExtensionManager,
                                                 tmp_path: Path) -> None:
    v1, _ = _versions(tmp_path)
    manager.install(str(v1), approve=yes)
    (v1 / "loca.json").unlink()
    for path in v1.iterdir():
        path.unlink()
    v1.rmdir()
    with pytest.raises(ExtensionError, match="recorded source cannot be used.*--source"):
        manager.update(NAME, approve=yes)


def _consent(tools: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"tools": tools, "hooks": [], "database": False, **extra}


@pytest.mark.parametrize(("old", "new", "expected"), [
    ({"read": [{"path": "/data/a", "reason": "r"}]},
     {"read": [{"path": "/data", "reason": "r2"}]},
     [("widened", "read", "/data/a", "/data")]),
    ({"read": [{"path": "/data", "reason": "r"}]},
     {"read": [{"path": "/data/a", "reason": "r"}]},
     [("narrowed", "read", "/data", "/data/a")]),
    ({"read": [{"path": "/data/ab", "reason": "r"}]},
     {"read": [{"path": "/data/a", "reason": "r"}]},
     [("added", "read", "", "/data/a"), ("removed", "read", "", "/data/ab")]),
    ({"net": [{"host": "a.com", "ports": [443], "reason": "r"}]},
     {"net": [{"host": "a.com", "ports": [443], "reason": "r"},
              {"host": "b.com", "ports": [443], "reason": "r"}]},
     [("added", "net", "", "b.com:443")]),
    ({"net": [{"host": "a.com", "ports": [443, 80], "reason": "r"}]},
     {"net": [{"host": "a.com", "ports": [443], "reason": "r"}]},
     [("narrowed", "net", "a.com:443,80", "a.com:443")]),
    ({"memories": {"access": "read", "reason": "r"}},
     {"memories": {"access": "write", "reason": "r"}},
     [("widened", "memories", "read", "write")]),
    ({"llm": {"reason": "r", "optional": True}}, {"llm": {"reason": "r"}},
     [("widened", "llm", " (optional)", "")]),
    ({"write": [{"path": "$downloads", "reason": "r"}]},
     {"write": [{"path": "$downloads/", "reason": "other words"}]}, []),
    ({}, {"tts": {"reason": "Read answers aloud."}}, [("added", "tts", "", "")]),
])
def test_permission_changes(old: dict, new: dict, expected: list) -> None:
    diff = diff_consent(_consent({"t": old}), _consent({"t": new}))
    assert [(c.change, c.kind, c.previous, c.value) for c in diff.permissions] == expected


def test_hooks_and_database_changes() -> None:
    diff = diff_consent(_consent({}, hooks=["before_tool_call"]),
                        _consent({}, hooks=["after_turn"], database=True))
    assert diff.hooks_added == ("after_turn",) and diff.hooks_removed == ("before_tool_call",)
    assert diff.database == "added" and diff.widens
    assert "private database added" in diff.describe()


def test_provider_changes_are_part_of_the_consent_diff() -> None:
    probe = {"read": [{"path": "$home/secret.txt", "reason": "Read the secret."}]}
    old = _consent({}, providers={"model provider house": {}})
    new = _consent({}, providers={"model provider house": probe, "search provider web": {}})
    diff = diff_consent(old, new)
    assert diff.providers_added == ("search provider web",) and diff.providers_removed == ()
    assert [(c.tool, c.change, c.kind, c.value) for c in diff.permissions] == [
        ("model provider house", "added", "read", "$home/secret.txt")]
    assert diff.widens and "added: search provider web" in diff.describe()
    assert diff_consent(new, old).providers_removed == ("search provider web",)
    assert not diff_consent(new, old).widens


def test_a_plan_shows_each_provider_with_its_permissions(manager: ExtensionManager) -> None:
    house = Path(__file__).resolve().parents[2] / "fixtures" / "extensions" / "house"
    plan = manager.plan(str(house))
    try:
        assert [provider.name for provider in plan.providers] == [
            "model provider house", "model provider probe", "memory provider team",
            "search provider web"]
        text = "\n".join(plan.describe())
        assert "Providers:\n  model provider house — a model chats can talk to" in text
        assert ("    read $home/secret.txt (optional): Read the secret, when you allow it."
                in text)
        assert plan.consent["providers"]["model provider probe"]["read"][0]["path"] == (
            "$home/secret.txt")
        assert plan.to_json()["providers"][3]["name"] == "search provider web"
    finally:
        manager.discard(plan)


def test_an_update_says_when_a_tool_becomes_model_visible_or_an_action(manager: ExtensionManager,
                                                                       tmp_path: Path) -> None:
    undo = {**tool("undo"), "audience": "person"}
    v1 = write_extension(tmp_path / "v1", version="1.0.0", tools=[tool("add"), undo, tool("list")])
    v2 = write_extension(tmp_path / "v2", version="2.0.0", tools=[
        {**tool("add"), "action": True}, tool("undo"), tool("list")])
    manager.install(str(v1), approve=yes)
    plan = manager.plan_update(NAME, source=str(v2))
    try:
        diff = plan.diff
        assert [(r.tool, r.field, r.previous, r.value) for r in diff.roles] == [
            ("add", "action", False, True), ("undo", "audience", "person", "everyone")]
        assert diff.widens and not diff.empty and not diff.permissions
        text = "\n".join(plan.describe())
        assert "tool role: undo: now offered to models" in text
        assert "tool role: add: now an action tool (changes what it keeps for you)" in text
        assert plan.to_json()["diff"]["roles"][1] == {
            "tool": "undo", "field": "audience", "value": "everyone", "previous": "person"}
    finally:
        manager.discard(plan)
    # Back the other way: said, and it grants nothing more.
    back = diff_consent(diff_consent_input(v2), diff_consent_input(v1))
    assert {(r.tool, r.value) for r in back.roles} == {("add", False), ("undo", "person")}
    assert not back.widens
    # A consent given before roles were recorded: each role is shown, not counted as wider.
    old = {k: v for k, v in diff_consent_input(v1).items() if k != "roles"}
    unknown = diff_consent(old, diff_consent_input(v2))
    assert [r.describe() for r in unknown.roles] == [
        "add: an action tool (changes what it keeps for you) (not recorded at the earlier approval)"]
    assert not unknown.widens


def diff_consent_input(folder: Path) -> dict[str, Any]:
    from workbench.ext.consent import consent_of
    from workbench.manifest.models import Manifest

    return consent_of(Manifest.model_validate(json.loads((folder / "loca.json").read_text())),
                      version="x")
