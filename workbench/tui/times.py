"""Times as a person reads them on screen: local time (the zone schedules use), to the
minute, and how long ago or ahead when that is what matters."""

from __future__ import annotations

import datetime as dt

from workbench.core.schedule_forms import local_zone


def when(ms: int | None, *, seconds: bool = False) -> str:
    """Unix milliseconds as local ``2025-03-01 09:00`` (``–`` for None)."""
    if ms is None:
        return "–"
    moment = dt.datetime.fromtimestamp(ms / 1000, tz=local_zone())
    return moment.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def duration(start_ms: int | None, end_ms: int | None) -> str:
    """How long from ``start_ms`` to ``end_ms``: ``42 s``, ``3 min 5 s``; empty when unknown."""
    if start_ms is None or end_ms is None or end_ms < start_ms:
        return ""
    seconds = round((end_ms - start_ms) / 1000)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
