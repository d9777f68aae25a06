"""Plugins' scheduled actions, as tasks of the supervisor (``supervisor/``).

A project asks for the task of an action in its config::

    [plugins.echo.schedules.daily]
    enabled = true            # default true; false keeps the task, turned off
    type = "interval"         # default: the action's default_schedule
    schedule = "15m"

An entry in the global config asks for it in every project; a project's own entry
replaces it, action by action; like ``enabled``, a project's entries apply once the
owner trusts its config (``plugins/settings.py``). ``sync`` makes the project's tasks
match: each is a scheduled prompt (``source = 'plugin'``) with a ``plugin_tasks`` row
naming the plugin, action and project, made or changed once per change of its entry,
deleted when the entry goes or the plugin is removed, paused while the project does not
enable the plugin (or the owner did not approve ``schedule``). The supervisor fires
them like any schedule (cron or interval windows, missed runs, the runs list); a run of
one is executed in the supervisor's own process (``execute``): ``POST
/actions/{action}`` on the project's instance with ``"trigger": "schedule"`` (or
``"manual"`` for a run asked for now) and the task's id, the instance started if it is
not running and kept until idle. The run is ``ok`` once the plugin accepted (2xx),
``failed`` otherwise (503 with the breaker open, 409 when not enabled...), with the
notification a failed scheduled run gets.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.plugin_service import PluginService
    from workbench.store import Store

log = logging.getLogger(__name__)

UNITS = {"s": 1 / 60, "m": 1, "h": 60, "d": 1440}


def schedule_shape(entry: dict[str, Any]) -> dict[str, Any]:
    """The scheduler's shape of an entry's ``type`` and ``schedule`` (an interval of
    seconds is rounded up to whole minutes, the scheduler's step)."""
    if entry["type"] == "cron":
        return {"kind": "cron", "expr": " ".join(entry["schedule"].split())}
    value = entry["schedule"]
    minutes = int(value[:-1]) * UNITS[value[-1]]
    return {"kind": "interval", "everyMinutes": max(1, min(525_600, -int(-minutes // 1)))}


class PluginTasks:
    """Args:
        store: The home's store (the schedules, ``plugin_tasks``).
        plugins: The host's plugins (for its own project).
        publish: Where a run's end and notification are published.
    """

    def __init__(self, *, store: Store, plugins: PluginService, publish: Callable[[Any], None]) -> None:
        self.store = store
        self.plugins = plugins
        self.publish = publish
        self.others: dict[str, PluginService] = {}
        """The plugins as they apply in another project than the host's (the daemon
        runs every project's tasks), opened on first need."""

    # --- the project's tasks ---------------------------------------------------

    def sync(self) -> list[str]:
        """Make the host's project's tasks match its config; what changed, as lines."""
        project = self.plugins.project()
        changed: list[str] = []
        existing = {(t["plugin"], t["action"]): t for t in self.store.plugin_tasks(project)}
        wanted: set[tuple[str, str]] = set()
        for installed in self.plugins.store.all():
            plugin = installed.manifest.id
            try:
                applied = self.plugins.applies(plugin)
            except WorkbenchError:
                continue
            allowed = "schedule" in installed.approved and installed.manifest.runnable is None
            for action, entry in applied.schedules.items():
                wanted.add((plugin, action))
                on = entry["enabled"] and applied.enabled and allowed
                task = existing.get((plugin, action))
                if task is None or task["entry"] != entry:
                    self.store.put_plugin_task(plugin=plugin, action=action, project=project,
                                               title=f"{installed.manifest.name}: {action}",
                                               schedule=schedule_shape(entry), enabled=on, entry=entry)
                    changed.append(f"{'made' if task is None else 'changed'} the task {plugin}.{action}")
                elif task["enabled"] != on:
                    self.store.pause_plugin_task(task["schedule_id"], on)
                    changed.append(f"{'resumed' if on else 'paused'} the task {plugin}.{action}")
        for key, task in existing.items():
            if key not in wanted:
                self.store.remove_plugin_task(task["schedule_id"])
                changed.append(f"removed the task {key[0]}.{key[1]}")
        return changed

    # --- running one -------------------------------------------------------------

    def handles(self, run: dict[str, Any]) -> bool:
        """Whether ``run`` is of a plugin's task (executed here, not in a child)."""
        return run.get("schedule_id") is not None and self.store.plugin_task(run["schedule_id"]) is not None

    def _service(self, project: str) -> PluginService:
        if project == self.plugins.project():
            return self.plugins
        service = self.others.get(project)
        if service is None:
            from workbench.core.plugin_service import open_plugins

            service = self.others[project] = open_plugins(Path(project))
        return service

    async def execute(self, run_id: int) -> dict[str, Any]:
        """Run the pending run ``run_id`` of a plugin's task: its action called; the run
        as recorded at its end."""
        from workbench.store.owners import this_process
        from workbench.events import ScheduleRunEnded
        from workbench.supervisor.launch import notify, owner_id

        run = self.store.get_run(run_id)
        if run is None or run["status"] != "pending":
            return run or {}
        task = self.store.plugin_task(run["schedule_id"])
        if task is None or not self.store.start_run(run_id, owner=owner_id(), owner_start=this_process().start):
            return self.store.get_run(run_id) or {}
        trigger = "manual" if run["fired_by"] == "manual" else "schedule"
        try:
            status, body = await self._service(task["project"]).run_action(
                task["plugin"], task["action"], trigger=trigger, task_id=str(task["schedule_id"]))
        except Exception as exc:  # noqa: BLE001 — a plugin never takes the supervisor down
            log.exception("the task of %s.%s", task["plugin"], task["action"])
            status, body = 500, {"error": f"{type(exc).__name__}: {exc}"}
        answer = json.dumps(body, ensure_ascii=False)[:2000] if body is not None else ""
        if 200 <= status < 300:
            self.store.finish_run(run_id, "ok", result=f"{task['plugin']} accepted {task['action']} ({status})",
                                  only_if=("running",))
        else:
            error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), str) else answer
            self.store.finish_run(run_id, "failed", error=f"plugin {task['plugin']} answered {status}: {error}"[:2000],
                                  only_if=("running",))
        ended = self.store.get_run(run_id) or {}
        self.publish(ScheduleRunEnded(run_id=run_id, schedule_id=ended.get("schedule_id"), title=ended.get("title", ""),
                                      status=ended.get("status", ""), error=ended.get("error")))
        notify(self.store, self.publish, ended)
        return ended

    async def aclose(self) -> None:
        for service in self.others.values():
            await service.aclose()
        self.others.clear()
