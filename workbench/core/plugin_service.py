"""The plugins: install, upgrade, remove, list, stop, and calls to their instances —
what ``workbench plugin …`` and (later) the TUI's plugin screen both call.

One service per host (``host.plugins``), or one opened for a command that needs no
host (``open_plugins``). It owns the running instances (one per plugin and project,
started on first need, stopped after ``idle_s`` without a call, when the project no
longer enables the plugin, and with the host), the Plugin API server they call back
into, and the checks a call goes through: the project enables the plugin, the input
matches the tool's ``input_schema``, the answer is at most ``MAX_TOOL_ANSWER`` bytes of
a result whose ``structured_content`` matches the ``output_schema`` — anything else is an
error result, never a crash of the host.
"""

from __future__ import annotations

import asyncio
import json
import os

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.config.files import Config
from workbench.config.home import Home
from workbench.core.workspace import Workspace
from workbench.errors import ExitCode, ToolError, WorkbenchError
from workbench.plugins.api import Caller, PluginApi
from workbench.plugins.http import BadAnswer
from workbench.plugins.installed import Installed, PluginInstallError, PluginStore, file_key
from workbench.plugins.manifest import CAPABILITIES, ID, PluginManifest, read
from workbench.plugins.runtime import InstancePaths, PluginInstance, PluginUnavailable, Spawner
from workbench.plugins.settings import PluginConfig, plugin_config
from workbench.plugins.source import extension_name
from workbench.sandbox.policy import Limits
from workbench.states import ProcessState
from workbench.tools.source import SourceRow

TOOL_TIMEOUT_S = 60.0
ACTION_TIMEOUT_S = 10.0
X_TIMEOUT_S = 30.0
MAX_TOOL_ANSWER = 1024 * 1024
MAX_ACTION_ANSWER = 64 * 1024
MAX_X_ANSWER = 8 * 1024 * 1024
IDLE_S = 300.0
MAX_NOTIFICATIONS = 200


@dataclass
class InstallPlan:
    """What an install or upgrade would do, for a person to approve."""

    manifest: PluginManifest
    source: Path
    upgrade: bool
    capabilities: list[tuple[str, str]]
    """Each capability asked for and what it lets the plugin do."""
    added: list[str] = field(default_factory=list)
    """On upgrade: capabilities the installed version did not ask for."""
    previous: str = ""
    """On upgrade: the installed version."""


@dataclass
class InstanceRow:
    """One running instance, from this process or another."""

    project: str
    pid: int
    port: int
    state: str
    here: bool


@dataclass
class PluginRow:
    """One installed plugin, as ``plugin list`` prints it."""

    id: str
    name: str
    version: str
    capabilities: tuple[str, ...]
    tools: list[str]
    enabled: bool
    runnable: str | None
    instances: list[InstanceRow]
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "version": self.version,
                "capabilities": list(self.capabilities), "tools": self.tools, "enabled_here": self.enabled,
                "runnable": self.runnable is None, "why_not": self.runnable,
                "instances": [vars(i) for i in self.instances], "notes": self.notes}


def started_at(pid: int) -> str:
    """When a process started (``/proc/PID/stat`` field 22, in clock ticks since boot);
    empty when it is gone. A pid with another start time is another process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def _alive(pid: int, started: str) -> bool:
    """Whether the instance's process still runs: the pid, with the start time kept."""
    return bool(started) and started_at(pid) == started


