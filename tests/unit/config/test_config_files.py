"""Config files: reading, checking, error positions, comment-keeping atomic writes, layering."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.config.document import atomic_write, key_line, read_values, write_setting
from workbench.config.files import Config, set_setting
from workbench.config.home import Home
from workbench.errors import ConfigError, ExitCode, UnknownSettingError

COMMENTED = """\
# my workbench settings
model = "echo"  # the default one

[tools]
# a long timeout for slow builds
timeout_ms = 600000  # ten minutes
"""


def test_values_are_read_from_tables(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "m"\n[tools]\ntimeout_ms = 5\n[headless]\nallowlist = ["a"]\n'
                    "delegate_timeout_s = 2\n")
    assert read_values(path) == {"model": "m", "tools.timeout_ms": 5,
                                 "headless.allowlist": ["a"], "headless.delegate_timeout_s": 2.0}


def test_dotted_keys_at_top_level(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("extensions.enabled = false\n")
    assert read_values(path) == {"extensions.enabled": False}


def test_missing_file_sets_nothing(tmp_path: Path) -> None:
    assert read_values(tmp_path / "absent.toml") == {}


def test_malformed_toml_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "a"\ntheme = = "b"\n')
    with pytest.raises(ConfigError) as caught:
        read_values(path)
    assert caught.value.where == f"{path}:2:9"
    assert "invalid TOML" in str(caught.value)
    assert caught.value.exit_code == ExitCode.ERROR


def test_wrong_type_names_file_key_and_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "a"\n\n[tools]\n# comment\ntimeout_ms = "soon"\n')
    with pytest.raises(ConfigError) as caught:
        read_values(path)
    assert caught.value.where == f"{path}:5"
    assert "'tools.timeout_ms'" in caught.value.message
    assert "string 'soon'" in caught.value.message


def test_unknown_key_names_file_key_and_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "a"\n[headless]\napprovels = "deny"\n')
    with pytest.raises(ConfigError) as caught:
        read_values(path)
    assert caught.value.where == f"{path}:3"
    assert "'headless.approvels'" in caught.value.message
    assert "did you mean 'headless.approvals'" in caught.value.message


def test_unknown_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "a"\n\n[gadgets]\nx = 1\n')
    with pytest.raises(ConfigError, match="'gadgets'") as caught:
        read_values(path)
    assert caught.value.where == f"{path}:3"


def test_setting_table_must_be_a_table(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("tools = 3\n")
    with pytest.raises(ConfigError, match="must be a table"):
        read_values(path)


def test_quoted_dotted_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('"tools.timeout_ms" = 5\n')
    with pytest.raises(ConfigError, match="dot"):
        read_values(path)


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "a"\ntheme = "\xff"\n')
    with pytest.raises(ConfigError, match="UTF-8") as caught:
        read_values(path)
    assert caught.value.where == f"{path}:2"


def test_key_line_skips_multiline_strings() -> None:
    text = 'note = """\n[tools]\ntimeout_ms = 1\n"""\n[tools]\ntimeout_ms = 2\n'
    assert key_line(text, "tools.timeout_ms") == 6
    assert key_line(text, "tools") == 5
    assert key_line(text, "absent") is None


def test_write_keeps_comments_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    write_setting(path, "tools.timeout_ms", 5)
    write_setting(path, "theme", "light")
    write_setting(path, "headless.allowlist", ["fs.read"])
    text = path.read_text()
    assert text.startswith("# my workbench settings\nmodel = \"echo\"  # the default one\n")
    assert "# a long timeout for slow builds\ntimeout_ms = 5  # ten minutes\n" in text
    assert read_values(path) == {"model": "echo", "theme": "light", "tools.timeout_ms": 5,
                                 "headless.allowlist": ["fs.read"]}


def test_write_creates_file_and_folder(tmp_path: Path) -> None:
    path = tmp_path / "project" / ".workbench" / "config.toml"
    write_setting(path, "extensions.enabled", False)
    assert read_values(path) == {"extensions.enabled": False}


def test_write_refuses_malformed_file_and_leaves_it(tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    folder.mkdir()
    path = folder / "config.toml"
    path.write_bytes(b"# mine\nmodel = [\n")
    before = path.read_bytes()
    with pytest.raises(ConfigError) as caught:
        write_setting(path, "model", "x")
    assert caught.value.where.startswith(f"{path}:")
    assert path.read_bytes() == before
    assert sorted(os.listdir(folder)) == ["config.toml"]


def test_atomic_write_keeps_mode_and_follows_links(tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    folder.mkdir()
    real = folder / "real.toml"
    real.write_text("old")
    real.chmod(0o640)
    link = folder / "link.toml"
    link.symlink_to(real)
    atomic_write(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(folder)) == ["link.toml", "real.toml"]


def test_atomic_write_new_file_is_private(tmp_path: Path) -> None:
    atomic_write(tmp_path / "new.json", b"{}")
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o600


def test_defaults_and_origin_without_files(home: Home, workdir: Path) -> None:
    config = Config.load(home, workdir)
    assert config.get("model") == "auto"
    assert config.origin("model") == "default"
    assert config.project_state == "none"
    assert config.project_file is None
    assert config.notices == []


def test_global_file_overrides_defaults(home: Home, workdir: Path) -> None:
    home.config_file.write_text('model = "scripted:x.json"\n')
    config = Config.load(home, workdir)
    assert config.get("model") == "scripted:x.json"
    assert config.origin("model") == f"global: {home.config_file}"
    assert config.origin("theme") == "default"


def test_load_uses_environment_and_cwd_by_default(home: Home) -> None:
    home.config_file.write_text('theme = "t"\n')
    assert Config.load().get("theme") == "t"


def test_load_reports_a_malformed_global_file(home: Home, workdir: Path) -> None:
    home.config_file.write_text("model = \n")
    before = home.config_file.read_bytes()
    with pytest.raises(ConfigError) as caught:
        Config.load(home, workdir)
    assert caught.value.where == f"{home.config_file}:1:9"
    assert home.config_file.read_bytes() == before


def test_get_returns_copies(home: Home, workdir: Path) -> None:
    config = Config.load(home, workdir)
    config.get("headless.allowlist").append("x")
    assert config.get("headless.allowlist") == []


def test_get_unknown_key(home: Home, workdir: Path) -> None:
    config = Config.load(home, workdir)
    with pytest.raises(UnknownSettingError):
        config.get("nope")
    with pytest.raises(UnknownSettingError):
        config.origin("nope")


def test_set_global_parses_text_and_reloads(home: Home, workdir: Path) -> None:
    home.config_file.write_text(COMMENTED)
    config = Config.load(home, workdir)
    assert config.set("tools.timeout_ms", "1000") is None
    assert config.get("tools.timeout_ms") == 1000
    assert config.origin("tools.timeout_ms") == f"global: {home.config_file}"
    assert "# ten minutes" in home.config_file.read_text()


def test_set_checks_typed_values(home: Home, workdir: Path) -> None:
    config = Config.load(home, workdir)
    with pytest.raises(ConfigError):
        config.set("extensions.enabled", "perhaps")
    with pytest.raises(ConfigError):
        config.set("tools.timeout_ms", -5)
    assert not home.config_file.exists()
    config.set("extensions.enabled", False)
    assert config.get("extensions.enabled") is False


def test_set_setting_can_fix_a_file_load_rejects(home: Home, workdir: Path) -> None:
    home.config_file.write_text('# keep me\n[tools]\ntimeout_ms = "slow"\n')
    with pytest.raises(ConfigError):
        Config.load(home, workdir)
    path, notice = set_setting(home, workdir, "tools.timeout_ms", "2000")
    assert (path, notice) == (home.config_file, None)
    assert Config.load(home, workdir).get("tools.timeout_ms") == 2000
    assert home.config_file.read_text().startswith("# keep me\n")


def test_set_unknown_scope(home: Home, workdir: Path) -> None:
    with pytest.raises(ConfigError, match="scope"):
        set_setting(home, workdir, "model", "x", "system")  # type: ignore[arg-type]
