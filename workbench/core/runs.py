"""One recorded scheduled run executed in a host of its own: the supervisor's child
process (``workbench runs exec ID``).

Part of the core's public API; ``Schedules.execute_run`` does the work, with
``Host.open`` as the way its host is opened. Both are imported when a run is executed.
"""

from __future__ import annotations

from typing import IO, Any

__all__ = ["execute_run"]


async def execute_run(run_id: int, *, out: IO[str] | None = None) -> dict[str, Any]:
    """Execute run ``run_id`` under its card and record the outcome, events to ``out``
    as JSON lines; the run as recorded at its end."""
    from workbench.core.host import Host
    from workbench.core.schedules import Schedules

    return await Schedules.execute_run(Host.open, run_id, out=out)
