"""Attach every sub-app and top-level command to the root app.

Each module imported here must stay light at import time: typer only, with the
heavy work imported inside the command functions.
"""

from __future__ import annotations

import typer


def all_subcommands(app: typer.Typer) -> None:
    """Register every area's commands on ``app`` (once: a second call adds nothing)."""
    if app.registered_commands or app.registered_groups:
        return
    # Areas register themselves in the order they appear in ``workbench --help``.
    from workbench.cli.call import call_command
    from workbench.cli.config import config_app, trust_command
    from workbench.cli.doctor import doctor_command
    from workbench.cli.grants import grants_app
    from workbench.cli.daemon import daemon_command
    from workbench.cli.models import models_app
    from workbench.cli.schedule import runs_app, schedule_app
    from workbench.cli.ext import ext_app
    from workbench.cli.mcp import mcp_app
    from workbench.cli.memories import memories_app
    from workbench.cli.notifications import notifications_app
    from workbench.cli.run import run_command
    from workbench.cli.sessions import sessions_app

    app.command("run")(run_command)
    app.add_typer(sessions_app, name="sessions")
    app.add_typer(ext_app, name="ext")
    app.add_typer(mcp_app, name="mcp")
    app.add_typer(memories_app, name="memories")
    app.add_typer(config_app, name="config")
    app.command("trust")(trust_command)
    app.command("call")(call_command)
    app.add_typer(grants_app, name="grants")
    app.command("doctor")(doctor_command)
    app.add_typer(models_app, name="models")
    app.add_typer(schedule_app, name="schedule")
    app.add_typer(runs_app, name="runs")
    app.add_typer(notifications_app, name="notifications")
    app.command("daemon")(daemon_command)
