"""Where a plugin is enabled and the settings it gets, from the config files.

A project's config (``.workbench/config.toml``) enables an installed plugin::

    [plugins.echo]
    enabled = true

    [plugins.echo.settings]
    count = 5

``plugins.<id>.enabled`` in the person's global config is the default for every
project; a project's own value overrides it once the owner trusts that config (until
then the trusted version's value, if any, applies: the config's trust, reused).
Settings are layered setting by setting: the manifest's default, then the global
value, then the project's. A project's settings, like its ``enabled``, apply only once
the owner trusts that config (until then the trusted version's, if any: a setting can
widen what a plugin does with the person's files, so a checked-out repository must not
set it unseen). A value the manifest does not declare, or one its schema refuses, is
left out (the value below it applies) and said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.config.document import parse, read_text
from workbench.config.files import Config
from workbench.errors import ConfigError
from workbench.plugins.manifest import PluginManifest


@dataclass
class PluginConfig:
    """How one plugin applies in one folder.

    Attributes:
        enabled: Whether the project (or, with no project value, the global config)
            enables it.
        enabled_from: Where that came from (``default``, the file, or ``untrusted``).
        settings: The values in force, setting by setting.
        origins: Where each value came from (``manifest``, ``global``, ``project``).
        notes: Values left out and why; entries waiting for trust.
    """

    enabled: bool = False
    enabled_from: str = "default"
    settings: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    schedules: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The scheduled tasks asked for, by action: ``{"type", "schedule", "enabled"}``,
    the global entries replaced by the (trusted) project's, action by action, each
    checked against the manifest (``schedule_entries``)."""


def _entry(text: str, source: str, plugin: str, notes: list[str]) -> dict[str, Any]:
    try:
        table = parse(text, source).unwrap().get("plugins", {})
    except ConfigError as exc:
        notes.append(str(exc))
        return {}
    entry = table.get(plugin, {}) if isinstance(table, dict) else {}
    if not isinstance(entry, dict):
        notes.append(f"{source}: plugins.{plugin} must be a table; left out")
        return {}
    return entry


def _file_entry(path: Any, plugin: str, notes: list[str]) -> dict[str, Any]:
    try:
        return _entry(read_text(path), str(path), plugin, notes) if path is not None and path.exists() else {}
    except ConfigError as exc:
        notes.append(str(exc))
        return {}


def _enabled(entry: dict[str, Any], source: str, plugin: str, notes: list[str]) -> bool | None:
    value = entry.get("enabled")
    if value is None or isinstance(value, bool):
        return value
    notes.append(f"{source}: plugins.{plugin}.enabled must be true or false; left out")
    return None


def layered_settings(manifest: PluginManifest, layers: list[tuple[str, dict[str, Any]]],
                     result: PluginConfig) -> None:
    """Put the settings in force into ``result``: the manifest's defaults, then each
    layer's values (lowest first), a refused or undeclared one left out and noted."""
    from jsonschema import Draft202012Validator

    for name, schema in manifest.settings.items():
        if "default" in schema:
            result.settings[name] = schema["default"]
            result.origins[name] = "manifest"
    for origin, values in layers:
        if not isinstance(values, dict):
            result.notes.append(f"{origin}: plugins.{manifest.id}.settings must be a table; left out")
            continue
        for name, value in values.items():
            declared = manifest.settings.get(name)
            if declared is None:
                result.notes.append(f"{origin}: {manifest.id} declares no setting {name!r}; left out")
                continue
            plain = value.unwrap() if hasattr(value, "unwrap") else value
            errors = sorted(Draft202012Validator(declared).iter_errors(plain), key=str)
            if errors:
                result.notes.append(f"{origin}: setting {name!r} of {manifest.id} refused "
                                    f"({errors[0].message[:160]}); left out")
                continue
            result.settings[name] = plain
            result.origins[name] = origin


