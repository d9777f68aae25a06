"""``workbench schedule`` and ``workbench runs``: scheduled prompts and their runs.

``schedule add|list|show|edit|rm|pause|resume|run-now`` manage the schedules (and
their run cards); ``runs list|show|resume`` the runs. ``runs exec ID`` (hidden) is
the child process the supervisor starts for one run.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from typing import Any

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say, terminal
from workbench.errors import ExitCode

schedule_app = typer.Typer(help="Schedule prompts to run on their own (under `workbench daemon`).",
                           no_args_is_help=True)
runs_app = typer.Typer(help="The runs of scheduled prompts: list, show, resume a paused one.",
                       no_args_is_help=True)

RUN_EXIT = {"ok": ExitCode.OK, "paused": ExitCode.PERMISSION_DENIED}


def _when(ms: int | None) -> str:
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S") if ms else "-"


def _echo_json(data: Any) -> None:
    say(json.dumps(data, indent=2, default=str, ensure_ascii=False))


def _schedule_from(at, every, weekly, monthly, yearly, cron) -> dict[str, Any] | None:
    from workbench.core.schedule_forms import from_flags, local_zone

    return from_flags(at=at, every=every, weekly=weekly, monthly=monthly, yearly=yearly, cron=cron,
                      zone=local_zone())


AT = typer.Option(None, "--at", metavar="ISO-TIME", help="Once, at this local time (2025-03-01T09:00).")
EVERY = typer.Option(None, "--every", metavar="MINUTES", min=1, help="Every this many minutes.")
WEEKLY = typer.Option(None, "--weekly", metavar="DAYS@HH:MM", help="On these days (mon,wed or mon-fri).")
MONTHLY = typer.Option(None, "--monthly", metavar="DAY@HH:MM", help="On this day of each month.")
YEARLY = typer.Option(None, "--yearly", metavar="MM-DD@HH:MM", help="On this date each year.")
CRON = typer.Option(None, "--cron", metavar="EXPR", help="A cron expression of five fields.")
MODEL = typer.Option(None, "--model", "-m", help="The model its runs use (default: the configured one).")
GRANT = typer.Option([], "--grant", "-g", metavar="TOOL:KIND[:VALUE]",
                     help="Approve a permission a tool declares, for its runs (repeatable).")
EXTENSION = typer.Option(None, "--extension", "-e", metavar="NAME",
                         help="Switch only these extensions on in its runs (repeatable; default: all loaded).")
ON_NEED = typer.Option(None, "--on-need", help="When a run needs more than its card: fail or pause.")
JSON = typer.Option(False, "--json", help="Print JSON.")


def _next(row: dict[str, Any]) -> str:
    """When it fires next; ``never`` for a schedule that cannot fire at all."""
    return "never" if row.get("never") else _when(row["next_due_at"])


def _line(row: dict[str, Any]) -> str:
    last = row.get("last_run")
    state = "on " if row["enabled"] else "off"
    ran = f"last {last['status']} {_when(last['started_at'] or last['ended_at'])}" if last else "never ran"
    failures = f", {row['failures']} failed" if row.get("failures") else ""
    return (f"{row['id']:>4}  {state}  next {_next(row):<19}  {row['description']:<28}  "
            f"{row['title']}  ({ran}{failures})")


def _show(row: dict[str, Any]) -> None:
    card = row.get("card") or {}
    say(f"schedule {row['id']}: {row['title']}  ({'on' if row['enabled'] else 'paused'})")
    say(f"  when      {row['description']}{'  (runs missed windows once)' if row['run_missed'] else ''}")
    say(f"  next      {_next(row)}" + (f"  ({row['never']})" if row.get("never") else ""))
    say(f"  prompt    {row['instruction']}")
    say(f"  source    {row['source']}")
    if card:
        say(f"  model     {card['model']}   on need: {card['on_need']}   folder: {card['cwd']}")
        say(f"  extensions {', '.join(card['extensions']) or '(none)'}")
        for grant in card["grants"]:
            say(f"  grant     {grant['tool']} {grant['kind']} {grant['value']}".rstrip())
    else:
        say("  card      (frozen when a supervisor first sees it)")
    for run in row.get("runs", []):
        say(f"  run {run['id']:>4}  {run['status']:<11}  {_when(run['started_at'] or run['ended_at'])}"
                   f"  {run['error'] or ''}".rstrip())


@schedule_app.command("add")
def add(title: str = typer.Option(..., "--title", "-t", help="A short name."),
        prompt: str = typer.Option(..., "--prompt", "-p", help="The prompt each run sends."),
        at: str | None = AT, every: int | None = EVERY, weekly: str | None = WEEKLY,
        monthly: str | None = MONTHLY, yearly: str | None = YEARLY, cron: str | None = CRON,
        run_missed: bool = typer.Option(False, "--run-missed",
                                        help="Run once after windows missed while nothing ran."),
        model: str | None = MODEL, grant: list[str] = GRANT, extension: list[str] | None = EXTENSION,
        on_need: str | None = ON_NEED, as_json: bool = JSON) -> None:
    """Schedule a prompt; say when with one of --at, --every, --weekly, --monthly, --yearly
    or --cron (local time)."""
    from workbench.core.host import Host
    from workbench.errors import WorkbenchError

    with reported():
        schedule = _schedule_from(at, every, weekly, monthly, yearly, cron)
        if schedule is None:
            raise WorkbenchError("say when: --at, --every, --weekly, --monthly, --yearly or --cron",
                                 exit_code=ExitCode.USAGE)
        with Host.open(model=model, defer_extensions=True) as host:
            row = host.schedules.add_schedule(title=title, instruction=prompt, schedule=schedule,
                                    run_missed=run_missed, model=model, extensions=extension or None,
                                    grants=host.schedules.card_grants(grant), on_need=on_need)
    if as_json:
        _echo_json(row)
    else:
        say(f"Scheduled {row['id']}: {row['title']} — {row['description']}, next "
                   f"{_when(row['next_due_at'])}. Runs fire while `workbench daemon` (or the TUI) runs.")


@schedule_app.command("list")
def list_schedules(as_json: bool = JSON) -> None:
    """The schedules, their next time, last run and failures."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        rows = host.schedules()
        holder = host.schedules.scheduler_holder()
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        say("No schedules yet. Add one with `workbench schedule add --title … --prompt … --every 60`.")
    for row in rows:
        say(_line(row))
    if rows and holder is None:
        say("\nNo scheduler is running for this home: start `workbench daemon` (or the TUI).")


