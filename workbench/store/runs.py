"""Schedules' timing and run cards, their runs, and the notifications runs post.

A schedule (``scheduled_prompts``) keeps when its windows were settled up to
(``last_due_at``, NULL until first planned), its next window (``next_due_at``, NULL
when there is none) and where an interval counts from (``anchor_at``). Its run card (``schedule_cards``) is
JSON. A run (``schedule_runs``) goes ``pending`` → ``running`` → ``ok``, ``failed``,
``timed_out`` or ``paused``, or ``interrupted`` when its owner (the process supervising
it: pid, host and process start) died first; ``refused`` and ``skipped`` runs never
start. Runs
outlive their schedule (``schedule_id`` becomes NULL, the title stays).

This module must not import anything above the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.store.db import StoreBase, dump_json, load_json

RUN_STATUSES = ("pending", "running", "ok", "failed", "timed_out", "refused", "skipped", "paused",
                "interrupted")
ENDED = ("ok", "failed", "timed_out", "refused", "skipped", "paused", "interrupted")
STARTED = ("running", "ok", "failed", "timed_out", "paused", "interrupted")
"""Runs that count toward the daily limit."""

_SCHEDULE_COLUMNS = ("p.id, p.title, p.instruction, p.schedule, p.run_missed, p.source, p.enabled, "
                     "p.created_at, p.updated_at, p.anchor_at, p.last_due_at, p.next_due_at, "
                     "c.card")
_RUN_COLUMNS = ("id, schedule_id, title, fired_by, due_at, created_at, started_at, ended_at, "
                "status, session_id, error, result, needs, owner, pid, resumes, owner_start")


def _schedule(row: dict[str, Any]) -> dict[str, Any]:
    row["schedule"] = load_json(row["schedule"])
    row["card"] = load_json(row["card"])
    row["run_missed"] = bool(row["run_missed"])
    row["enabled"] = bool(row["enabled"])
    return row


def _run(row: dict[str, Any]) -> dict[str, Any]:
    row["needs"] = load_json(row["needs"])
    return row


class RunsMixin(StoreBase):
    """Queries on the schedules' timing and cards, ``schedule_runs`` and ``notifications``."""

    # --- schedules -------------------------------------------------------------

    def get_schedule(self, schedule_id: int) -> dict[str, Any] | None:
        """One scheduled prompt with its timing and card (None when there is none)."""
        row = self._one(f"SELECT {_SCHEDULE_COLUMNS} FROM scheduled_prompts p LEFT JOIN "
                        "schedule_cards c ON c.schedule_id = p.id WHERE p.id = ?", (schedule_id,))
        return None if row is None else _schedule(row)

    def list_schedules(self, *, due_by: int | None = None) -> list[dict[str, Any]]:
        """Scheduled prompts with timing and card, by id.

        Args:
            due_by: Only the enabled ones due by then, or never planned (``last_due_at`` NULL).
        """
        where = ""
        params: tuple = ()
        if due_by is not None:
            where = "WHERE p.enabled = 1 AND (p.last_due_at IS NULL OR p.next_due_at <= ?)"
            params = (due_by,)
        rows = self._all(f"SELECT {_SCHEDULE_COLUMNS} FROM scheduled_prompts p LEFT JOIN "
                         f"schedule_cards c ON c.schedule_id = p.id {where} ORDER BY p.id", params)
        return [_schedule(row) for row in rows]

    def soonest_due(self) -> int | None:
        """The earliest ``next_due_at`` of the enabled schedules."""
        row = self._one("SELECT MIN(next_due_at) AS due FROM scheduled_prompts WHERE enabled = 1")
        return None if row is None else row["due"]

    def update_schedule(self, schedule_id: int, **fields: Any) -> bool:
        """Change a schedule's ``title``, ``instruction``, ``schedule``, ``run_missed``,
        ``enabled``, ``anchor_at``, ``last_due_at`` or ``next_due_at``; ``updated_at``
        is set. Returns whether it exists."""
        allowed = {"title", "instruction", "schedule", "run_missed", "enabled", "anchor_at",
                   "last_due_at", "next_due_at"}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"cannot update {', '.join(sorted(unknown))}")
        values = {k: dump_json(v) if k == "schedule" else int(v) if isinstance(v, bool) else v
                  for k, v in fields.items()}
        values["updated_at"] = self.clock()
        assignments = ", ".join(f"{name} = :{name}" for name in values)
        with self.transaction():
            cursor = self._execute(f"UPDATE scheduled_prompts SET {assignments} WHERE id = :id",
                                   {**values, "id": schedule_id})
        return cursor.rowcount > 0

    def set_schedule_card(self, schedule_id: int, card: dict[str, Any]) -> None:
        """Freeze (or replace) a schedule's run card."""
        with self.transaction():
            self._execute("INSERT INTO schedule_cards (schedule_id, card, frozen_at) VALUES (?, ?, ?) "
                          "ON CONFLICT (schedule_id) DO UPDATE SET card = excluded.card, "
                          "frozen_at = excluded.frozen_at",
                          (schedule_id, dump_json(card), self.clock()))

    # --- runs ------------------------------------------------------------------

    def add_run(self, schedule_id: int | None, title: str, *, fired_by: str, due_at: int | None,
                status: str = "pending", error: str | None = None, session_id: str | None = None,
                resumes: int | None = None) -> int:
        """Record a run (``pending`` until it starts; ``refused``/``skipped`` end at once)."""
        if status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        now = self.clock()
        ended = now if status in ENDED else None
        with self.transaction():
            cursor = self._execute(
                "INSERT INTO schedule_runs (schedule_id, title, fired_by, due_at, created_at, "
                "ended_at, status, error, session_id, resumes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (schedule_id, title, fired_by, due_at, now, ended, status, error, session_id, resumes))
        return int(cursor.lastrowid)

    def start_run(self, run_id: int, *, owner: str, owner_start: str | None = None) -> bool:
        """Mark a pending run running, owned by ``owner`` (``pid@host``) that started at
        ``owner_start`` (``owners.process_start``); False when it was not pending
        (another supervisor took it)."""
        with self.transaction():
            cursor = self._execute("UPDATE schedule_runs SET status = 'running', started_at = ?, "
                                   "owner = ?, owner_start = ? WHERE id = ? AND status = 'pending'",
                                   (self.clock(), owner, owner_start, run_id))
        return cursor.rowcount > 0

    def set_run_process(self, run_id: int, pid: int | None) -> None:
        with self.transaction():
            self._execute("UPDATE schedule_runs SET pid = ? WHERE id = ?", (pid, run_id))

    def set_run_session(self, run_id: int, session_id: str) -> None:
        with self.transaction():
            self._execute("UPDATE schedule_runs SET session_id = ? WHERE id = ?", (session_id, run_id))

    def finish_run(self, run_id: int, status: str, *, error: str | None = None,
                   result: str | None = None, needs: list[dict[str, Any]] | None = None,
                   only_if: Iterable[str] = ("pending", "running")) -> bool:
        """End a run with ``status`` unless it already ended; returns whether it changed."""
        if status not in ENDED:
            raise ValueError(f"{status!r} is not a final run status")
        states = tuple(only_if)
        marks = ", ".join("?" for _ in states)
        with self.transaction():
            cursor = self._execute(
                f"UPDATE schedule_runs SET status = ?, ended_at = ?, error = ?, result = ?, needs = ? "
                f"WHERE id = ? AND status IN ({marks})",
                (status, self.clock(), error, result, dump_json(needs), run_id, *states))
        return cursor.rowcount > 0

    def get_run(self, run_id: int) -> dict[str, Any] | None:
        row = self._one(f"SELECT {_RUN_COLUMNS} FROM schedule_runs WHERE id = ?", (run_id,))
        return None if row is None else _run(row)

    def list_runs(self, *, schedule_id: int | None = None, statuses: Iterable[str] = (),
                  limit: int | None = 50) -> list[dict[str, Any]]:
        """Runs, newest first; of one schedule, and of some statuses, when given."""
        conditions, params = [], []
        if schedule_id is not None:
            conditions.append("schedule_id = ?")
            params.append(schedule_id)
        statuses = tuple(statuses)
        if statuses:
            conditions.append(f"status IN ({', '.join('?' for _ in statuses)})")
            params.extend(statuses)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        rows = self._all(f"SELECT {_RUN_COLUMNS} FROM schedule_runs {where} ORDER BY id DESC LIMIT ?",
                         (*params, -1 if limit is None else limit))
        return [_run(row) for row in rows]

    def count_runs_started_since(self, since: int) -> int:
        """How many runs started at or after ``since`` (the daily limit counts these)."""
        marks = ", ".join("?" for _ in STARTED)
        row = self._one(f"SELECT COUNT(*) AS n FROM schedule_runs WHERE started_at >= ? "
                        f"AND status IN ({marks})", (since, *STARTED))
        return int(row["n"]) if row else 0

    def run_summaries(self) -> dict[int, dict[str, Any]]:
        """Per schedule: its last run and how many of its runs failed, timed out, paused or
        were interrupted."""
        rows = self._all(
            f"SELECT {_RUN_COLUMNS} FROM schedule_runs WHERE id IN "
            "(SELECT MAX(id) FROM schedule_runs WHERE schedule_id IS NOT NULL GROUP BY schedule_id)")
        counts = self._all("SELECT schedule_id, COUNT(*) AS n FROM schedule_runs WHERE status IN "
                           "('failed', 'timed_out', 'paused', 'interrupted') "
                           "AND schedule_id IS NOT NULL "
                           "GROUP BY schedule_id")
        summary: dict[int, dict[str, Any]] = {row["schedule_id"]: {"last_run": _run(row), "failures": 0}
                                              for row in rows}
        for row in counts:
            summary.setdefault(row["schedule_id"], {"last_run": None, "failures": 0})["failures"] = row["n"]
        return summary

    # --- notifications ---------------------------------------------------------

    def add_notification(self, level: str, title: str, body: str, *, source: str | None = None,
                         run_id: int | None = None) -> int:
        """Keep a notification for the person (``info``, ``warning`` or ``error``)."""
        with self.transaction():
            cursor = self._execute(
                "INSERT INTO notifications (at, level, title, body, source, run_id) "
                "VALUES (?, ?, ?, ?, ?, ?)", (self.clock(), level, title, body, source, run_id))
        return int(cursor.lastrowid)

    def list_notifications(self, *, unread_only: bool = False, limit: int | None = 50) -> list[dict[str, Any]]:
        """Notifications, newest first."""
        where = "WHERE read_at IS NULL" if unread_only else ""
        return self._all(f"SELECT id, at, level, title, body, source, run_id, read_at FROM notifications "
                         f"{where} ORDER BY id DESC LIMIT ?", (-1 if limit is None else limit,))

    def mark_notifications_read(self, ids: Iterable[int] | None = None) -> int:
        """Mark some notifications (all when ``ids`` is None) read; returns how many."""
        with self.transaction():
            if ids is None:
                cursor = self._execute("UPDATE notifications SET read_at = ? WHERE read_at IS NULL",
                                       (self.clock(),))
            else:
                chosen = tuple(ids)
                if not chosen:
                    return 0
                cursor = self._execute(
                    f"UPDATE notifications SET read_at = ? WHERE read_at IS NULL AND id IN "
                    f"({', '.join('?' for _ in chosen)})", (self.clock(), *chosen))
        return cursor.rowcount
