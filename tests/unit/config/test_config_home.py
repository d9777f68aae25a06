"""The home folder: where it is, what it holds, and how it is created."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs

from workbench.config.home import Home, find_project_config, project_config_path


def test_resolve_uses_workbench_home(tmp_path: Path) -> None:
    home = Home.resolve({"WORKBENCH_HOME": str(tmp_path / "wb")})
    assert home.root == tmp_path / "wb"
    assert home.config_file == tmp_path / "wb" / "config.toml"
    assert home.db_path == tmp_path / "wb" / "workbench.db"
    assert home.extensions_dir == tmp_path / "wb" / "extensions"
    assert home.cache_dir == tmp_path / "wb" / "cache"
    assert home.logs_dir == tmp_path / "wb" / "logs"
    assert home.trust_file.parent == tmp_path / "wb"


def test_resolve_reads_os_environ_by_default(tmp_path: Path) -> None:
    assert Home.resolve().root == tmp_path / "home"


def test_resolve_makes_a_relative_home_absolute(workdir: Path) -> None:
    home = Home.resolve({"WORKBENCH_HOME": "rel/home"})
    assert home.root.is_absolute()
    assert home.root == workdir / "rel" / "home"


def test_resolve_without_override_uses_the_platform_data_dir() -> None:
    home = Home.resolve({})
    assert home.root == Path(platformdirs.user_data_dir("workbench", appauthor=False))


def test_empty_override_is_ignored() -> None:
    assert Home.resolve({"WORKBENCH_HOME": "  "}) == Home.resolve({})


def test_ensure_creates_folders_private(tmp_path: Path) -> None:
    home = Home(tmp_path / "new" / "home")
    assert home.ensure() is home
    for folder in (home.root, home.extensions_dir, home.cache_dir, home.logs_dir):
        assert folder.is_dir()
    assert stat.S_IMODE(os.stat(home.root).st_mode) == 0o700
    home.ensure()  # a second call is harmless


def test_project_config_found_upward(home: Home, workdir: Path) -> None:
    deep = workdir / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project_config(deep, home) is None
    config = project_config_path(workdir)
    config.parent.mkdir()
    config.write_text('model = "x"\n')
    assert find_project_config(deep, home) == config


def test_nearest_project_config_wins(home: Home, workdir: Path) -> None:
    inner = workdir / "inner"
    for folder in (workdir, inner):
        project_config_path(folder).parent.mkdir(parents=True)
        project_config_path(folder).write_text("")
    assert find_project_config(inner, home) == project_config_path(inner)


def test_home_named_dot_workbench_is_not_a_project(tmp_path: Path) -> None:
    user = tmp_path / "user"
    home = Home(user / ".workbench").ensure()
    home.config_file.write_text('model = "global"\n')
    project = user / "code"
    project.mkdir()
    assert find_project_config(project, home) is None
    assert home.is_home(user / "code" / ".." / ".workbench")