@schedule_app.command("show")
def show(schedule_id: int = typer.Argument(..., metavar="ID"), as_json: bool = JSON) -> None:
    """One schedule, its run card and its last runs."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        row = host.schedules.schedule(schedule_id)
    _echo_json(row) if as_json else _show(row)


@schedule_app.command("edit")
def edit(schedule_id: int = typer.Argument(..., metavar="ID"),
         title: str | None = typer.Option(None, "--title", "-t"),
         prompt: str | None = typer.Option(None, "--prompt", "-p"),
         at: str | None = AT, every: int | None = EVERY, weekly: str | None = WEEKLY,
         monthly: str | None = MONTHLY, yearly: str | None = YEARLY, cron: str | None = CRON,
         run_missed: bool | None = typer.Option(None, "--run-missed/--no-run-missed"),
         model: str | None = MODEL, grant: list[str] = GRANT, extension: list[str] | None = EXTENSION,
         clear_grants: bool = typer.Option(False, "--clear-grants", help="Drop the approved grants first."),
         on_need: str | None = ON_NEED, as_json: bool = JSON) -> None:
    """Change a schedule or its run card (a new time counts from now)."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        row = host.schedules.edit_schedule(schedule_id, title=title, instruction=prompt,
                                 schedule=_schedule_from(at, every, weekly, monthly, yearly, cron),
                                 run_missed=run_missed, model=model, extensions=extension or None,
                                 add_grants=host.schedules.card_grants(grant), clear_grants=clear_grants,
                                 on_need=on_need)
    _echo_json(row) if as_json else _show(row)


