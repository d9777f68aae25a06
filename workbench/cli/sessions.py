"""``workbench sessions``: list the chat sessions and show one."""

from __future__ import annotations

import datetime as dt
import json

import typer

from workbench.cli.errors import reported

sessions_app = typer.Typer(help="List and show chat sessions.", no_args_is_help=True)


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


@sessions_app.command("list")
def list_sessions(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, help="At most this many."),
) -> None:
    """The sessions, newest first."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        rows = host.sessions(limit=limit)
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        typer.echo("No sessions yet. Start one with `workbench` or `workbench run \"…\"`.")
        return
    for row in rows:
        typer.echo(f"{row['id'][:12]}  {_when(row.get('updated_at'))}  "
                   f"{row.get('message_count', 0):>4} msgs  {row.get('title') or ''}")


@sessions_app.command("show")
def show_session(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One session with its messages."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        session = host.session(session_id)
        messages = host.messages(session["id"])
    if as_json:
        typer.echo(json.dumps({"session": session, "messages": messages}, indent=2, default=str))
        return
    typer.echo(f"session {session['id']}  model {session.get('model') or '-'}  "
               f"started {_when(session.get('created_at'))}")
    for message in messages:
        role = message["role"]
        if message.get("content"):
            typer.echo(f"\n[{role}] {message['content']}")
        for call in message.get("tool_calls") or []:
            typer.echo(f"\n[{role}] → {call['name']} {json.dumps(call.get('arguments') or {})}")
