"""``workbench doctor``: what the sandbox can enforce on this machine, and why not."""

from __future__ import annotations

import json

import typer
from workbench.cli.output import say


def doctor_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Try every sandbox layer and report which work; exit 1 when tools cannot run here."""
    from workbench.core.checks import sandbox_report

    report = sandbox_report()
    if as_json:
        say(json.dumps(report.to_json(), indent=2))
    else:
        for check in report.checks:
            mark = "ok  " if check.ok else ("FAIL" if check.required else "warn")
            say(f"{mark}  {check.name:<17} {check.detail}")
        say("Tools run sandboxed here." if report.ready else
                   "Tools are refused here unless you list them in sandbox.unsandboxed_tools.")
        from workbench.core.plugin_service import plugin_runtime_note

        say(f"Plugins: {plugin_runtime_note()}.")
    raise typer.Exit(0 if report.ready else 1)
