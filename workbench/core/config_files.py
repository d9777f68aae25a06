"""The config files as ``workbench config`` and ``workbench trust`` read and write them,
with no host opened (a person fixes a value the host would refuse to start with).

Part of the core's public API: each function returns a small typed row the CLI prints
(``SettingRow``, ``ConfigFiles``, ``Written``, ``Trusted``) and raises ``ConfigError``
naming the file and place, as ``workbench.config`` does. The config package is imported
when a function runs, so importing this module costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ConfigFiles", "SettingRow", "Trusted", "Written", "config_files", "setting",
           "settings", "trust", "write"]


@dataclass(frozen=True)
class SettingRow:
    """One setting as it applies here.

    Attributes:
        key: Its dotted name (``tools.timeout_ms``).
        value: Its value in force.
        origin: Where the value comes from (``default``, a file).
        shown: The value as it is typed (``true``, ``["a", "b"]``).
        help: Its help line.
    """

    key: str
    value: Any
    origin: str
    shown: str
    help: str


def _row(key: str, value: Any, origin: str) -> SettingRow:
    from workbench.config import SETTINGS, format_value

    return SettingRow(key, value, origin, format_value(value), SETTINGS[key].help)


def setting(key: str) -> tuple[SettingRow, list[str]]:
    """The setting ``key`` as it applies in the current folder, and the config's notices
    (an untrusted or changed project config).

    Raises:
        ConfigError: ``key`` is no setting, or a config file cannot be used.
    """
    from workbench.config import Config, lookup

    lookup(key)
    config = Config.load()
    return _row(key, config.get(key), config.origin(key)), list(config.notices)


def settings() -> tuple[list[SettingRow], list[str]]:
    """Every setting as it applies in the current folder, in table order, and the
    config's notices.

    Raises:
        ConfigError: A config file cannot be used.
    """
    from workbench.config import Config

    config = Config.load()
    return [_row(key, value, where) for key, value, where in config.items()], list(config.notices)


@dataclass(frozen=True)
class Written:
    """A setting written to a file.

    Attributes:
        path: The file written.
        shown: The value as it is typed.
        notice: Why it does not apply yet (an untrusted project config), or None.
    """

    path: Path
    shown: str
    notice: str | None


def write(key: str, value: str, *, project: bool = False) -> Written:
    """Write ``key`` as typed in ``value`` to the global config (or the project's),
    keeping the file's comments; the file is not loaded whole first.

    Raises:
        ConfigError: ``key`` is no setting or ``value`` does not parse for it.
    """
    from workbench.config import Home, format_value, parse_value, set_setting

    home = Home.resolve()
    shown = format_value(parse_value(key, value))
    path, notice = set_setting(home, Path.cwd(), key, value, "project" if project else "global")
    return Written(path, shown, notice)


@dataclass(frozen=True)
class ConfigFiles:
    """The two config files found from the current folder.

    Attributes:
        global_file: The home's ``config.toml``.
        global_exists: Whether it was created yet.
        project_file: The project's config found from here, or None.
        project_state: Its trust: ``untrusted``, ``trusted``, ``changed since trusted
            at WHEN``; empty without a project config.
    """

    global_file: Path
    global_exists: bool
    project_file: Path | None
    project_state: str


def config_files() -> ConfigFiles:
    """The global config file and the project config found from here, with its trust.

    Raises:
        ConfigError: The project's config cannot be read.
    """
    from workbench.config import Home, check_trust, find_project_config
    from workbench.errors import ConfigError

    home = Home.resolve()
    project_file = find_project_config(Path.cwd(), home)
    state = ""
    if project_file is not None:
        try:
            data = project_file.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read config file: {exc.strerror or exc}",
                              where=str(project_file)) from None
        check = check_trust(home, project_file.parent.parent, data)
        state = check.state
        if check.state == "changed" and check.record is not None:
            state = f"changed since trusted at {check.record.trusted_at}"
    return ConfigFiles(home.config_file, home.config_file.exists(), project_file, state)


@dataclass(frozen=True)
class Trusted:
    """A project config trusted in its current version.

    Attributes:
        file: The project's ``.workbench/config.toml``.
        sha256: The digest it is trusted at.
        keys: The settings it sets, sorted.
    """

    file: str
    sha256: str
    keys: list[str]


def trust(path: Path | None = None) -> Trusted:
    """Trust the project config found from ``path`` (the current folder when None) upward.

    Raises:
        ConfigError: ``path`` is not a folder, no project config is found from it, or
            the config's content is not valid (it is not trusted then).
    """
    from workbench.config import Home, find_project_config, trust_project
    from workbench.config.document import values_from_text
    from workbench.errors import ConfigError

    home = Home.resolve().ensure()
    start = Path(path or Path.cwd()).absolute()
    if not start.is_dir():
        raise ConfigError("not a folder", where=str(start))
    found = find_project_config(start, home)
    if found is None:
        raise ConfigError(f"no .workbench/config.toml in {start} or any folder above it")
    record = trust_project(home, found.parent.parent)
    return Trusted(record.file, record.sha256,
                   sorted(values_from_text(record.content, record.file)))
