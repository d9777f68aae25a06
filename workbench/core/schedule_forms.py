"""A schedule as a front-end's form reads, checks and describes it, as the core checks it.

The TUI's schedule form (a tool's proposal reviewed, the Tasks screen's new and edit)
and the CLI's schedule flags (``from_flags``: ``--at``, ``--every``, ``--cron``…) reach
the scheduler's shapes and the drafts' checks through this module alone, the
same ones ``host.schedules`` applies when it saves, so a form never accepts what the
core would refuse. It must not import a front-end.
"""

from __future__ import annotations

from typing import Any

from workbench.capabilities.schedules import check_draft, check_words
from workbench.errors import ToolError, WorkbenchError
from workbench.scheduler.arithmetic import from_ms, wall_instant
from workbench.scheduler.shapes import ScheduleError, check_schedule, describe
from workbench.scheduler.spec import from_flags
from workbench.scheduler.zone import local_zone

__all__ = ["ScheduleError", "check_schedule", "checked_draft", "describe", "from_flags",
           "from_ms", "local_zone", "wall_instant"]


def checked_draft(draft: dict[str, Any]) -> dict[str, Any]:
    """The draft a form filled (``title``, ``instruction``, ``schedule`` already checked
    by ``check_schedule``, ``runMissed``), checked as a tool's proposal is, with its title
    and instruction trimmed. A cron schedule, which no tool may propose, has its words
    checked alone.

    Raises:
        WorkbenchError: Something in it would be refused; the message says what.
    """
    try:
        if draft["schedule"]["kind"] == "cron":
            title, prompt = check_words(draft["title"], draft["instruction"])
            return {**draft, "title": title, "instruction": prompt}
        return check_draft(draft)
    except ToolError as exc:
        raise WorkbenchError(exc.message) from None
