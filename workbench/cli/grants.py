"""``workbench grants``: what each tool may reach, why, and taking it back."""

from __future__ import annotations

import datetime as dt
import json

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say

HOLDER_HELP = "A tool's name or EXTENSION.TOOL, or a provider as TYPE:EXTENSION/NAME."

grants_app = typer.Typer(help="List, explain and revoke what tools were granted.", no_args_is_help=True)


def _when(ms: int | None) -> str:
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms else "-"


@grants_app.command("list")
def list_grants(
    tool: str | None = typer.Option(None, "--tool", "-t", help="Only this tool (EXTENSION.TOOL)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Every standing grant and denial."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        rows = host.grants.standing(tool)
    if as_json:
        say(json.dumps(rows, indent=2))
        return
    if not rows:
        say("No grants yet.")
    for row in rows:
        say(f"{row['id']:>4}  {row['tool']:<28} {row['scope']:<8} {row['kind']:<9} "
                   f"{row['value']}  ({_when(row.get('created_at'))})")


@grants_app.command("explain")
def explain(
    tool: str = typer.Argument(..., help=HOLDER_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """For each permission TOOL declares: granted, denied, not granted, or for an
    optional one undecided or declined (this session); by which grant, when, in which scope;
    then the latest network requests the sandbox's proxy refused it, and why."""
    from workbench.core.host import Host
    from workbench.ctx_spec import net_text

    with reported(), Host.open() as host:
        rows = host.grants.explain(tool)
    if as_json:
        say(json.dumps(rows, indent=2))
        return
    if not rows:
        say(f"{tool} declares no permissions: it can reach nothing but its own folder.")
    for row in rows:
        if row["state"] == "refused":  # a request the network proxy refused, not a permission
            say(f"{'refused':<12} net {row['value']} ({row['status']}, {_when(row['at'])})")
            say(f"             why: {row['reason']}")
            continue
        grant = row["grant"]
        how = f"by grant {grant['id']} ({grant['scope']}, {_when(grant['created_at'])})" if grant else ""
        if row["state"] == "not applicable":
            how = "(not on this system: skipped)"
        optional = " (optional)" if row["optional"] else ""
        value = net_text(row["value"]) if row["kind"] == "net" else row["value"]
        say(f"{row['state']:<12} {row['kind']} {value}{optional} {how}".rstrip())
        say(f"             why: {row['reason']}")


@grants_app.command("revoke")
def revoke(
    tool: str = typer.Argument(..., help=HOLDER_HELP),
    kind: str | None = typer.Argument(None, help="Only grants of this kind."),
    value: str | None = typer.Argument(None, help="Only the grant with this value."),
) -> None:
    """Take back a tool's grants (and denials): all of them, of one kind, or one."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        removed = host.grants.revoke(tool, kind, value)
    say(f"Revoked {removed} grant{'s' if removed != 1 else ''}.")
