"""``workbench changes``: the one change list — the change sets the shell applied to
project folders and the changes extensions' tools made outside them (a calendar event,
a contact) — list them, show one, undo one (``host.changes``, the core the TUI's ``u``
calls too)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say

changes_app = typer.Typer(help="List, show and undo the changes shell commands and "
                          "extensions' tools made.",
                          no_args_is_help=True)


def _when(ms: int | None) -> str:
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S") if ms else "-"


def _summary(row: dict[str, Any]) -> str:
    files = (str(row["extension"] or "") if row.get("kind") == "outside"
             else f"{row['files']} file{'' if row['files'] == 1 else 's'}")
    return (f"{row['id']:>5}  {_when(row['created_at'])}  {row['state']:<13} {files:<9} "
            f"{row['command'][:60]!s}")


@changes_app.command("list")
def list_changes(
    session: str | None = typer.Option(None, "--session", help="Only the change sets of this chat."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="At most this many."),
) -> None:
    """The change sets, newest first: id, when, state, how many files, the command."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        session_id = host.chats.get(session)["id"] if session else None
        rows = host.changes.list(session_id, limit=limit)
    if as_json:
        say(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        say("No change sets.")
        return
    for row in rows:
        say(_summary(row))


@changes_app.command("show")
def show(
    change_set: int = typer.Argument(..., metavar="ID", help="The change set."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One change set: its command, folder, state and each path it changed."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        found = host.changes.show(change_set)
    if as_json:
        say(json.dumps(found, indent=2, ensure_ascii=False))
        return
    say(f"change set {found['id']}: {found['state']}, {_when(found['created_at'])}")
    if found.get("kind") == "outside":
        say(f"  change   {found['command']}")
        say(f"  by       {found['extension']} (call {found['call_id']})")
        say(f"  undo     {found['undo_tool']}")
        if found["note"]:
            say(f"  note     {found['note']}")
        return
    say(f"  folder   {found['folder']}")
    say(f"  command  {found['command']}")
    if found["note"]:
        say(f"  note     {found['note']}")
    for row in found["files"]:
        extra = f"  -> {row['copy']}" if row["copy"] else ""
        undo = "" if row["undoable"] else "  (not undoable)"
        say(f"  {row['action']:<9} {row['path']}{extra}{undo}")
        if row["note"]:
            say(f"            {row['note']}")


@changes_app.command("undo")
def undo(
    change_set: int = typer.Argument(..., metavar="ID", help="The change set to undo."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    grant: list[str] = typer.Option(
        [], "--grant", "-g", metavar="[TOOL:]KIND[:VALUE]",
        help="Grant, for this undo, a permission its undo tool asks for: write:PATH, read, "
             "TOOL:write… (repeatable; read as `workbench run --grant`); anything else "
             "it asks for is refused."),
) -> None:
    """Undo a change: put back what a change set changed (a file you changed since keeps
    your version), or run the undo of an extension's change (newest first).

    An extension's undo tool that asks for a permission (an Office document's folder)
    gets it only from --grant: nothing here waits for an answer."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        if grant:
            from workbench.core.run_grants import resolve_run_grants
            from workbench.headless.responder import HeadlessResponder

            host.gateway.responder = HeadlessResponder(
                "deny", grants=resolve_run_grants(host, grant),
                delegate_timeout=host.config.settings.headless.delegate_timeout_s)
        answer = host.changes.undo(change_set)
    if as_json:
        say(json.dumps(answer, indent=2, ensure_ascii=False))
        return
    restored = len(answer["restored"])
    if "result" in answer:
        say(f"change set {change_set}: {answer['state']} ({answer['restored'][0]})")
        return
    say(f"change set {change_set}: {answer['state']} ({restored} path{'' if restored == 1 else 's'} "
        "put back)")
    for kept in answer["kept"]:
        say(f"  kept {kept['path']}: {kept['why']}")