def plugin_config(config: Config, manifest: PluginManifest) -> PluginConfig:
    """How ``manifest``'s plugin applies in the folder ``config`` was loaded for."""
    result = PluginConfig()
    notes = result.notes
    plugin = manifest.id
    global_entry = _file_entry(config.home.config_file, plugin, notes)
    value = _enabled(global_entry, "global", plugin, notes)
    if value is not None:
        result.enabled, result.enabled_from = value, "global"
    trusted: dict[str, Any] = {}
    if config.project_file is not None:
        project_entry = _file_entry(config.project_file, plugin, notes)
        record = config.trust_record
        if config.project_state in ("trusted", "changed") and record is not None:
            trusted = _entry(record.content, f"{config.project_file} (trusted)", plugin, notes)
        value = _enabled(trusted, "project", plugin, notes)
        if value is not None:
            result.enabled, result.enabled_from = value, "project"
        current = project_entry.get("enabled")
        if config.project_state != "trusted" and isinstance(current, bool) and current != value:
            notes.append(f"{config.project_file}: plugins.{plugin}.enabled = {str(current).lower()} "
                         "waits for `workbench trust`")
        if config.project_state != "trusted" and _plain(project_entry.get("settings")) != _plain(
                trusted.get("settings")):
            notes.append(f"{config.project_file}: plugins.{plugin}.settings as written there wait for "
                         "`workbench trust`" + (" (the trusted version's apply)" if trusted.get("settings")
                                                 else ""))
    layered_settings(manifest, [("global", global_entry.get("settings", {})),
                                ("project", trusted.get("settings", {}))], result)
    result.schedules = schedule_entries(manifest, [("global", global_entry.get("schedules", {})),
                                                   ("project", trusted.get("schedules", {}))], result.notes)
    return result


def schedule_entries(manifest: PluginManifest, layers: list[tuple[str, Any]],
                     notes: list[str]) -> dict[str, dict[str, Any]]:
    """The tasks asked for: each layer's entries (``plugins.<id>.schedules.<action>``:
    ``enabled``, ``type``, ``schedule``) replacing the layer below's, action by action;
    ``type`` and ``schedule`` default to the action's ``default_schedule``. An entry for
    an action the manifest does not declare, with a bad field, or with no schedule at all
    is left out and said so."""
    from workbench.plugins.manifest import CRON_FIELD, INTERVAL

    defaults = {a.get("id"): a.get("default_schedule") for a in manifest.raw.get("actions") or []
                if isinstance(a, dict)}
    found: dict[str, dict[str, Any]] = {}
    for origin, table in layers:
        table = _plain(table)
        if not isinstance(table, dict):
            notes.append(f"{origin}: plugins.{manifest.id}.schedules must be a table; left out")
            continue
        for action, entry in table.items():
            where = f"{origin}: plugins.{manifest.id}.schedules.{action}"
            if action not in defaults:
                notes.append(f"{where}: {manifest.id} declares no action {action!r}; left out")
                continue
            if not isinstance(entry, dict):
                notes.append(f"{where} must be a table; left out")
                continue
            default = defaults[action] or {}
            kind, value = entry.get("type", default.get("type")), entry.get("schedule", default.get("schedule"))
            enabled = entry.get("enabled", True)
            if not isinstance(enabled, bool):
                notes.append(f"{where}.enabled must be true or false; left out")
                continue
            if kind == "cron" and isinstance(value, str) and len(value.split()) == 5 and all(
                    CRON_FIELD.fullmatch(part) for part in value.split()):
                pass
            elif kind == "interval" and isinstance(value, str) and INTERVAL.fullmatch(value):
                pass
            elif kind is None and value is None:
                notes.append(f"{where}: the action has no default_schedule, so the entry must set type and "
                             "schedule; left out")
                continue
            else:
                notes.append(f"{where}: needs type \"cron\" with a five-field line or \"interval\" such as "
                             "\"15m\"; left out")
                continue
            found[action] = {"type": kind, "schedule": value, "enabled": enabled}
    return found


def _plain(value: Any) -> Any:
    """A parsed TOML value as plain data (tomlkit's items compare by more than value)."""
    if hasattr(value, "unwrap"):
        return value.unwrap()
    return value if value is not None else {}
