"""Project trust: a project config applies only in the version its owner trusted."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from workbench.config.files import Config
from workbench.config.home import Home, project_config_path
from workbench.config.trust import (
    check_trust,
    forget_project,
    load_records,
    sha256_of,
    trust_project,
)
from workbench.errors import ConfigError

T1 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
T2 = datetime(2025, 6, 7, 8, 9, 10, tzinfo=timezone.utc)


@pytest.fixture
def project(workdir: Path) -> Path:
    """A project folder holding a config that sets the model and the theme."""
    path = project_config_path(workdir)
    path.parent.mkdir()
    path.write_text('# project settings\nmodel = "project-model"\n[tools]\ntimeout_ms = 42\n')
    return workdir


def test_untrusted_project_applies_nothing_and_says_so(home: Home, project: Path) -> None:
    config = Config.load(home, project)
    assert config.project_state == "untrusted"
    assert config.project_file == project_config_path(project)
    assert config.get("model") == "auto"
    assert config.origin("model") == "default"
    assert len(config.notices) == 1
    assert "not trusted" in config.notices[0]
    assert str(project_config_path(project)) in config.notices[0]
    assert "workbench trust" in config.notices[0]


def test_untrusted_project_is_not_even_parsed(home: Home, project: Path) -> None:
    project_config_path(project).write_text("this is = = not toml\n")
    config = Config.load(home, project)
    assert config.project_state == "untrusted"


def test_trusted_project_applies_over_global(home: Home, project: Path) -> None:
    home.config_file.write_text('model = "global-model"\ntheme = "global-theme"\n')
    record = trust_project(home, project, now=T1)
    assert record.sha256 == sha256_of(project_config_path(project).read_bytes())
    assert record.trusted_at == "2025-01-02T03:04:05Z"
    sub = project / "sub"
    sub.mkdir()
    config = Config.load(home, sub)
    assert config.project_state == "trusted"
    assert config.notices == []
    assert config.get("model") == "project-model"
    assert config.get("tools.timeout_ms") == 42
    assert config.get("theme") == "global-theme"
    path = project_config_path(project)
    assert config.origin("model") == f"project: {path} (trusted)"
    assert config.origin("theme") == f"global: {home.config_file}"
    assert config.origin("tools.max_output_bytes") == "default"


def test_changed_project_keeps_last_trusted_values(home: Home, project: Path) -> None:
    trust_project(home, project, now=T1)
    path = project_config_path(project)
    path.write_text('model = "sneaky"\n[tools]\ntimeout_ms = 1\n')
    config = Config.load(home, project)
    assert config.project_state == "changed"
    assert config.get("model") == "project-model"
    assert config.get("tools.timeout_ms") == 42
    assert config.origin("model") == (
        f"project: {path} (trusted version from 2025-01-02T03:04:05Z)")
    assert config.notices == [
        f"project config {path} changed since you trusted it; using the trusted version "
        "from 2025-01-02T03:04:05Z; run `workbench trust` to accept the change"]


def test_changed_into_malformed_still_uses_trusted_version(home: Home, project: Path) -> None:
    trust_project(home, project, now=T1)
    project_config_path(project).write_text("model = \n")
    config = Config.load(home, project)
    assert config.project_state == "changed"
    assert config.get("model") == "project-model"


def test_retrust_applies_the_new_values(home: Home, project: Path) -> None:
    trust_project(home, project, now=T1)
    project_config_path(project).write_text('model = "second"\n')
    trust_project(home, project, now=T2)
    config = Config.load(home, project)
    assert config.project_state == "trusted"
    assert config.get("model") == "second"
    assert config.get("tools.timeout_ms") == 300_000
    assert config.notices == []
    records = load_records(home)
    assert len(records) == 1
    assert next(iter(records.values())).trusted_at == "2025-06-07T08:09:10Z"


def test_trust_record_holds_digest_time_and_content(home: Home, project: Path) -> None:
    trust_project(home, project, now=T1)
    raw = json.loads(home.trust_file.read_text())
    entry = raw["projects"][str(project.resolve())]
    assert entry["sha256"] == sha256_of(project_config_path(project).read_bytes())
    assert entry["trusted_at"] == "2025-01-02T03:04:05Z"
    assert entry["content"] == project_config_path(project).read_text()
    assert home.trust_file.stat().st_mode & 0o777 == 0o600


def test_trust_refuses_invalid_config(home: Home, project: Path) -> None:
    project_config_path(project).write_text('[tools]\ntimeout_ms = "x"\n')
    with pytest.raises(ConfigError, match="tools.timeout_ms"):
        trust_project(home, project)
    assert not home.trust_file.exists()


def test_trust_without_a_project_config(home: Home, workdir: Path) -> None:
    with pytest.raises(ConfigError, match="no project config") as caught:
        trust_project(home, workdir)
    assert caught.value.where == str(project_config_path(workdir))


def test_trust_is_per_project(home: Home, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    project_config_path(other).parent.mkdir(parents=True)
    project_config_path(other).write_text(project_config_path(project).read_text())
    trust_project(home, project)
    assert Config.load(home, project).project_state == "trusted"
    assert Config.load(home, other).project_state == "untrusted"


def test_forget_project(home: Home, project: Path) -> None:
    trust_project(home, project)
    assert forget_project(home, project) is True
    assert forget_project(home, project) is False
    assert Config.load(home, project).project_state == "untrusted"


def test_check_trust_states(home: Home, project: Path) -> None:
    assert check_trust(home, project, b"x").state == "untrusted"
    trust_project(home, project)
    data = project_config_path(project).read_bytes()
    assert check_trust(home, project, data).state == "trusted"
    changed = check_trust(home, project, data + b"\n")
    assert changed.state == "changed"
    assert changed.record is not None and changed.sha256 == sha256_of(data + b"\n")


def test_tampered_trust_copy_applies_nothing(home: Home, project: Path) -> None:
    trust_project(home, project)
    raw = json.loads(home.trust_file.read_text())
    entry = raw["projects"][str(project.resolve())]
    entry["content"] = 'model = "evil"\n'
    home.trust_file.write_text(json.dumps(raw))
    project_config_path(project).write_text('model = "changed"\n')
    config = Config.load(home, project)
    assert config.get("model") == "auto"
    assert config.project_state == "untrusted"
    assert "damaged" in config.notices[0]


def test_malformed_trust_file_is_reported(home: Home, project: Path) -> None:
    home.trust_file.write_text("{not json")
    with pytest.raises(ConfigError) as caught:
        Config.load(home, project)
    assert caught.value.where == str(home.trust_file)


def test_set_project_creates_file_and_needs_trust(home: Home, workdir: Path) -> None:
    config = Config.load(home, workdir)
    notice = config.set("theme", "project-theme", scope="project")
    path = project_config_path(workdir)
    assert path.read_text() == 'theme = "project-theme"\n'
    assert notice is not None and "not trusted yet" in notice and str(path) in notice
    assert config.project_state == "untrusted"
    assert config.get("theme") == "workbench-dark"
    trust_project(home, workdir)
    config.reload()
    assert config.get("theme") == "project-theme"


def test_set_project_after_trust_keeps_trusted_values(home: Home, project: Path) -> None:
    trust_project(home, project, now=T1)
    sub = project / "src"
    sub.mkdir()
    config = Config.load(home, sub)
    notice = config.set("model", "newer", scope="project")
    assert notice is not None and "differs from the version you trusted" in notice
    assert notice in config.notices
    assert config.project_state == "changed"
    assert config.get("model") == "project-model"
    text = project_config_path(project).read_text()
    assert text.startswith("# project settings\n")
    assert 'model = "newer"' in text
    assert not project_config_path(sub).exists()


def test_set_project_same_value_stays_trusted(home: Home, project: Path) -> None:
    trust_project(home, project)
    config = Config.load(home, project)
    assert config.set("model", "project-model", scope="project") is None
    assert config.project_state == "trusted"
