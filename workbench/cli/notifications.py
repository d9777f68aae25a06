"""``workbench notifications``: what the workbench kept for the person to see (a scheduled
run that failed, paused or timed out, a supervisor that stopped), and marking it read."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say
from workbench.errors import ExitCode

notifications_app = typer.Typer(help="List notifications and mark them read.", no_args_is_help=True)


def _when(ms: int | None) -> str:
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms else "-"


def _lines(row: dict[str, Any]) -> list[str]:
    mark = "*" if row["read_at"] is None else " "
    run = f"  (run {row['run_id']})" if row.get("run_id") else ""
    lines = [f"{mark} {row['id']:>4}  {_when(row['at'])}  {row['level']:<7}  {row['title']}{run}"]
    lines += [f"        {line}" for line in str(row["body"]).splitlines() if line.strip()]
    return lines


@notifications_app.command("list")
def list_notifications(
    unread: bool = typer.Option(False, "--unread", help="Only those not read yet."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, help="At most this many."),
) -> None:
    """The notifications, newest first; * marks those not read yet."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        rows = host.schedules.notifications(unread_only=unread, limit=limit)
    if as_json:
        say(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        say("No unread notifications." if unread else "No notifications.")
        return
    for row in rows:
        for line in _lines(row):
            say(line)


@notifications_app.command("read")
def read(
    ids: list[int] | None = typer.Argument(None, metavar="[ID]...", help="The notifications to mark read."),
    every: bool = typer.Option(False, "--all", help="Mark every notification read."),
) -> None:
    """Mark notifications read: the ones named, or all of them with --all."""
    from workbench.core.host import Host
    from workbench.errors import WorkbenchError

    with reported():
        if bool(ids) == every:
            raise WorkbenchError("name the notifications to mark read, or give --all (not both)",
                                 exit_code=ExitCode.USAGE)
        with Host.open(defer_extensions=True) as host:
            if every:
                marked = host.schedules.mark_notifications_read(None)
            else:
                known = {row["id"] for row in host.schedules.notifications(limit=None)}
                unknown = [str(n) for n in ids if n not in known]
                if unknown:
                    raise WorkbenchError(f"no notification {', '.join(unknown)}; "
                                         "`workbench notifications list` shows them")
                marked = host.schedules.mark_notifications_read(list(ids))
    say(f"Marked {marked} notification{'' if marked == 1 else 's'} read.")
