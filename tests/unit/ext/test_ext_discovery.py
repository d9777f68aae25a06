"""Discovery: global and project-local extensions read for diagnostics, no code run."""

from __future__ import annotations

from pathlib import Path

from ext_samples import write_extension, yes

from workbench.config.home import Home
from workbench.config.trust import trust_project
from workbench.ext.manager import ExtensionManager

TRAP = "import pathlib\npathlib.Path({marker!r}).write_text('ran')\n"


def _project(tmp_path: Path, marker: Path) -> Path:
    project = tmp_path / "project"
    write_extension(project / ".workbench" / "extensions" / "local-tool", name="local-tool",
                    files={"helper.py": TRAP.format(marker=str(marker))})
    broken = project / ".workbench" / "extensions" / "broken"
    broken.mkdir(parents=True)
    (broken / "loca.json").write_text('{"name": "broken"}')
    return project


def test_untrusted_project_extensions_are_listed_but_not_runnable(
        manager: ExtensionManager, home: Home, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    project = _project(tmp_path, marker)
    manager.install(str(write_extension(tmp_path / "g")), approve=yes)
    found = {(d.scope, d.name): d for d in manager.discover(project)}
    assert set(found) == {("global", "loca-extension-foo"), ("project", "local-tool"),
                          ("project", "broken")}
    glob = found[("global", "loca-extension-foo")]
    assert glob.runnable and glob.trusted is None and glob.reason == ""
    local = found[("project", "local-tool")]
    assert local.valid and not local.trusted and not local.runnable
    assert "not trusted" in local.reason and "config.toml" in local.reason
    broken = found[("project", "broken")]
    assert not broken.valid and not broken.runnable
    assert broken.reason.startswith("invalid: ") and "displayName" in broken.reason
    assert [p.pointer for p in broken.errors] == ["/displayName", "/description"]
    assert not marker.exists()


def test_trusted_project_extensions_are_runnable_once_consented_to(
        manager: ExtensionManager, home: Home, tmp_path: Path) -> None:
    project = _project(tmp_path, tmp_path / "ran.txt")
    config = project / ".workbench" / "config.toml"
    config.write_text("[tools]\ntimeout_ms = 1000\n")
    trust_project(home, project)
    local = {d.name: d for d in manager.discover(project)}["local-tool"]
    # Trusting the project's config is not consent to its extensions' code.
    assert local.trusted and not local.runnable
    assert "workbench ext trust .workbench/extensions/local-tool" in local.reason
    manager.trust_project(project / ".workbench" / "extensions" / "local-tool", approve=yes)
    local = {d.name: d for d in manager.discover(project)}["local-tool"]
    assert local.trusted and local.runnable and local.reason == ""
    config.write_text("[tools]\ntimeout_ms = 2000\n")
    changed = {d.name: d for d in manager.discover(project)}["local-tool"]
    assert not changed.runnable and "changed since it was trusted" in changed.reason
    assert not (tmp_path / "ran.txt").exists()


def test_held_global_extensions_are_not_runnable(manager: ExtensionManager,
                                                 tmp_path: Path) -> None:
    installed = manager.install(str(write_extension(tmp_path / "g")), approve=yes)
    (installed.path / "main.py").write_text((installed.path / "main.py").read_text() + "\n#\n")
    [found] = manager.discover(None)
    assert found.scope == "global" and not found.runnable
    assert "files changed since you approved it: main.py" in found.reason
    assert found.to_json()["runnable"] is False
