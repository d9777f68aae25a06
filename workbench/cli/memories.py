"""``workbench memories``: the user's knowledge and skills, and those extensions ship."""

from __future__ import annotations

import datetime as dt
import json

import typer

from workbench.cli.errors import reported

memories_app = typer.Typer(help="List the memories: yours and those extensions ship.",
                           no_args_is_help=True)


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


@memories_app.command("list")
def list_memories(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Your memories (knowledge and skills), then the read-only ones loaded extensions ship,
    each marked with its extension."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        found = host.memories.list()
    if as_json:
        typer.echo(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found:
        typer.echo("No memories yet.")
        return
    width = max(len(memory["title"]) for memory in found)
    for memory in found:
        origin = f"read-only, from {memory['extension']}" if memory["readOnly"] else "yours"
        typer.echo(f"{memory['title']:<{width}}  {memory['kind']:<9}  {_when(memory['updatedAtMs'])}"
                   f"  {origin}")
        if memory.get("summary"):
            typer.echo(f"{'':<{width}}  {memory['summary']}")
