"""A plugin's agent runs: ``POST /runs`` of the Plugin API, each a turn of the plugin's
agent in a hidden chat of the project, in a fresh session, through the host's own agent
loop (``Chats.run_hidden``), offered only the tools the manifest gives that agent
(``plugin_<tool>``); ``POST /runs/{run_id}/done`` tells the plugin how it ended.

A run is asked for with ``{"agent": ID, "prompt": TEXT}`` and answered ``202
{"run_id": ...}``. The agent must be one the manifest declares, and the owner must
have approved ``agent.write`` for a writing agent (``agent.readonly`` or ``agent.write``
for a read-only one): 403 otherwise. Each plugin starts at most ``daily_limit`` runs
in any 24 hours, across projects; past that, 429. The run's only tools are its plugin
tools, which reach the project read-only (the plugin's sandbox), so a run never writes
the project through the host.

Runs are kept in the store (``plugin_runs``) until they end and the plugin is told: a
run still queued when the workbench stopped runs once it is back, one that was going
on is failed (and the plugin told so), and one that ended but whose plugin was not
told is told (``resume``, when the host opens in the project).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from workbench.plugins.source import TOOL_PREFIX

if TYPE_CHECKING:
    from workbench.core.chats import Chats
    from workbench.core.plugin_service import PluginService
    from workbench.plugins.api import Caller
    from workbench.store import Store

log = logging.getLogger(__name__)

DAILY_RUNS = 50
MAX_PROMPT = 100_000
MAX_RESULT = 64 * 1024
DONE_TIMEOUT_S = 10.0


class PluginRuns:
    """Args:
        store: Where runs are kept.
        chats: The host's chats (the agent loop a run goes through).
        plugins: The plugins (their instances, told a run's end).
        daily_limit: Runs each plugin may start in any 24 hours.
    """

    def __init__(self, *, store: Store, chats: Chats, plugins: PluginService,
                 daily_limit: int = DAILY_RUNS) -> None:
        self.store = store
        self.chats = chats
        self.plugins = plugins
        self.daily_limit = daily_limit
        self.tasks: set[asyncio.Task[None]] = set()
        self.going: dict[asyncio.Task[Any], str] = {}
        """The runs going on, by the task running each."""

    async def ask(self, caller: Caller, payload: Any) -> tuple[int, Any]:
        """``POST /runs``: the status and answer a plugin gets."""
        if not isinstance(payload, dict):
            return 400, {"error": "a run is {\"agent\": ID, \"prompt\": TEXT}"}
        agent_id, prompt = payload.get("agent"), payload.get("prompt")
        if not isinstance(agent_id, str) or not isinstance(prompt, str) or not prompt.strip():
            return 400, {"error": "a run needs an agent (its id) and a prompt (text)"}
        if len(prompt) > MAX_PROMPT:
            return 413, {"error": f"a prompt must be at most {MAX_PROMPT} characters"}
        installed = self.plugins.store.get(caller.plugin)
        agent = installed.manifest.agent(agent_id) if installed is not None else None
        if agent is None:
            return 404, {"error": f"plugin {caller.plugin} declares no agent {agent_id[:40]!r}"}
        needed = ("agent.readonly", "agent.write") if agent.read_only else ("agent.write",)
        if not set(needed) & set(caller.approved):
            return 403, {"error": f"agent {agent_id} needs the capability {' or '.join(needed)}, "
                                  "which the owner did not approve"}
        row = await asyncio.to_thread(self.store.add_plugin_run, plugin=caller.plugin, project=caller.project,
                                      agent=agent_id, prompt=prompt, daily_limit=self.daily_limit)
        if row is None:
            return 429, {"error": f"plugin {caller.plugin} started {self.daily_limit} agent runs in the last "
                                  "24 hours; try again later"}
        self._spawn(row)
        return 202, {"run_id": row["id"]}

    def _spawn(self, row: dict[str, Any]) -> None:
        task = asyncio.get_running_loop().create_task(self._go(row))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _go(self, row: dict[str, Any]) -> None:
        try:
            if row["status"] == "queued":
                found = await self._run(row)
                self.going.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
                if found is None:
                    return
                row = found
            if row is not None and row["status"] in ("done", "failed") and not row["done_sent"]:
                await self._tell(row)
        except Exception:  # noqa: BLE001 — a run never takes the host down
            log.exception("plugin run %s", row.get("id"))

    async def _run(self, row: dict[str, Any]) -> dict[str, Any] | None:
        plugin = row["plugin"]
        installed = self.plugins.store.get(plugin)
        agent = installed.manifest.agent(row["agent"]) if installed is not None else None
        if not await asyncio.to_thread(self.store.start_plugin_run, row["id"]):
            return None  # another process took it
        session = self.store.create_session(title=f"plugin:{plugin} {row['agent']}", folder=row["project"])
        self.store.set_plugin_run_session(row["id"], session["id"])
        self.going[asyncio.current_task()] = row["id"]  # type: ignore[index]
        if agent is None:
            self.store.end_plugin_run(row["id"], "failed", f"plugin {plugin} no longer declares agent {row['agent']}")
        else:
            tools = frozenset(TOOL_PREFIX + t for t in agent.tools)
            try:
                result = await self.chats.run_hidden(row["prompt"], session["id"], tools=tools)
            except asyncio.CancelledError:
                raise  # the host stopping: the run stays running, and fails when it is back
            except Exception as exc:  # noqa: BLE001 — the run fails, named
                self.store.end_plugin_run(row["id"], "failed", f"{type(exc).__name__}: {exc}"[:MAX_RESULT])
            else:
                status = "done" if result.status == "done" else "failed"
                text = result.text if status == "done" else (result.error or result.status)
                self.store.end_plugin_run(row["id"], status, (text or "")[:MAX_RESULT])
        return self.store.plugin_run(row["id"])

    async def _tell(self, row: dict[str, Any]) -> None:
        """``POST /runs/{run_id}/done``; marked told once the plugin answered at all (best
        effort: a plugin that cannot be reached is told when the project's host opens next)."""
        try:
            instance = await self.plugins.instance(row["plugin"])
            answer = await instance.call("POST", f"/runs/{row['id']}/done",
                                         {"run_id": row["id"], "agent": row["agent"], "status": row["status"],
                                          "result": row["result"] or "", "session_id": row["session_id"] or ""},
                                         timeout=DONE_TIMEOUT_S, max_bytes=64 * 1024)
        except Exception as exc:  # noqa: BLE001 — unreachable now: told later
            log.info("plugin %s was not told that run %s ended: %s", row["plugin"], row["id"], exc)
            return
        del answer
        await asyncio.to_thread(self.store.plugin_run_told, row["id"])

    async def resume(self, project: str) -> int:
        """Run the project's queued runs and tell the plugins of ended runs they were not
        told of (runs a stopped workbench left); how many were taken up."""
        self.store.settle_plugin_runs()
        rows = await asyncio.to_thread(self.store.plugin_runs_to_resume, project)
        for row in rows:
            self._spawn(row)
        return len(rows)

    async def settled(self) -> None:
        """Wait for the runs this host started (a test's, a command's)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    def rows(self, plugin: str, project: str | None = None) -> list[dict[str, Any]]:
        """The plugin's runs, oldest first: ``id, agent, status, result, session_id``..."""
        return self.store.plugin_runs(plugin, project)

    async def aclose(self) -> None:
        """Stop the runs going on (they are failed, and their plugins told, when the
        project's host opens next)."""
        going = dict(self.going)
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*list(self.tasks), return_exceptions=True)
        for run_id in going.values():
            self.store.end_plugin_run(run_id, "failed", "the workbench stopped while the run was going on")
