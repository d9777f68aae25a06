"""Installing from a folder, a .tgz and a .zip, listing, and removing without a trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ext_samples import extension_rows, make_tgz, make_zip, no, tool, tree, write_extension, yes

from workbench.config.home import Home
from workbench.errors import ExitCode
from workbench.ext.errors import ExtensionError, InstallDeclined, SourceError
from workbench.ext.manager import ExtensionManager
from workbench.ext.plan import InstallPlan
from workbench.store import Store


def _source(kind: str, tmp_path: Path) -> str:
    folder = write_extension(tmp_path / "src" / "foo", files={
        "memories/overview.md": "# Foo\nReference about foo.\n",
        "memories/research/SKILL.md": "---\nname: research\ndescription: Look things up.\n"
                                      "---\nSteps.\n"},
        manifest={"memories": [{"kind": "knowledge", "path": "memories/overview.md"},
                               {"kind": "skill", "path": "memories/research"}],
                  "database": True})
    if kind == "folder":
        return str(folder)
    if kind == "tgz":
        return str(make_tgz(folder, tmp_path / "foo-1.0.0.tgz"))
    return str(make_zip(folder, tmp_path / "foo.zip", prefix="foo-main/"))


@pytest.mark.parametrize("kind", ["folder", "tgz", "zip"])
def test_install_list_remove_leaves_no_trace(kind: str, manager: ExtensionManager,
                                             home: Home, store: Store, tmp_path: Path) -> None:
    source = _source(kind, tmp_path)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    seen: list[InstallPlan] = []

    installed = manager.install(source, approve=lambda plan: seen.append(plan) or True)

    assert installed.name == "loca-extension-foo" and installed.state == "ok"
    assert installed.version == "1.0.0" and installed.source == source
    assert installed.path == home.extensions_dir / "loca-extension-foo"
    assert installed.tools == ("foo",)
    [listed] = manager.list()
    assert listed.name == installed.name and listed.state == "ok" and listed.reason == ""
    assert listed.digest == installed.digest == seen[0].digest
    assert store.get_consent("loca-extension-foo")["digest"] == installed.digest
    assert set(store.extension_files("loca-extension-foo")) == {
        "loca.json", "main.py", "package.json", "memories/overview.md",
        "memories/research/SKILL.md"}
    assert not (home.root / "staging").exists()
    # The private database and the shipped memories live in the folder.
    (installed.path / "data.db").write_bytes(b"private rows")
    assert manager.get("loca-extension-foo").state == "ok"

    manager.remove("loca-extension-foo")

    assert tree(home.root) == before_tree
    assert extension_rows(store) == before_rows
    assert manager.list() == []
    actions = [entry["action"] for entry in store.list_audit()]
    assert actions[:2] == ["extension.remove", "extension.install"]


def test_plan_shows_what_the_extension_brings(manager: ExtensionManager, tmp_path: Path) -> None:
    plan = manager.plan(_source("folder", tmp_path))
    try:
        assert plan.action == "install" and plan.diff is None
        assert [t.name for t in plan.tools] == ["foo"]
        items = {(p.kind, p.value): p.reason for p in plan.tools[0].permissions}
        assert items == {("read", "$home/Documents"): "Read the notes you point at.",
                         ("net", "example.com:443"): "Fetch the page you ask for."}
        assert plan.hooks == () and plan.database is True
        assert plan.knowledge == ("memories/overview.md",)
        assert [(s.name, s.description) for s in plan.skills] == [("research", "Look things up.")]
        text = "\n".join(plan.describe())
        assert "read $home/Documents: Read the notes you point at." in text
        assert "net example.com:443: Fetch the page you ask for." in text
        assert "Hooks: none" in text and "research" in text
        data = plan.to_json()
        assert data["tools"][0]["permissions"][1]["reason"] == "Read the notes you point at."
        json.dumps(data)
        assert plan.folder.is_dir()
    finally:
        manager.discard(plan)
    assert not plan.folder.exists()


def test_a_plan_can_be_installed_later(manager: ExtensionManager, tmp_path: Path) -> None:
    plan = manager.plan(_source("tgz", tmp_path))
    installed = manager.install(plan, approve=yes)
    assert installed.state == "ok" and not plan.folder.exists()


def test_declining_installs_nothing(manager: ExtensionManager, home: Home, store: Store,
                                   tmp_path: Path) -> None:
    source = _source("zip", tmp_path)
    before_tree, before_rows = tree(home.root), extension_rows(store)
    with pytest.raises(InstallDeclined) as caught:
        manager.install(source, approve=no)
    assert caught.value.exit_code == ExitCode.CANCELLED
    assert tree(home.root) == before_tree and extension_rows(store) == before_rows


def test_an_exception_in_approve_installs_nothing(manager: ExtensionManager, home: Home,
                                                  tmp_path: Path) -> None:
    source = _source("folder", tmp_path)
    before = tree(home.root)

    def explode(_plan: InstallPlan) -> bool:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        manager.install(source, approve=explode)
    assert tree(home.root) == before


def test_installing_twice_points_at_update(manager: ExtensionManager, tmp_path: Path) -> None:
    source = _source("folder", tmp_path)
    manager.install(source, approve=yes)
    with pytest.raises(ExtensionError, match="already installed.*ext update loca-extension-foo"):
        manager.install(source, approve=yes)
    assert [e.name for e in manager.list()] == ["loca-extension-foo"]


def test_invalid_extension_lists_every_error_with_its_pointer(manager: ExtensionManager,
                                                              home: Home, tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "bad", tools=[tool("foo"), tool("foo")])
    manifest = json.loads((folder / "loca.json").read_text())
    manifest["tools"][1]["function"] = "not exported"
    manifest["color"] = "red"
    (folder / "loca.json").write_text(json.dumps(manifest, indent=2))
    before = tree(home.root)
    with pytest.raises(ExtensionError) as caught:
        manager.install(str(folder), approve=yes)
    message = str(caught.value)
    assert message.startswith(f"{folder}: the extension is not valid:")
    assert "/color: unknown field 'color'" in message
    assert "/tools/1/function:" in message
    assert "/tools/1/name:" in message
    assert tree(home.root) == before


@pytest.mark.parametrize("name", ["../escape", "a/b", "builtin", ".hidden"])
def test_unusable_names_are_refused(name: str, manager: ExtensionManager, home: Home,
                                    tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "odd", name=name)
    with pytest.raises(ExtensionError) as caught:
        manager.install(str(folder), approve=yes)
    assert "name" in str(caught.value)
    assert list(home.extensions_dir.iterdir()) == []


def test_links_in_a_source_folder_are_refused(manager: ExtensionManager, home: Home,
                                              tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "linked")
    (folder / "secrets").symlink_to("/etc")
    with pytest.raises(ExtensionError, match="secrets: a symbolic link"):
        manager.install(str(folder), approve=yes)
    assert list(home.extensions_dir.iterdir()) == []


def test_a_source_folder_leaves_its_working_files_behind(manager: ExtensionManager,
                                                        tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "dev", files={
        ".git/HEAD": "ref", "node_modules/x/index.js": "", "__pycache__/main.pyc": "",
        "data.db": "author's rows"})
    installed = manager.install(str(folder), approve=yes)
    assert sorted(p.name for p in installed.path.iterdir()) == [
        "loca.json", "main.py", "package.json"]


def test_version_defaults_when_the_package_names_none(manager: ExtensionManager,
                                                      tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "plain", version=None)
    assert manager.install(str(folder), approve=yes).version == "0.0.0"


def test_a_knowledge_only_extension_installs(manager: ExtensionManager, tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "notes", name="notes", tools=[],
                             files={"facts.md": "# Facts\n"},
                             manifest={"memories": [{"kind": "knowledge", "path": "facts.md"}]})
    installed = manager.install(str(folder), approve=yes)
    assert installed.state == "ok" and installed.tools == ()


@pytest.mark.parametrize(("source", "message"), [
    ("missing-folder", "does not exist"),
    ("npm:Bad Name", "not a valid npm package name"),
    ("npm:foo@", "nothing follows '@'"),
    ("", "no source given"),
])
def test_bad_sources_are_usage_errors(source: str, message: str,
                                      manager: ExtensionManager) -> None:
    with pytest.raises(SourceError, match=message) as caught:
        manager.install(source, approve=yes)
    assert caught.value.exit_code == ExitCode.USAGE


def test_a_plain_file_is_not_a_source(manager: ExtensionManager, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(SourceError, match="not an extension folder"):
        manager.install(str(tmp_path / "notes.txt"), approve=yes)


def test_removing_what_is_not_installed(manager: ExtensionManager) -> None:
    with pytest.raises(ExtensionError, match="nope is not installed"):
        manager.remove("nope")


def test_store_failure_after_the_rename_puts_everything_back(
        manager: ExtensionManager, home: Home, store: Store, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source("folder", tmp_path)
    before_tree, before_rows = tree(home.root), extension_rows(store)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "set_extension_files", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        manager.install(source, approve=yes)
    assert tree(home.root) == before_tree
    assert extension_rows(store) == before_rows


def test_on_removed_drops_what_is_kept_elsewhere(home: Home, store: Store,
                                                 tmp_path: Path) -> None:
    kept = home.root / "databases"
    kept.mkdir()
    dropped: list[str] = []

    def drop(name: str) -> None:
        dropped.append(name)
        (kept / f"{name}.db").unlink()

    manager = ExtensionManager(home, store, on_removed=drop)
    manager.install(_source("folder", tmp_path), approve=yes)
    (kept / "loca-extension-foo.db").write_bytes(b"rows")
    manager.remove("loca-extension-foo")
    assert dropped == ["loca-extension-foo"] and list(kept.iterdir()) == []


def test_a_failing_on_removed_is_reported(home: Home, store: Store, tmp_path: Path) -> None:
    def fail(_name: str) -> None:
        raise OSError("read-only file system")

    manager = ExtensionManager(home, store, on_removed=fail)
    manager.install(_source("folder", tmp_path), approve=yes)
    with pytest.raises(ExtensionError, match="was removed, but .* read-only file system"):
        manager.remove("loca-extension-foo")
    assert manager.list() == []