class PluginService:
    """Args:
        home: The workbench home (plugins live in ``<home>/plugins``).
        workspace: The host's folder and the config in force there.
        limits: The sandbox's limits for a plugin's process.
    """

    def __init__(self, *, home: Home, workspace: Workspace, limits: Limits) -> None:
        self.home = home
        self.workspace = workspace
        self.store = PluginStore(home.root / "plugins")
        self.instances: dict[tuple[str, str], PluginInstance] = {}
        self.tokens: dict[str, tuple[str, str]] = {}
        self.api = PluginApi(callers=self._caller)
        self.clock: Callable[[], float] = time.monotonic
        """The instances' clock (their breakers, idle time): a test's seam."""
        from workbench.plugins.launch import SandboxSpawner

        self.spawner: Spawner = SandboxSpawner(limits=limits, pins=home.cache_dir / "plugins" / "pins")
        """Starts an instance's process: in the sandbox."""
        self.tool_timeout_s = TOOL_TIMEOUT_S
        self.action_timeout_s = ACTION_TIMEOUT_S
        self.idle_s = IDLE_S
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self.api.on_notification = self._notified
        self.runs: Any = None
        """The agent runs (``core/plugin_runs.py``), where a host runs agents."""
        self._resumed: set[str] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self._told_settings: dict[str, PluginConfig] = {}
        self._idle_task: asyncio.Task[None] | None = None
        self._applied: dict[str, tuple[tuple[Any, ...], PluginConfig]] = {}
        self._validators: dict[int, tuple[Any, Any]] = {}

    def _notified(self, caller: Any, body: dict[str, Any]) -> None:
        """A notification a plugin posted: the last ``MAX_NOTIFICATIONS`` are kept (a
        plugin that floods them cannot grow the host's memory)."""
        self.notifications.append((caller.plugin, body))
        del self.notifications[:-MAX_NOTIFICATIONS]

    # --- where we are ---------------------------------------------------------------

    @property
    def config(self) -> Config:
        return self.workspace.config

    def project(self) -> str:
        """The project the host's folder belongs to: its config's folder, else the folder."""
        config = self.config
        folder = config.project_file.parent.parent if config.project_file is not None else config.cwd
        return str(Path(folder).resolve())

    def applies(self, plugin: str) -> PluginConfig:
        """Whether the project enables ``plugin``, and its settings here."""
        return self._applies(self._installed(plugin))

    def _applies(self, installed: Installed) -> PluginConfig:
        """``plugin_config``, read again only when a file it comes from changed."""
        config = self.config
        key = (id(config), config.project_state, file_key(self.home.config_file),
               file_key(config.project_file) if config.project_file is not None else (),
               file_key(self.home.trust_file), id(installed.manifest))
        cached = self._applied.get(installed.manifest.id)
        if cached is not None and cached[0] == key:
            return cached[1]
        applied = plugin_config(config, installed.manifest)
        self._applied[installed.manifest.id] = (key, applied)
        return applied

    def _validator(self, schema: dict[str, Any]) -> Any:
        from jsonschema import Draft202012Validator

        cached = self._validators.get(id(schema))
        if cached is None or cached[0] is not schema:
            cached = (schema, Draft202012Validator(schema))
            self._validators[id(schema)] = cached
        return cached[1]

    def enabled_here(self) -> list[Installed]:
        """The installed plugins this project enables and this workbench can run."""
        return [p for p in self.store.all() if p.manifest.runnable is None and self._applies(p).enabled]

    def _installed(self, plugin: str) -> Installed:
        if not isinstance(plugin, str) or ID.fullmatch(plugin) is None:
            raise WorkbenchError(f"{plugin[:40]!r} is not a plugin id", exit_code=ExitCode.USAGE)
        installed = self.store.get(plugin)
        if installed is None:
            raise WorkbenchError(f"plugin {plugin} is not installed", exit_code=ExitCode.USAGE)
        return installed

    # --- install, upgrade, remove, list -----------------------------------------------

    @staticmethod
    def validate(folder: Path) -> PluginManifest:
        """Check a plugin's folder as install would (its manifest, its files).

        Raises:
            PluginManifestError, PluginInstallError, WorkbenchError: What is wrong.
        """
        from workbench.plugins.installed import check_tree

        manifest = read(folder)
        check_tree(folder)
        return manifest

    def plan(self, folder: Path, *, upgrade: bool = False) -> InstallPlan:
        """What installing (or upgrading to) ``folder`` asks the owner to approve.

        Raises:
            PluginInstallError: It cannot be installed here (not runnable, already
                installed, or not installed for an upgrade).
        """
        folder = Path(os.path.abspath(folder))
        manifest = self.validate(folder)
        if manifest.runnable is not None:
            raise PluginInstallError(f"plugin {manifest.id} cannot be installed: {manifest.runnable}",
                                     where=str(folder))
        before = self.store.get(manifest.id)
        if before is not None and not upgrade:
            raise PluginInstallError(f"plugin {manifest.id} is installed already (version "
                                     f"{before.manifest.version}); `workbench plugin upgrade {folder}` replaces it")
        if before is None and upgrade:
            raise PluginInstallError(f"plugin {manifest.id} is not installed; `workbench plugin install {folder}`")
        plan = InstallPlan(manifest, folder, upgrade,
                           [(c, CAPABILITIES[c]) for c in manifest.capabilities])
        if before is not None:
            plan.previous = before.manifest.version
            plan.added = [c for c in manifest.capabilities if c not in before.approved]
        return plan

    async def install(self, plan: InstallPlan) -> Installed:
        """Install (or upgrade) as planned, the capabilities it shows approved. An
        upgrade stops the plugin's instances first; their data is kept."""
        if plan.upgrade:
            await self.stop(plan.manifest.id)
        installed = self.store.put(plan.source, plan.manifest, plan.manifest.capabilities, upgrade=plan.upgrade)
        return installed

    async def remove(self, plugin: str, *, purge: bool = False) -> bool:
        """Stop its instances and remove it (``purge``: its data too)."""
        if ID.fullmatch(plugin) is None:
            raise WorkbenchError(f"{plugin[:40]!r} is not a plugin id", exit_code=ExitCode.USAGE)
        await self.stop(plugin)
        return self.store.remove(plugin, purge=purge)

    def rows(self) -> list[PluginRow]:
        """Every installed plugin with its running instances (this process's and others')."""
        config = self.config
        rows = []
        for installed in self.store.all():
            applied = plugin_config(config, installed.manifest)
            rows.append(PluginRow(installed.manifest.id, installed.manifest.name, installed.manifest.version,
                                  installed.approved, [t.name for t in installed.manifest.tools],
                                  applied.enabled, installed.manifest.runnable,
                                  self._instance_rows(installed), applied.notes))
        return rows

    def _instance_rows(self, installed: Installed) -> list[InstanceRow]:
        rows = []
        run = installed.root / "run"
        for record_file in sorted(run.glob("*/instance.json")) if run.is_dir() else []:
            try:
                record = json.loads(record_file.read_text(encoding="utf-8"))
                pid, port, project = int(record["pid"]), int(record["port"]), str(record["project"])
                started = str(record["started"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if not _alive(pid, started):
                record_file.unlink(missing_ok=True)
                continue
            here = self.instances.get((installed.manifest.id, project))
            rows.append(InstanceRow(project, pid, port, here.state.value if here else "running", here is not None))
        return rows

    async def stop(self, plugin: str, project: str | None = None) -> int:
        """Stop the plugin's instances (one project's, or all), in this process or
        another's (by the pid its record keeps); how many were stopped."""
        stopped = 0
        for key, instance in list(self.instances.items()):
            if key[0] == plugin and (project is None or key[1] == project) and instance.state is ProcessState.RUNNING:
                await instance.stop()
                stopped += 1
        installed = self.store.get(plugin)
        if installed is not None:
            for row in self._instance_rows(installed):
                if not row.here and (project is None or row.project == project):
                    try:
                        os.killpg(row.pid, signal.SIGTERM)
                        stopped += 1
                    except (ProcessLookupError, PermissionError):
                        pass
        return stopped

    # --- instances and calls --------------------------------------------------------

    def _caller(self, token: str) -> Caller | None:
        found = self.tokens.get(token)
        if found is None:
            return None
        plugin, project = found
        installed = self.store.get(plugin)
        if installed is None:
            return None
        return Caller(plugin, project, installed.approved,
                      enabled=lambda: project == self.project() and self.applies(plugin).enabled,
                      settings=lambda: self.applies(plugin).settings)

    async def instance(self, plugin: str) -> PluginInstance:
        """The plugin's instance for this project (made, not started, when it has none).

        Raises:
            PluginUnavailable: (status 409) The project does not enable the plugin.
        """
        installed = self._installed(plugin)
        project = self.project()
        if not self._applies(installed).enabled:
            error = PluginUnavailable(f"this project ({project}) does not enable plugin {plugin}")
            error.status = 409
            raise error
        if installed.manifest.runnable is not None:
            raise PluginUnavailable(f"plugin {plugin} cannot run: {installed.manifest.runnable}")
        key = (plugin, project)
        instance = self.instances.get(key)
        if instance is None or instance.manifest != installed.manifest:
            if instance is not None:
                await instance.stop("upgraded")
            await self.api.start()
            token = next((t for t, k in self.tokens.items() if k == key), None)
            if token is None:
                import secrets

                token = secrets.token_urlsafe(32)
                self.tokens[token] = key
            instance = PluginInstance(manifest=installed.manifest, folder=installed.code,
                                      project=Path(project),
                                      paths=InstancePaths(run=installed.run(project), data=installed.data(project)),
                                      api_url=self.api.url, token=token, spawn=self.spawner, clock=self.clock,
                                      on_change=self._record)
            self.instances[key] = instance
            self._told_settings[plugin] = self._applies(installed)
            self._watch_idle()
            self.resume_runs()
        return instance

    def resume_runs(self) -> None:
        """Take up, once per project, the agent runs a stopped workbench left there."""
        project = self.project()
        if self.runs is not None and project not in self._resumed:
            self._resumed.add(project)
            task = asyncio.get_running_loop().create_task(self.runs.resume(project))
            self._background.add(task)  # kept until done: a task nobody holds may be collected
            task.add_done_callback(self._background.discard)

    def _record(self, instance: PluginInstance, old: ProcessState, new: ProcessState, reason: str) -> None:
        record = instance.paths.run / "instance.json"
        if new is ProcessState.RUNNING and instance.process is not None:
            pid = instance.process.pid
            record.write_text(json.dumps({"pid": pid, "started": started_at(pid), "port": instance.port,
                                          "project": str(instance.project)}), encoding="utf-8")
        elif new in (ProcessState.STOPPED, ProcessState.EXITED):
            record.unlink(missing_ok=True)

    async def call_tool(self, plugin: str, tool: str, arguments: Any) -> dict[str, Any]:
        """Call a plugin's tool: the value a registry tool returns, or ``ToolError``.

        Raises:
            ToolError: ``invalid_arguments`` (the input does not match), ``unavailable``
                (not enabled, cannot start, the breaker open, no answer), ``tool`` (an
                error result, an answer that is not a result, too large, or whose
                ``structured_content`` does not match the ``output_schema``).
        """
        instance = await self._instance_for_call(plugin)
        spec = instance.manifest.tool(tool)
        if spec is None:
            raise ToolError("not_found", f"plugin {plugin} has no tool {tool!r}")
        errors = sorted(self._validator(spec.input_schema).iter_errors(arguments), key=str)
        if errors:
            raise ToolError("invalid_arguments", f"the input does not match {tool}'s input_schema: "
                            f"{errors[0].message[:300]}")
        try:
            answer = await instance.call("POST", f"/tools/{tool}", {"input": arguments, "agent": "", "thread_id": ""},
                                         timeout=self.tool_timeout_s, max_bytes=MAX_TOOL_ANSWER)
        except PluginUnavailable as exc:
            raise ToolError("unavailable", str(exc)) from None
        except BadAnswer as exc:
            raise ToolError("tool", f"plugin {plugin} answered badly: {exc}") from None
        return self._result(plugin, spec.output_schema, answer.status, answer.body)

    def _result(self, plugin: str, schema: dict[str, Any] | None, status: int, body: bytes) -> dict[str, Any]:
        from workbench.jsontext import loads

        if status != 200:
            raise ToolError("tool", f"plugin {plugin} answered the tool call with status {status}")
        try:
            data = loads(body, f"plugin {plugin}'s answer")
        except WorkbenchError as exc:
            raise ToolError("tool", f"plugin {plugin} answered with something that is not JSON ({exc.message})") from None
        if not isinstance(data, dict) or not isinstance(data.get("content", []), list):
            raise ToolError("tool", f"plugin {plugin} answered with something that is not a tool result")
        content = [c for c in data.get("content", []) if isinstance(c, dict)]
        result: dict[str, Any] = {"content": content}
        structured = data.get("structured_content")
        if data.get("is_error") is True:
            texts = [str(c.get("text", "")) for c in content if c.get("type") == "text"]
            raise ToolError("tool", "\n".join(t for t in texts if t) or f"plugin {plugin} reported an error",
                            content=content, isError=True)
        if structured is not None:
            if not isinstance(structured, dict):
                raise ToolError("tool", f"plugin {plugin}'s structured_content is not a JSON object", isError=True)
            result["structuredContent"] = structured
        if schema is not None:
            if structured is None:
                raise ToolError("tool", f"plugin {plugin} gave no structured_content, which its output_schema "
                                "requires", content=content, isError=True)
            errors = sorted(self._validator(schema).iter_errors(structured), key=str)
            if errors:
                raise ToolError("tool", f"plugin {plugin}'s structured_content does not match its output_schema: "
                                f"{errors[0].message[:300]}", content=content, isError=True)
        return result

    async def _instance_for_call(self, plugin: str) -> PluginInstance:
        try:
            return await self.instance(plugin)
        except PluginUnavailable as exc:
            raise ToolError("unavailable", str(exc)) from None

    async def run_action(self, plugin: str, action: str, *, trigger: str = "manual",
                         task_id: str = "") -> tuple[int, Any]:
        """``POST /actions/{action}``: the plugin's status and answer, or 503 (the
        breaker open, no answer) or 409 (not enabled) as an HTTP caller would get."""
        try:
            instance = await self.instance(plugin)
        except PluginUnavailable as exc:
            return exc.status, {"error": str(exc)}
        if action not in instance.manifest.actions:
            return 404, {"error": f"plugin {plugin} has no action {action!r}"}
        try:
            answer = await instance.call("POST", f"/actions/{action}", {"trigger": trigger, "task_id": task_id},
                                         timeout=self.action_timeout_s, max_bytes=MAX_ACTION_ANSWER)
        except PluginUnavailable as exc:
            return 503, {"error": str(exc)}
        except BadAnswer as exc:
            return 502, {"error": f"plugin {plugin} answered badly: {exc}"}
        try:
            return answer.status, json.loads(answer.body) if answer.body else None
        except ValueError:
            return answer.status, None

    async def send_event(self, plugin: str, name: str, data: Any, *, thread_id: str = "",
                         start: bool = True) -> bool:
        """``POST /events`` to the plugin's instance here, best effort: whether it took it
        (2xx). Not sent when the plugin does not subscribe to ``name``, the project does
        not enable it, or it is not running and ``start`` is off."""
        installed = self.store.get(plugin)
        if installed is None or name not in (installed.manifest.raw.get("events") or []):
            return False
        if "events.subscribe" not in installed.approved or not self._applies(installed).enabled:
            return False
        running = self.instances.get((plugin, self.project()))
        if not start and (running is None or running.state is not ProcessState.RUNNING):
            return False
        try:
            instance = await self.instance(plugin)
            answer = await instance.call("POST", "/events", {"type": name, "thread_id": thread_id, "data": data},
                                         timeout=self.action_timeout_s, max_bytes=MAX_ACTION_ANSWER)
        except (PluginUnavailable, BadAnswer):
            return False
        return 200 <= answer.status < 300

    async def tell_settings(self) -> list[str]:
        """Send ``settings.changed`` to the running instances whose settings were read
        again since they were last told (a config write, a trust change); the ids told."""
        told = []
        for (plugin, project), instance in list(self.instances.items()):
            if project != self.project() or instance.state is not ProcessState.RUNNING:
                continue
            installed = self.store.get(plugin)
            if installed is None:
                continue
            applied = self._applies(installed)
            seen = self._told_settings.get(plugin)
            self._told_settings[plugin] = applied
            if seen is not None and seen is not applied and applied.enabled:
                if await self.send_event(plugin, "settings.changed", {"settings": applied.settings}, start=False):
                    told.append(plugin)
        return told

    async def x(self, plugin: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """A call of the plugin's own ``/x`` routes (its panes' API)."""
        try:
            instance = await self.instance(plugin)
            answer = await instance.call(method, "/x" + path, body, timeout=X_TIMEOUT_S, max_bytes=MAX_X_ANSWER)
        except PluginUnavailable as exc:
            return exc.status, {"error": str(exc)}
        except BadAnswer as exc:
            return 502, {"error": str(exc)}
        try:
            return answer.status, json.loads(answer.body) if answer.body else None
        except ValueError:
            return answer.status, None

    def _watch_idle(self) -> None:
        if self._idle_task is None or self._idle_task.done():
            self._idle_task = asyncio.get_running_loop().create_task(self._idle_loop())

    async def _idle_loop(self) -> None:
        while any(i.state is ProcessState.RUNNING for i in self.instances.values()):
            await asyncio.sleep(min(30.0, max(1.0, self.idle_s / 4)))
            await self.stop_idle()
            await self.tell_settings()

    async def stop_idle(self) -> list[str]:
        """Stop the instances idle for ``idle_s`` and those whose project no longer
        enables them; the ids stopped."""
        stopped = []
        for (plugin, _project), instance in list(self.instances.items()):
            if instance.state is not ProcessState.RUNNING:
                continue
            reason = None
            if instance.idle_for() >= self.idle_s:
                reason = f"idle for {self.idle_s:g} s"
            else:
                try:
                    if not self.applies(plugin).enabled:
                        reason = "the project no longer enables it"
                except WorkbenchError:
                    reason = "removed"
            if reason is not None:
                await instance.stop(reason)
                stopped.append(plugin)
        return stopped

    def source_rows(self) -> list[SourceRow]:
        rows = []
        for installed in self.enabled_here():
            instance = self.instances.get((installed.manifest.id, self.project()))
            state = instance.state.value if instance is not None else "stopped"
            if instance is not None and instance.breaker.state != "closed":
                state = f"breaker {instance.breaker.state}"
            rows.append(SourceRow(extension_name(installed.manifest.id), installed.manifest.name, "plugin",
                                  len(installed.manifest.tools), state, instance.note if instance else ""))
        return rows

    def notices(self) -> list[str]:
        return self.store.problems()

    def follow_soon(self) -> None:
        """``follow_config`` on the running loop (a config change the host followed)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(self.follow_config())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def follow_config(self) -> None:
        await self.stop_idle()
        await self.tell_settings()

    async def aclose(self) -> None:
        """Stop the agent runs going on, every instance and the Plugin API server."""
        if self.runs is not None:
            await self.runs.aclose()
        for instance in list(self.instances.values()):
            await instance.stop("the workbench stopped")
        if self._idle_task is not None:
            self._idle_task.cancel()
        self.api.close()


    def close(self) -> None:
        """Kill what still runs (``aclose`` did not run, or its loop is gone)."""
        for instance in list(self.instances.values()):
            instance.kill()
        self.api.close()


def open_plugins(cwd: Path | None = None) -> PluginService:
    """The plugins of the person's home, as they apply in ``cwd``, with no host opened
    (``workbench plugin install|upgrade|remove|list|validate``)."""
    home = Home.resolve()
    folder = Path(os.path.abspath(cwd or Path.cwd()))
    workspace = Workspace(home=home, config=Config.load(home, folder), folder=folder, env=os.environ)
    return PluginService(home=home, workspace=workspace, limits=Limits())




def plugin_runtime_note() -> str:
    """How plugins run here, and why not in a container (``plugins/engines.py``)."""
    from workbench.plugins.engines import runtime_note

    return runtime_note()
