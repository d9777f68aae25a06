"""``workbench plugin …``: validate, install, upgrade, remove and list plugins, and stop
their instances. Every command asks the core (``core/plugin_service.py``); none opens
a host, so none starts a plugin.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say
from workbench.text import visible

if TYPE_CHECKING:
    from workbench.core.plugin_service import InstallPlan

plugin_app = typer.Typer(help="Install and manage plugins (programs that serve tools over HTTP).",
                         no_args_is_help=True)


def _service():
    from workbench.core.plugin_service import open_plugins

    return open_plugins()


def _show_plan(plan: InstallPlan) -> None:
    manifest = plan.manifest
    verb = f"Upgrade {manifest.id} {plan.previous} → {manifest.version}" if plan.upgrade else \
        f"Install {manifest.id} {manifest.version} ({manifest.name})"
    say(verb)
    if plan.capabilities:
        say("It asks to:")
        for capability, words in plan.capabilities:
            new = "  (new)" if capability in plan.added else ""
            say(f"  {capability:<22} {words}{new}")
    else:
        say("It asks for no capability.")
    tools = ", ".join(f"plugin_{t.name}" for t in manifest.tools) or "none"
    say(f"Tools: {tools}")


def _install(path: Path, *, upgrade: bool, yes: bool) -> None:
    with reported():
        service = _service()
        plan = service.plan(path, upgrade=upgrade)
        _show_plan(plan)
        if not yes and not typer.confirm(visible("Approve these capabilities?"), default=False):
            say("Nothing was installed.")
            raise typer.Exit(1)
        installed = asyncio.run(service.install(plan))
        say(f"{'Upgraded' if upgrade else 'Installed'} {installed.manifest.id} {installed.manifest.version}. "
            f"Enable it in a project's .workbench/config.toml: [plugins.{installed.manifest.id}] enabled = true")


@plugin_app.command("validate")
def validate_command(path: Path = typer.Argument(..., help="The plugin's folder (holding plugin.json).")) -> None:
    """Check a plugin's folder as install would, without installing it."""
    with reported():
        from workbench.core.plugin_service import PluginService

        manifest = PluginService.validate(path)
        say(f"{manifest.id} {manifest.version}: valid ({len(manifest.tools)} tools, "
            f"{len(manifest.actions)} actions, {len(manifest.settings)} settings)")
        if manifest.runnable is not None:
            say(f"note: this workbench cannot run it: {manifest.runnable}")


@plugin_app.command("install")
def install_command(path: Path = typer.Argument(..., help="The plugin's folder."),
                    yes: bool = typer.Option(False, "--yes", "-y", help="Approve the capabilities shown.")) -> None:
    """Install a plugin after showing the capabilities it asks for."""
    _install(path, upgrade=False, yes=yes)


@plugin_app.command("upgrade")
def upgrade_command(path: Path = typer.Argument(..., help="The plugin's new folder."),
                    yes: bool = typer.Option(False, "--yes", "-y", help="Approve the capabilities shown.")) -> None:
    """Replace an installed plugin with a new version (its data is kept)."""
    _install(path, upgrade=True, yes=yes)


@plugin_app.command("remove")
def remove_command(plugin: str = typer.Argument(..., help="The plugin's id."),
                   purge: bool = typer.Option(False, "--purge", help="Delete its data too.")) -> None:
    """Stop a plugin's instances and remove it (its data is kept unless --purge)."""
    with reported():
        if not asyncio.run(_service().remove(plugin, purge=purge)):
            say(f"plugin {plugin} is not installed")
            raise typer.Exit(1)
        say(f"Removed {plugin}" + (" and its data." if purge else "; its data is kept (--purge deletes it)."))


@plugin_app.command("stop")
def stop_command(plugin: str = typer.Argument(..., help="The plugin's id.")) -> None:
    """Stop every running instance of a plugin."""
    with reported():
        service = _service()
        service._installed(plugin)
        count = asyncio.run(service.stop(plugin))
        say(f"Stopped {count} instance{'s' if count != 1 else ''} of {plugin}.")


@plugin_app.command("list")
def list_command(as_json: bool = typer.Option(False, "--json", help="One JSON object per plugin.")) -> None:
    """The installed plugins, whether this folder's project enables each, and their
    running instances."""
    with reported():
        service = _service()
        rows = service.rows()
        for notice in service.notices():
            say(f"notice: {notice}", err=True)
        if as_json:
            for row in rows:
                say(json.dumps(row.to_json()))
            return
        if not rows:
            say("No plugins installed (workbench plugin install PATH).")
        for row in rows:
            here = "enabled here" if row.enabled else "not enabled here"
            say(f"{row.id} {row.version}  {row.name}  [{here}]  tools: {', '.join(row.tools) or 'none'}")
            say(f"  capabilities: {', '.join(row.capabilities) or 'none'}")
            if row.runnable:
                say(f"  cannot run: {row.runnable}")
            for instance in row.instances:
                say(f"  running for {instance.project}: pid {instance.pid}, port {instance.port} "
                    f"(workbench plugin stop {row.id})")
            for note in row.notes:
                say(f"  note: {note}")
        if rows:
            from workbench.core.plugin_service import plugin_runtime_note

            say(f"Runtime: {plugin_runtime_note()}.")


@plugin_app.command("open")
def open_command(plugin: str = typer.Argument(..., help="The plugin's id."),
                 panel: str = typer.Argument("", help="The panel's id (its first panel by default).")) -> None:
    """Serve a panel's web bundle on loopback for a browser, under the seed's content
    security policy and bridge; print its link and serve until Ctrl-C."""
    import signal

    from workbench.core.host import Host

    async def serve(host: Host) -> None:
        chosen = panel or next((p.id for p in host.plugin_ui.panes() if p.plugin == plugin), "")
        url = await host.plugin_ui.web_url(plugin, chosen)
        say(f"{plugin} {chosen}: {url}  (Ctrl-C stops)")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
        host.plugin_ui.web.close()
        await host.ashutdown()

    with reported(), Host.open(cwd=Path.cwd()) as host:
        asyncio.run(serve(host))
