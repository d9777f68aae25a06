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
    from workbench.core.config_files import setting

    with reported():
        row, notices = setting(key)
    _notify(notices)
    if as_json:
        say(json.dumps({"key": key, "value": row.value, "origin": row.origin}))
    elif origin:
        say(f"{row.shown}\t{row.origin}")
    else:
        say(row.shown)


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
    from workbench.core.config_files import write

    with reported():
        written = write(key, value, project=project)
    say(f"{key} = {written.shown} in {written.path}")
    _notify([written.notice] if written.notice else [])


@config_app.command("path")
def config_path() -> None:
    """Print the global config file and the project config found from here, with its trust."""
    from workbench.core.config_files import config_files

    with reported():
        files = config_files()
    exists = "" if files.global_exists else " (not created yet)"
    say(f"global: {files.global_file}{exists}")
    if files.project_file is None:
        say(f"project: none found from {Path.cwd()}")
    else:
        say(f"project: {files.project_file} ({files.project_state})")


@config_app.command("list")
def config_list(
    as_json: bool = typer.Option(False, "--json", help="Print JSON: key, value, origin, help."),
) -> None:
    """Print every setting with its value and where the value comes from."""
    from workbench.core.config_files import settings

    with reported():
        rows, notices = settings()
    _notify(notices)
    if as_json:
        say(json.dumps([{"key": row.key, "value": row.value, "origin": row.origin, "help": row.help}
                        for row in rows], indent=2))
        return
    key_width = max(len(row.key) for row in rows)
    value_width = max(len(row.shown) for row in rows)
    for row in rows:
        say(f"{row.key:<{key_width}}  {row.shown:<{value_width}}  {row.origin}")


def trust_command(
    path: Path | None = typer.Argument(
        None, metavar="[PATH]",
        help="A folder in the project; the current folder when omitted."),
) -> None:
    """Trust the project config found from PATH upward, in its current version."""
    from workbench.core.config_files import trust

    with reported():
        trusted = trust(path)
    say(f"trusted {trusted.file}")
    say(f"sha256 {trusted.sha256}")
    say(f"it sets: {', '.join(trusted.keys)}" if trusted.keys else "it sets nothing yet")
