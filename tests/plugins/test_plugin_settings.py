"""Enable per project behind the config's trust; settings layered setting by setting."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.config.files import Config
from workbench.config.trust import trust_project
from workbench.plugins.manifest import parse
from workbench.plugins.settings import plugin_config

MANIFEST = parse("""{"id": "echo", "name": "Echo", "version": "0.1.0", "api": "1",
  "settings": {"count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
               "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
               "label": {"type": "string"}}}""", "plugin.json")


def project(workdir: Path, text: str) -> Path:
    (workdir / ".workbench").mkdir(exist_ok=True)
    (workdir / ".workbench" / "config.toml").write_text(text, encoding="utf-8")
    return workdir


def test_a_project_enables_only_once_trusted(home, workdir: Path) -> None:
    project(workdir, "[plugins.echo]\nenabled = true\n")
    applied = plugin_config(Config.load(home, workdir), MANIFEST)
    assert not applied.enabled
    assert any("waits for `workbench trust`" in note for note in applied.notes)
    trust_project(home, workdir)
    applied = plugin_config(Config.load(home, workdir), MANIFEST)
    assert applied.enabled and applied.enabled_from == "project"


def test_a_changed_project_keeps_its_trusted_value(home, workdir: Path) -> None:
    project(workdir, "[plugins.echo]\nenabled = true\n")
    trust_project(home, workdir)
    project(workdir, "[plugins.echo]\nenabled = false\n")
    assert plugin_config(Config.load(home, workdir), MANIFEST).enabled


def test_the_global_value_is_the_default(home, workdir: Path) -> None:
    home.config_file.write_text("[plugins.echo]\nenabled = true\n", encoding="utf-8")
    assert plugin_config(Config.load(home, workdir), MANIFEST).enabled_from == "global"
    project(workdir, "[plugins.echo]\nenabled = false\n")
    trust_project(home, workdir)
    assert not plugin_config(Config.load(home, workdir), MANIFEST).enabled


def test_settings_layer_one_by_one_and_refused_values_are_left_out(home, workdir: Path) -> None:
    home.config_file.write_text('[plugins.echo.settings]\ncount = 5\nmode = "b"\n', encoding="utf-8")
    project(workdir, '[plugins.echo.settings]\ncount = 99\nmode = "a"\nnope = 1\n')
    trust_project(home, workdir)
    applied = plugin_config(Config.load(home, workdir), MANIFEST)
    assert applied.settings == {"count": 5, "mode": "a"}
    assert applied.origins == {"count": "global", "mode": "project"}
    assert any("setting 'count' of echo refused" in note for note in applied.notes)
    assert any("declares no setting 'nope'" in note for note in applied.notes)


def test_project_settings_apply_only_once_trusted(home, workdir: Path) -> None:
    project(workdir, "[plugins.echo]\nenabled = true\n[plugins.echo.settings]\ncount = 7\n")
    applied = plugin_config(Config.load(home, workdir), MANIFEST)
    assert applied.settings["count"] == 3 and applied.origins["count"] == "manifest"
    assert any("settings as written there wait for `workbench trust`" in note for note in applied.notes)
    trust_project(home, workdir)
    applied = plugin_config(Config.load(home, workdir), MANIFEST)
    assert applied.settings["count"] == 7 and applied.origins["count"] == "project"
    assert not any("wait" in note for note in applied.notes)
    # Changed after trust: the trusted value stays until trusted again.
    project(workdir, "[plugins.echo]\nenabled = true\n[plugins.echo.settings]\ncount = 9\n")
    applied = plugin_config(Config.load(home, workdir), MANIFEST)
    assert applied.settings["count"] == 7
    assert any("the trusted version's apply" in note for note in applied.notes)


def test_events_start_rules() -> None:
    from workbench.core.plugin_events import starts

    def manifest(**extra: object):
        return parse(json.dumps({"id": "watch", "name": "Watch", "version": "0.1.0", "api": "1",
                                 "capabilities": ["events.subscribe", "ui.composer_switch"],
                                 "events": ["agent.status"],
                                 "settings": {"sync_all": {"type": "boolean", "default": False}},
                                 "ui": {"composer_switches": [{"id": "sync", "label": "Sync", "icon": "ui/sync.svg", "title": "t"}]},
                                 **extra}), "plugin.json")

    assert starts(manifest(), {})  # no rule: an event starts it
    assert not starts(manifest(events_start={}), {"sync_all": True})  # {}: never
    rule = manifest(events_start={"settings": ["sync_all"], "switches": ["sync"]})
    assert not starts(rule, {"sync_all": False})
    assert starts(rule, {"sync_all": True})
    assert starts(rule, {"sync_all": False}, {"sync"})
