"""The shape of a scheduled-prompt draft, checked before a person sees it.

A draft is ``{title, instruction, schedule, runMissed}``; a schedule is one of
``once {atMs}``, ``interval {everyMinutes}``, ``weekly {weekdays, hour, minute}``
(0 is Sunday), ``monthly {day, hour, minute}`` and ``yearly {month, day, hour,
minute}``, in the host's local time.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import ToolError
from workbench.scheduler.shapes import KINDS


def _int(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ToolError("invalid_arguments", f"schedule.{name} must be a whole number from {low} to {high}")
    return value


def check_words(title: Any, instruction: Any) -> tuple[str, str]:
    """Return a draft's title (trimmed) and instruction, or raise ``ToolError``."""
    if not isinstance(title, str) or not title.strip() or len(title) > 200:
        raise ToolError("invalid_arguments", "a schedule draft needs a title (at most 200 characters)")
    if not isinstance(instruction, str) or not instruction.strip() or len(instruction) > 20_000:
        raise ToolError("invalid_arguments", "a schedule draft needs an instruction")
    return title.strip(), instruction


def check_draft(draft: Any) -> dict[str, Any]:
    """Return a clean copy of ``draft`` or raise ``ToolError`` naming what is wrong."""
    if not isinstance(draft, dict):
        raise ToolError("invalid_arguments", "a schedule draft is an object")
    title, instruction = check_words(draft.get("title"), draft.get("instruction"))
    schedule = draft.get("schedule")
    if not isinstance(schedule, dict) or schedule.get("kind") not in KINDS:
        raise ToolError("invalid_arguments", f"schedule.kind must be one of {', '.join(KINDS)}")
    kind = schedule["kind"]
    clean: dict[str, Any] = {"kind": kind}
    for name, (low, high) in KINDS[kind].items():
        clean[name] = _int(schedule.get(name), name, low, high)
    if kind == "weekly":
        days = schedule.get("weekdays")
        if not isinstance(days, list) or not days:
            raise ToolError("invalid_arguments", "schedule.weekdays must list days from 0 (Sunday) to 6")
        clean["weekdays"] = sorted({_int(d, "weekdays", 0, 6) for d in days})
    return {"title": title, "instruction": instruction, "schedule": clean,
            "runMissed": bool(draft.get("runMissed", False))}
