"""``workbench daemon``: the supervisor in the foreground, for a terminal or a systemd unit.

It fires scheduled prompts on time with no TUI open, records every run, and stops
idle warm workers. A second daemon of the same home says who holds the scheduler
and stands by until it can take over. SIGTERM or Ctrl-C stops it cleanly: running
runs get a few seconds, then are killed and recorded failed, and the lock is let go.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import signal
from typing import Any

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say


def _stamp() -> str:
    return dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")


def _plain(event: Any) -> str | None:
    """One log line for the events a person watching the daemon cares about."""
    from workbench.events import Notice
    from workbench.events import ProcessStateChanged, ScheduleFired, ScheduleRunEnded

    if isinstance(event, ProcessStateChanged) and not event.name.startswith("run:"):
        return f"{event.name}: {event.new}" + (f" — {event.reason}" if event.reason else "")
    if isinstance(event, ScheduleFired):
        return f"run {event.run_id} started: {event.title} ({event.fired_by})"
    if isinstance(event, ScheduleRunEnded):
        return (f"run {event.run_id} {event.status}: {event.title}"
                + (f" — {event.error}" if event.error else ""))
    if isinstance(event, Notice):
        return f"{event.level}: {event.message}"
    return None


def daemon_command(
    jsonl: bool = typer.Option(False, "--jsonl", help="Print every event as a JSON line."),
) -> None:
    """Run the supervisor in the foreground: scheduled prompts fire, idle workers stop.

    Stops cleanly on SIGTERM or Ctrl-C.
    """
    from workbench.core.host import Host
    from workbench.headless.pipes import OutputClosed

    stop = asyncio.Event()
    closed: list[OutputClosed] = []

    def write(event: Any) -> None:
        if closed:
            return
        if jsonl:
            line = json.dumps(event.to_json(), default=str, ensure_ascii=False)
        else:
            text = _plain(event)
            line = f"{_stamp()} {text}" if text else None
        if line:
            try:
                say(line)
            except OutputClosed as exc:  # nobody reads it any more: stop as on SIGTERM
                closed.append(exc)
                stop.set()

    async def main(host: Host) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        host.bus.subscribe(write)
        try:
            await host.schedules.supervisor(refresh_extensions=True).run(stop)
        finally:
            await host.aclose()

    with reported():
        host = Host.open(defer_extensions=True)
        asyncio.run(main(host))
    if closed:
        raise closed[0]
