"""A plugin's agent runs (``plugin_runs``), kept until they end and their plugin is
told (``/runs/{id}/done``), so a restart of the workbench loses none.

A run is ``queued`` (asked for, not started), ``running`` (its turn going on, owned by
one process: pid and process start), then ``done`` or ``failed``; ``done_sent`` says
the plugin was told. Its session is hidden: ``list_sessions`` leaves out the sessions
of plugin runs.

A plugin's scheduled action is a task (``plugin_tasks``): a row of
``scheduled_prompts`` the supervisor fires like any other, with the plugin, action and
project it calls, and the config entry it was last made from (applied once per change).

This module must not import anything above the store.
"""

from __future__ import annotations

import uuid
from typing import Any

from workbench.store.db import StoreBase, dump_json, load_json
from workbench.store.owners import owner_alive, this_process

_COLUMNS = ("id, plugin, project, agent, prompt, session_id, status, result, owner_pid, owner_start, "
            "created_at, ended_at, done_sent")
DAY_MS = 24 * 3600 * 1000


class PluginRunsMixin(StoreBase):
    """Queries on ``plugin_runs``."""

    def add_plugin_run(self, *, plugin: str, project: str, agent: str, prompt: str,
                       daily_limit: int) -> dict[str, Any] | None:
        """Queue a run, unless ``plugin`` started ``daily_limit`` runs in the last 24 hours
        (in any project): then None, nothing added."""
        now = self.clock()
        with self.transaction():
            row = self._one("SELECT COUNT(*) AS n FROM plugin_runs WHERE plugin = ? AND created_at > ?",
                            (plugin, now - DAY_MS))
            if row is not None and row["n"] >= daily_limit:
                return None
            run_id = uuid.uuid4().hex
            self._execute(f"INSERT INTO plugin_runs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL, 'queued', NULL, "
                          "NULL, NULL, ?, NULL, 0)", (run_id, plugin, project, agent, prompt, now))
        return self.plugin_run(run_id)

    def plugin_run(self, run_id: str) -> dict[str, Any] | None:
        return self._one(f"SELECT {_COLUMNS} FROM plugin_runs WHERE id = ?", (run_id,))

    def plugin_runs(self, plugin: str, project: str | None = None) -> list[dict[str, Any]]:
        """The plugin's runs (in one project), oldest first."""
        if project is None:
            return self._all(f"SELECT {_COLUMNS} FROM plugin_runs WHERE plugin = ? ORDER BY created_at, rowid",
                             (plugin,))
        return self._all(f"SELECT {_COLUMNS} FROM plugin_runs WHERE plugin = ? AND project = ? "
                         "ORDER BY created_at, rowid", (plugin, project))

    def is_plugin_run_session(self, session_id: str) -> bool:
        """Whether ``session_id`` is the hidden chat of a plugin's agent run."""
        return self._one("SELECT 1 AS found FROM plugin_runs WHERE session_id = ?", (session_id,)) is not None

    def start_plugin_run(self, run_id: str) -> bool:
        """Mark a queued run running, owned by this process; False when it was not
        queued (another process took it)."""
        owner = this_process()
        with self.transaction():
            cursor = self._execute("UPDATE plugin_runs SET status = 'running', owner_pid = ?, owner_start = ? "
                                   "WHERE id = ? AND status = 'queued'", (owner.pid, owner.start, run_id))
        return cursor.rowcount > 0

    def set_plugin_run_session(self, run_id: str, session_id: str) -> None:
        """The hidden session a run goes on in."""
        with self.transaction():
            self._execute("UPDATE plugin_runs SET session_id = ? WHERE id = ?", (session_id, run_id))

    def end_plugin_run(self, run_id: str, status: str, result: str) -> None:
        with self.transaction():
            self._execute("UPDATE plugin_runs SET status = ?, result = ?, ended_at = ? WHERE id = ? "
                          "AND status IN ('queued', 'running')", (status, result, self.clock(), run_id))

    def plugin_run_told(self, run_id: str) -> None:
        with self.transaction():
            self._execute("UPDATE plugin_runs SET done_sent = 1 WHERE id = ?", (run_id,))

    def settle_plugin_runs(self) -> list[str]:
        """Fail the running runs whose owner died (their plugin is told later); the ids."""
        failed = []
        for row in self._all("SELECT id, owner_pid, owner_start FROM plugin_runs WHERE status = 'running'"):
            if not owner_alive(row["owner_pid"], row["owner_start"]):
                failed.append(row["id"])
        for run_id in failed:
            self.end_plugin_run(run_id, "failed", "the workbench stopped while the run was going on")
        return failed

    def plugin_runs_to_resume(self, project: str) -> list[dict[str, Any]]:
        """The project's runs still queued, and those ended whose plugin was not told."""
        return self._all(f"SELECT {_COLUMNS} FROM plugin_runs WHERE project = ? AND (status = 'queued' OR "
                         "(status IN ('done', 'failed') AND done_sent = 0)) ORDER BY created_at, rowid",
                         (project,))

    # --- scheduled actions ------------------------------------------------------

    def plugin_task(self, schedule_id: int) -> dict[str, Any] | None:
        """The plugin action a schedule calls (None for a scheduled prompt)."""
        row = self._one("SELECT schedule_id, plugin, action, project, entry FROM plugin_tasks "
                        "WHERE schedule_id = ?", (schedule_id,))
        if row is not None:
            row["entry"] = load_json(row["entry"])
        return row

    def plugin_tasks(self, project: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT t.schedule_id, t.plugin, t.action, t.project, t.entry, p.enabled FROM plugin_tasks t "
               "JOIN scheduled_prompts p ON p.id = t.schedule_id")
        rows = (self._all(sql + " ORDER BY t.schedule_id") if project is None
                else self._all(sql + " WHERE t.project = ? ORDER BY t.schedule_id", (project,)))
        for row in rows:
            row["entry"] = load_json(row["entry"])
            row["enabled"] = bool(row["enabled"])
        return rows

    def put_plugin_task(self, *, plugin: str, action: str, project: str, title: str,
                        schedule: dict[str, Any], enabled: bool, entry: dict[str, Any]) -> int:
        """Make or change the task of ``plugin``'s ``action`` in ``project``; its id."""
        now = self.clock()
        with self.transaction():
            found = self._one("SELECT schedule_id FROM plugin_tasks WHERE plugin = ? AND action = ? AND project = ?",
                              (plugin, action, project))
            if found is None:
                cursor = self._execute(
                    "INSERT INTO scheduled_prompts (title, instruction, schedule, run_missed, source, enabled, "
                    "created_at) VALUES (?, '', ?, 0, 'plugin', ?, ?)", (title, dump_json(schedule), int(enabled), now))
                schedule_id = int(cursor.lastrowid or 0)
                self._execute("INSERT INTO plugin_tasks (schedule_id, plugin, action, project, entry) "
                              "VALUES (?, ?, ?, ?, ?)", (schedule_id, plugin, action, project, dump_json(entry)))
                return schedule_id
            schedule_id = int(found["schedule_id"])
            self._execute("UPDATE scheduled_prompts SET schedule = ?, enabled = ?, last_due_at = NULL, "
                          "next_due_at = NULL, anchor_at = NULL WHERE id = ?",
                          (dump_json(schedule), int(enabled), schedule_id))
            self._execute("UPDATE plugin_tasks SET entry = ? WHERE schedule_id = ?", (dump_json(entry), schedule_id))
        return schedule_id

    def pause_plugin_task(self, schedule_id: int, enabled: bool) -> None:
        with self.transaction():
            self._execute("UPDATE scheduled_prompts SET enabled = ? WHERE id = ?", (int(enabled), schedule_id))

    def remove_plugin_task(self, schedule_id: int) -> None:
        with self.transaction():
            self._execute("DELETE FROM scheduled_prompts WHERE id = ?", (schedule_id,))

    # --- cards and composer switches ---------------------------------------------------

    def add_plugin_card(self, *, plugin: str, project: str, title: str, body: str,
                        card: dict[str, Any]) -> int:
        """Keep a card a plugin posted, as a notification with its document; its id."""
        with self.transaction():
            cursor = self._execute("INSERT INTO notifications (at, level, title, body, source, run_id) "
                                   "VALUES (?, 'info', ?, ?, ?, NULL)", (self.clock(), title, body, f"plugin:{plugin}"))
            notification = int(cursor.lastrowid or 0)
            self._execute("INSERT INTO plugin_cards (notification_id, plugin, project, card) VALUES (?, ?, ?, ?)",
                          (notification, plugin, project, dump_json(card)))
        return notification

    def plugin_cards_since(self, plugin: str, since: int) -> int:
        """How many cards ``plugin`` posted since ``since`` (unix milliseconds)."""
        row = self._one("SELECT COUNT(*) AS n FROM plugin_cards c JOIN notifications n ON n.id = c.notification_id "
                        "WHERE c.plugin = ? AND n.at > ?", (plugin, since))
        return int(row["n"]) if row is not None else 0

    def plugin_card(self, notification_id: int) -> dict[str, Any] | None:
        row = self._one("SELECT notification_id, plugin, project, card FROM plugin_cards WHERE notification_id = ?",
                        (notification_id,))
        if row is not None:
            row["card"] = load_json(row["card"])
        return row

    def plugin_switches(self, session_id: str) -> dict[tuple[str, str], dict[str, Any]]:
        """A chat's state of plugins' switches, by ``(plugin, switch)``."""
        rows = self._all("SELECT plugin, switch, is_on, title, state FROM plugin_switches WHERE session_id = ?",
                         (session_id,))
        return {(r["plugin"], r["switch"]): {"on": bool(r["is_on"]), "title": r["title"], "state": r["state"]}
                for r in rows}

    def set_plugin_switch(self, session_id: str, plugin: str, switch: str, *, on: bool,
                          title: str | None, state: str) -> None:
        with self.transaction():
            self._execute("INSERT INTO plugin_switches (session_id, plugin, switch, is_on, title, state) "
                          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, plugin, switch) DO UPDATE SET "
                          "is_on = excluded.is_on, title = excluded.title, state = excluded.state",
                          (session_id, plugin, switch, int(on), title, state))

    def reset_plugin_switch(self, plugin: str, switch: str, session_id: str | None = None) -> int:
        """Forget a switch's state (in one chat, or every chat); how many were kept."""
        with self.transaction():
            if session_id is None:
                cursor = self._execute("DELETE FROM plugin_switches WHERE plugin = ? AND switch = ?", (plugin, switch))
            else:
                cursor = self._execute("DELETE FROM plugin_switches WHERE plugin = ? AND switch = ? AND "
                                       "session_id = ?", (plugin, switch, session_id))
        return cursor.rowcount
