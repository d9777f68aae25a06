"""The config files as they apply: defaults, then the global file, then a trusted project file.

``Config.load`` reads the layers once and keeps, for every key, the value that
applies and where it came from. A project config counts only in the version its
owner trusted (see ``trust.py``); anything else produces a notice instead.

This module must not import the store or anything above the config package.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.config.document import read_values, values_from_text, write_setting
from workbench.config.home import Home, find_project_config, project_config_path
from workbench.config.settings import SETTINGS, Settings, lookup, parse_value, validate
from workbench.config.trust import TrustRecord, check_trust, sha256_of
from workbench.errors import ConfigError

ProjectState = Literal["none", "untrusted", "trusted", "changed"]
Scope = Literal["global", "project"]


@dataclass(frozen=True)
class Layer:
    """One source of values.

    Attributes:
        origin: How ``Config.origin`` names it, e.g. ``global: /home/me/config.toml``.
        values: The settings it sets, checked, by dotted key.
    """

    origin: str
    values: dict[str, Any]


class Config:
    """Settings as they apply in one folder: default < global < trusted project.

    Build it with ``Config.load``. ``notices`` holds what a person should be told
    (an untrusted or changed project config); front-ends show them.
    """

    def __init__(self, home: Home, cwd: Path) -> None:
        self.home = home
        """The workbench home whose ``config.toml`` is the global layer."""
        self.cwd = cwd
        """The folder the project config was looked up from."""
        self.project_file: Path | None = None
        """The project config file found from ``cwd`` upward, if any."""
        self.project_state: ProjectState = "none"
        """``none``, ``untrusted`` (never trusted), ``trusted`` or ``changed`` since trusted."""
        self.trust_record: TrustRecord | None = None
        """The project's trust record, when it has one."""
        self.notices: list[str] = []
        """Things to tell the person about how the config was applied."""
        self.layers: list[Layer] = []
        """The file layers that apply, lowest first (defaults are not a layer)."""
        self._view: tuple[list[Layer], Settings] | None = None

    @classmethod
    def load(cls, home: Home | None = None, cwd: Path | None = None) -> Config:
        """Read the global and project config files.

        Args:
            home: The workbench home; resolved from the environment when omitted.
            cwd: The folder to find a project config from; the current folder when omitted.

        Returns:
            The loaded config.

        Raises:
            ConfigError: When a file that applies cannot be parsed or holds an
                unknown key or a value of the wrong type. An untrusted project
                file is not read at all.
        """
        config = cls(home or Home.resolve(), Path(os.path.abspath(cwd or Path.cwd())))
        config._read()
        return config

    def reload(self) -> None:
        """Read the files again, e.g. after they changed on disk.

        The files are read into a new object first, so a reader on another thread
        never sees the layers half read, and a file that no longer parses leaves the
        values in force as they were (the ``ConfigError`` is raised).
        """
        fresh = type(self)(self.home, self.cwd)
        fresh._read()
        self.project_file, self.project_state = fresh.project_file, fresh.project_state
        self.trust_record, self.notices = fresh.trust_record, fresh.notices
        self.layers = fresh.layers

    def _read(self) -> None:
        global_file = self.home.config_file
        global_values = read_values(global_file)
        if global_values:
            self.layers.append(Layer(f"global: {global_file}", global_values))
        self.project_file = find_project_config(self.cwd, self.home)
        if self.project_file is not None:
            project_layer = self._read_project(self.project_file)
            if project_layer is not None:
                self.layers.append(project_layer)

    def _read_project(self, path: Path) -> Layer | None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read config file: {exc.strerror or exc}",
                              where=str(path)) from None
        check = check_trust(self.home, path.parent.parent, data)
        self.trust_record = check.record
        record = check.record
        if record is not None and sha256_of(record.content.encode("utf-8")) != record.sha256:
            # The stored copy does not match its own digest: the trust file was
            # edited by hand. Apply nothing rather than values nobody trusted.
            self.project_state = "untrusted"
            self.notices.append(
                f"project config {path} has a damaged trust record; its settings are "
                "ignored; run `workbench trust` to trust it again")
            return None
        self.project_state = check.state
        if check.state == "untrusted":
            self.notices.append(
                f"project config {path} is not trusted, so its settings are ignored; "
                "run `workbench trust` to apply them")
            return None
        assert record is not None
        if check.state == "trusted":
            values = values_from_text(record.content, str(path))
            return Layer(f"project: {path} (trusted)", values)
        self.notices.append(
            f"project config {path} changed since you trusted it; using the trusted "
            f"version from {record.trusted_at}; run `workbench trust` to accept the change")
        values = values_from_text(record.content, f"{path} (trusted version)")
        return Layer(f"project: {path} (trusted version from {record.trusted_at})", values)

    @property
    def settings(self) -> Settings:
        """The values that apply, typed and read-only: ``config.settings.tools.timeout_ms``.

        Built once per set of layers read; ``reload`` and ``set`` give the next read a
        fresh view, and a view already handed out keeps the values it was built with.
        """
        view = self._view
        if view is None or view[0] is not self.layers:
            view = (self.layers, Settings.from_values({key: self.get(key) for key in SETTINGS}))
            self._view = view
        return view[1]

    def get(self, key: str) -> Any:
        """The value that applies for ``key``, by its dotted name (``config show``, the
        Settings screen); code reads ``settings`` instead.

        Raises:
            UnknownSettingError: When ``key`` is not a known setting.
        """
        setting = lookup(key)
        for layer in reversed(self.layers):
            if key in layer.values:
                return copy.copy(layer.values[key])
        return copy.copy(setting.default)

    def origin(self, key: str) -> str:
        """Where the applied value of ``key`` comes from.

        Returns:
            ``default``, ``global: PATH``, ``project: PATH (trusted)`` or
            ``project: PATH (trusted version from TIME)``.

        Raises:
            UnknownSettingError: When ``key`` is not a known setting.
        """
        lookup(key)
        for layer in reversed(self.layers):
            if key in layer.values:
                return layer.origin
        return "default"

    def items(self) -> list[tuple[str, Any, str]]:
        """Every known setting as ``(key, value, origin)``, in table order."""
        return [(key, self.get(key), self.origin(key)) for key in SETTINGS]

    def set(self, key: str, value: Any, scope: Scope = "global") -> str | None:
        """Write a setting to the global or project config file, then reload.

        Args:
            key: A known setting name.
            value: The value; a string is parsed by the setting's type (as typed on
                the command line), anything else is checked as it is.
            scope: ``global`` writes the home's ``config.toml``; ``project`` writes
                the project config found from ``cwd`` (creating
                ``.workbench/config.toml`` in ``cwd`` when there is none).

        Returns:
            A notice when the write does not take effect yet (a project file needs
            trust again), else None. The notice is also added to ``notices``.

        Raises:
            UnknownSettingError: When ``key`` is not a known setting.
            ConfigError: When the value is not valid or the file cannot be
                parsed or written; the file is then unchanged.
        """
        _, notice = set_setting(self.home, self.cwd, key, value, scope)
        self.reload()
        if notice:
            self.notices.append(notice)
        return notice


