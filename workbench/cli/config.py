"""``workbench config`` (read and change settings) and ``workbench trust`` (trust a project config).

Values print the way they are typed (``true``, ``["a", "b"]``); ``--json`` prints
JSON for scripts. Notices (an untrusted or changed project config) go to stderr so
stdout stays clean. A config error exits 1 naming the file and place; an unknown
key or a value that does not parse exits 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say

config_app = typer.Typer(help="Read and change settings.", no_args_is_help=True)


def _notify(notices: list[str]) -> None:
    for notice in notices:
        say(f"notice: {notice}", err=True)


@config_app.command("get")
def config_get(
    key: str = typer.Argument(..., metavar="KEY", help="A setting, e.g. tools.timeout_ms."),
    origin: bool = typer.Option(False, "--origin", help="Also print where the value comes from."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: key, value and origin."),
) -> None:
    """Print the value of one setting as it applies here."""
    from workbench.config import Config, format_value, lookup

    with reported():
        lookup(key)
        config = Config.load()
        value, where = config.get(key), config.origin(key)
    _notify(config.notices)
    if as_json:
        say(json.dumps({"key": key, "value": value, "origin": where}))
    elif origin:
        say(f"{format_value(value)}\t{where}")
    else:
        say(format_value(value))


@config_app.command("set")
def config_set(
    key: str = typer.Argument(..., metavar="KEY", help="A setting, e.g. tools.timeout_ms."),
    value: str = typer.Argument(..., metavar="VALUE",
                                help="The value as typed: true/false, a number, text, "
                                     "or a list as JSON or comma-separated."),
    project: bool = typer.Option(False, "--project",
                                 help="Write the project's .workbench/config.toml "
                                      "instead of the global config."),
) -> None:
    """Write a setting to the global config (or the project's), keeping its comments."""
    from workbench.config import Home, format_value, parse_value, set_setting

    with reported():
        home = Home.resolve()
        shown = format_value(parse_value(key, value))
        path, notice = set_setting(home, Path.cwd(), key, value,
                                   "project" if project else "global")
    say(f"{key} = {shown} in {path}")
    _notify([notice] if notice else [])


@config_app.command("path")
def config_path() -> None:
    """Print the global config file and the project config found from here, with its trust."""
    from workbench.config import Home, check_trust, find_project_config
    from workbench.errors import ConfigError

    with reported():
        home = Home.resolve()
        global_file = home.config_file
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
    exists = "" if global_file.exists() else " (not created yet)"
    say(f"global: {global_file}{exists}")
    if project_file is None:
        say(f"project: none found from {Path.cwd()}")
    else:
        say(f"project: {project_file} ({state})")


@config_app.command("list")
def config_list(
    as_json: bool = typer.Option(False, "--json", help="Print JSON: key, value, origin, help."),
) -> None:
    """Print every setting with its value and where the value comes from."""
    from workbench.config import SETTINGS, Config, format_value

    with reported():
        config = Config.load()
        rows = config.items()
    _notify(config.notices)
    if as_json:
        say(json.dumps([
            {"key": key, "value": value, "origin": where, "help": SETTINGS[key].help}
            for key, value, where in rows], indent=2))
        return
    shown = [(key, format_value(value), where) for key, value, where in rows]
    key_width = max(len(key) for key, _, _ in shown)
    value_width = max(len(value) for _, value, _ in shown)
    for key, value, where in shown:
        say(f"{key:<{key_width}}  {value:<{value_width}}  {where}")


def trust_command(
    path: Path | None = typer.Argument(
        None, metavar="[PATH]",
        help="A folder in the project; the current folder when omitted."),
) -> None:
    """Trust the project config found from PATH upward, in its current version."""
    from workbench.config import Home, find_project_config, trust_project
    from workbench.config.document import values_from_text
    from workbench.errors import ConfigError

    with reported():
        home = Home.resolve().ensure()
        start = Path(path or Path.cwd()).absolute()
        if not start.is_dir():
            raise ConfigError("not a folder", where=str(start))
        found = find_project_config(start, home)
        if found is None:
            raise ConfigError(f"no .workbench/config.toml in {start} or any folder above it")
        record = trust_project(home, found.parent.parent)
        keys = sorted(values_from_text(record.content, record.file))
    say(f"trusted {record.file}")
    say(f"sha256 {record.sha256}")
    say(f"it sets: {', '.join(keys)}" if keys else "it sets nothing yet")
