"""Attach every sub-app and top-level command to the root app.

Each module imported here must stay light at import time: typer only, with the
heavy work imported inside the command functions. A command line that names one
command (``workbench call …``) registers that one alone (``for_arguments``): the other
areas' modules are not imported and typer builds no parameters for them.
"""

from __future__ import annotations

from importlib import import_module

import typer

COMMANDS: dict[str, tuple[str, str, bool]] = {
    "run": ("run", "run_command", False),
    "sessions": ("sessions", "sessions_app", True),
    "ext": ("ext", "ext_app", True),
    "mcp": ("mcp", "mcp_app", True),
    "plugin": ("plugin", "plugin_app", True),
    "memories": ("memories", "memories_app", True),
    "config": ("config", "config_app", True),
    "trust": ("config", "trust_command", False),
    "call": ("call", "call_command", False),
    "grants": ("grants", "grants_app", True),
    "changes": ("changes", "changes_app", True),
    "bundle": ("bundle", "bundle_app", True),
    "doctor": ("doctor", "doctor_command", False),
    "models": ("models", "models_app", True),
    "schedule": ("schedule", "schedule_app", True),
    "runs": ("schedule", "runs_app", True),
    "notifications": ("notifications", "notifications_app", True),
    "daemon": ("daemon", "daemon_command", False),
}
"""Each command's name: its module under ``workbench.cli``, the object there, and whether
it is a sub-app (``add_typer``) or a command. In the order of ``workbench --help``."""

ROOT_VALUED = frozenset({"--model"})
"""The root's options that take a value (the word after one is not a command)."""


def _register(app: typer.Typer, name: str) -> None:
    module, attr, group = COMMANDS[name]
    found = getattr(import_module(f"workbench.cli.{module}"), attr)
    if group:
        app.add_typer(found, name=name)
    else:
        app.command(name)(found)


def _registered(app: typer.Typer) -> set[str | None]:
    return ({command.name for command in app.registered_commands}
            | {group.name for group in app.registered_groups})


def all_subcommands(app: typer.Typer) -> None:
    """Register every area's commands on ``app``, in the order of ``COMMANDS`` (once: a
    second call adds nothing)."""
    if set(COMMANDS) <= _registered(app):
        return
    app.registered_commands.clear()  # one registered alone comes back in its place
    app.registered_groups.clear()
    for name in COMMANDS:
        _register(app, name)


def command_named(args: list[str]) -> str | None:
    """The command ``args`` names, when it is one known here; None when they name none
    (the TUI), or ask for help, or name something unknown (so that typer's answer can
    list every command)."""
    words = iter(args)
    for word in words:
        if word in ("--help", "-h"):
            return None
        if word in ROOT_VALUED:
            next(words, None)
        elif word.startswith("--model="):
            continue
        elif word.startswith("-"):
            return None if word == "--" else ""
        else:
            return word if word in COMMANDS else None
    return ""


def for_arguments(app: typer.Typer, args: list[str]) -> None:
    """Register what the command line ``args`` needs: the one command it names, none
    when it names none (the TUI, ``--version``), every one otherwise (``--help``, an
    unknown command or option: typer's answer then lists them all)."""
    name = command_named(args)
    if name is None:
        all_subcommands(app)
    elif name and name not in _registered(app):
        _register(app, name)