def set_setting(home: Home, cwd: Path, key: str, value: Any,
                scope: Scope = "global") -> tuple[Path, str | None]:
    """Write one setting without loading the whole config first.

    This lets a person fix a bad value in a file that ``Config.load`` rejects.

    Args:
        home: The workbench home.
        cwd: The folder to find (or create) the project config from.
        key: A known setting name.
        value: The value; a string is parsed by the setting's type.
        scope: ``global`` or ``project``.

    Returns:
        The file written, and a notice when the change does not apply yet.

    Raises:
        UnknownSettingError: When ``key`` is not a known setting.
        ConfigError: When the value or the scope is not valid, or the file cannot
            be parsed or written; the file is then unchanged.
    """
    setting = lookup(key)
    if isinstance(value, str) and setting.type is not str:
        checked = parse_value(key, value)
    else:
        checked = validate(key, value)
    if scope == "global":
        home.ensure()
        write_setting(home.config_file, key, checked)
        return home.config_file, None
    if scope != "project":
        raise ConfigError(f"unknown config scope {scope!r}; use 'global' or 'project'")
    cwd = Path(os.path.abspath(cwd))
    path = find_project_config(cwd, home) or project_config_path(cwd)
    write_setting(path, key, checked)
    check = check_trust(home, path.parent.parent, path.read_bytes())
    if check.state == "trusted":
        return path, None
    if check.state == "changed":
        return path, (f"project config {path} now differs from the version you trusted; "
                      "the trusted version still applies; run `workbench trust` to apply "
                      "the change")
    return path, (f"project config {path} is not trusted yet, so this setting does not "
                  "apply; run `workbench trust` to apply it")
