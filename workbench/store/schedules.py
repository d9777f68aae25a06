"""Scheduled prompts: what a person accepted, to be fired by the scheduler.

This module must not import anything above the store.
"""

from __future__ import annotations

from typing import Any

from workbench.store.db import StoreBase, dump_json, load_json


class SchedulesMixin(StoreBase):
    """Queries on ``scheduled_prompts``."""

    def add_scheduled_prompt(self, draft: dict[str, Any], *, source: str) -> int:
        """Save an accepted draft (``title``, ``instruction``, ``schedule``, ``runMissed``)."""
        with self.transaction():
            cursor = self._execute(
                "INSERT INTO scheduled_prompts (title, instruction, schedule, run_missed, source, "
                "enabled, created_at) VALUES (?, ?, ?, ?, ?, 1, ?)",
                (draft["title"], draft["instruction"], dump_json(draft["schedule"]),
                 int(bool(draft.get("runMissed"))), source, self.clock()))
        return int(cursor.lastrowid)

    def list_scheduled_prompts(self) -> list[dict[str, Any]]:
        rows = self._all("SELECT id, title, instruction, schedule, run_missed, source, enabled, "
                         "created_at FROM scheduled_prompts ORDER BY id")
        for row in rows:
            row["schedule"] = load_json(row["schedule"])
            row["run_missed"] = bool(row["run_missed"])
            row["enabled"] = bool(row["enabled"])
        return rows

    def remove_scheduled_prompt(self, prompt_id: int) -> bool:
        with self.transaction():
            return self._execute("DELETE FROM scheduled_prompts WHERE id = ?",
                                 (prompt_id,)).rowcount > 0