def _simple(action: str, schedule_id: int, as_json: bool) -> None:
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        row = getattr(host.schedules, f"{action}_schedule")(schedule_id)
    if as_json:
        _echo_json(row)
    else:
        say(f"{action.capitalize()}d {row['id']}: {row['title']} (next {_when(row['next_due_at'])})")


@schedule_app.command("pause")
def pause(schedule_id: int = typer.Argument(..., metavar="ID"), as_json: bool = JSON) -> None:
    """Stop firing a schedule until it is resumed."""
    _simple("pause", schedule_id, as_json)


@schedule_app.command("resume")
def resume(schedule_id: int = typer.Argument(..., metavar="ID"), as_json: bool = JSON) -> None:
    """Fire a paused schedule again (what passed while paused is not missed)."""
    _simple("resume", schedule_id, as_json)


@schedule_app.command("rm")
def remove(schedule_id: int = typer.Argument(..., metavar="ID"), as_json: bool = JSON) -> None:
    """Remove a schedule; its runs stay listed."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        host.schedules.remove_schedule(schedule_id)
    _echo_json({"removed": schedule_id}) if as_json else say(f"Removed schedule {schedule_id}.")


def _finish(run: dict[str, Any], as_json: bool) -> None:
    if as_json:
        _echo_json(run)
    else:
        say(f"run {run['id']}: {run['status']}" + (f" — {run['error']}" if run.get("error") else ""))
        if run.get("result"):
            say(run["result"])
    raise typer.Exit(int(RUN_EXIT.get(run.get("status"), ExitCode.ERROR)))


@schedule_app.command("run-now")
def run_now(schedule_id: int = typer.Argument(..., metavar="ID"), as_json: bool = JSON) -> None:
    """Run a schedule once now, under its run card, and wait for the outcome."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        run = asyncio.run(host.schedules.run_schedule_now(schedule_id))
    _finish(run, as_json)


@runs_app.command("list")
def list_runs(schedule: int | None = typer.Option(None, "--schedule", "-s", metavar="ID"),
              status: list[str] = typer.Option([], "--status", help="Only runs with this status (repeatable)."),
              limit: int = typer.Option(50, "--limit", "-n", min=1), as_json: bool = JSON) -> None:
    """Runs of scheduled prompts, newest first."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        rows = host.schedules.runs(schedule, limit=limit, statuses=tuple(status))
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        say("No runs yet.")
    for run in rows:
        say(f"{run['id']:>5}  {run['status']:<11}  {_when(run['started_at'] or run['ended_at'])}  "
                   f"{run['fired_by']:<8}  {run['title']}" + (f" — {run['error']}" if run["error"] else ""))


@runs_app.command("show")
def show_run(run_id: int = typer.Argument(..., metavar="ID"), as_json: bool = JSON) -> None:
    """One run: status, times, session, error, the reply."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        run = host.schedules.run(run_id)
    if as_json:
        _echo_json(run)
        return
    for key in ("id", "title", "status", "fired_by", "due_at", "started_at", "ended_at", "session_id",
                "error", "log"):
        value = _when(run[key]) if key.endswith("_at") else run[key]
        say(f"{key:<11} {value if value is not None else '-'}")
    if run.get("result"):
        say(f"\n{run['result']}")


@runs_app.command("resume")
def resume_run(run_id: int = typer.Argument(..., metavar="ID"),
               approve: bool = typer.Option(False, "--approve",
                                            help="Add the permissions it needed to the schedule's card."),
               as_json: bool = JSON) -> None:
    """Continue a paused run in its session (after approving what it needed)."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        run = asyncio.run(host.schedules.resume_run(run_id, approve=approve))
    _finish(run, as_json)


@runs_app.command("exec", hidden=True)
def exec_run(run_id: int = typer.Argument(..., metavar="ID")) -> None:
    """Execute one recorded run (the supervisor's child process)."""
    from workbench.core.runs import execute_run

    with reported():
        run = asyncio.run(execute_run(run_id, out=terminal()))
    say(json.dumps({"type": "run_ended", **run}, default=str, ensure_ascii=False))
