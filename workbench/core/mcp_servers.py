"""MCP servers in the host: their tools in the registry, their state, prompts and resources.

``McpServers`` is a service the ``Host`` builds and reaches as ``host.mcp``; the
connections themselves are its ``manager`` (``workbench.mcp.manager.McpManager``, made
on first use). The servers are a ``ToolSource``
(``workbench.core.mcp_source.McpSource``, loaded after the extensions and the host's
own tools): a reload calls ``load`` and registers ``tools()``, so MCP
tools take their place in the precedence (built-in, extension, MCP) and survive a
reload; ``Host.ashutdown`` stops the sources, which calls ``aclose``. Each MCP tool is a registry ``Tool`` with ``runtime="mcp"``, the
source ``mcp``, the extension ``mcp:SERVER`` (a chat switches a server off like an
extension) and a ``handler`` the ``Dispatcher`` awaits: every call goes through the
gateway like an extension's — hooks, policy, audit, events, the time limit.

A server runs on the host's loop (that of its first call). When its tool list changes
(``tools/list_changed``), or it dies or comes back, the registry is changed there,
never while a reload holds the lock, and the change is published
(``ExtensionStatusChanged``, ``Notice``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import ToolError, WorkbenchError
from workbench.events import AskUserRequest, ExtensionStatusChanged, Notice
from workbench.mcp.naming import extension_name, servers_named_by, tool_name

from workbench.core.sessions import find_session

if TYPE_CHECKING:
    from workbench.core.loading import Loading
    from workbench.core.workspace import Workspace
    from workbench.config.files import Config
    from workbench.config.home import Home
    from workbench.config.trust import TrustRecord
    from workbench.core.bus import EventBus
    from workbench.core.gateway import ToolGateway
    from workbench.store import Store
    from workbench.tools.registry import ToolRegistry
    from workbench.tools.source import ToolSources
    from workbench.mcp.config import ServerConfig, ServerList
    from workbench.mcp.connection import CallBridge
    from workbench.mcp.manager import McpManager
    from workbench.mcp.serve import ServeBackend
    from workbench.sandbox.policy import Limits
    from workbench.tools.registry import Tool

log = logging.getLogger(__name__)


class McpServers:
    """The MCP servers of one host; see the module docstring.

    Args:
        home: The home (config files, logs, the servers' cache).
        store: For the audit log and each chat's switches.
        bus: Where a server's changes are told.
        registry: The tools loaded (a server's tools are registry tools).
        sources: Every source of tools (``refresh``/``reload`` of the MCP source).
        gateway: Where ``mcp serve`` sends its calls.
            Its responder answers an elicitation while no call runs.
        workspace: The host's folder now and the config the server entries and limits
            are read from (``follow_config`` applies a new one).
        loading: A server's changes wait for a reload to end (its lock); whether the
            first load is done; the status report published when a server's tools
            change; loads the extensions first when they are not yet.
    """

    def __init__(self, *, home: Home, store: Store, bus: EventBus, registry: ToolRegistry,
                 sources: ToolSources, gateway: ToolGateway, workspace: Workspace,
                 loading: Loading) -> None:
        self.home = home
        self.store = store
        self.bus = bus
        self.registry = registry
        self.sources = sources
        self.gateway = gateway
        self.workspace = workspace
        self.loading = loading
        self.needed: set[str] | None = None
        """The servers whose never-listed tools a load starts them to list; None: every
        one (a chat's model may call any tool). ``host.tools.call`` narrows it to the server
        a tool's name names, so one call never waits for a server it does not use."""
        self._manager: McpManager | None = None
        self._notices: list[str] = []
        """What the last load found wrong."""
        self._failures: dict[str, str] = {}
        """Why each server that could not start at the last load did not."""
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop the servers run on (that of their first call)."""

    # --- the servers --------------------------------------------------------------

    def follow_folder(self, folder: Path) -> None:
        """Stdio servers started from now on start in ``folder``."""
        manager = self._manager
        if manager is not None:
            manager.cwd = folder

    @property
    def manager(self) -> McpManager:
        """The MCP servers of this host (created on first use; nothing starts yet)."""
        manager = self._manager
        if manager is None:
            import os

            from workbench.mcp.manager import McpManager

            manager = McpManager(
                cwd=self.workspace.folder, env=os.environ, logs_dir=self.home.logs_dir,
                cache_dir=self.home.cache_dir / "mcp",
                limits=_server_limits(self.workspace.config),
                startup_timeout_s=_startup_timeout_s(self.workspace.config),
                on_change=self._changed, fallback=self._fallback)
            self._manager = manager
        return manager

    def follow_config(self) -> None:
        """Servers started from now on get the limits of the workspace's config."""
        config = self.workspace.config
        manager = self._manager
        if manager is not None:
            manager.limits = _server_limits(config)
            manager.launcher.startup_timeout_s = _startup_timeout_s(config)

    def server_list(self) -> ServerList:
        """The server entries that apply here (see ``workbench.mcp.config.load_servers``)."""
        from workbench.mcp.config import load_servers

        return load_servers(self.workspace.config)

    def disabled(self) -> set[str]:
        """Servers the person switched off everywhere (``mcp.disabled`` in their own config:
        a project cannot switch a server back on)."""
        for layer in self.workspace.config.layers:
            if layer.origin.startswith("global"):
                return set(layer.values.get("mcp.disabled", []))
        return set()

    def load(self) -> None:
        """Configure every enabled server, so that ``mcp_tools`` offers their tools (the
        MCP source's load, at every reload).

        Servers whose tools were never listed are started now, together, within
        ``mcp.startup_timeout_ms``, except one whose last start failed: that one is
        started again in the background unless this work names it
        (``McpManager.list_unknown``). The others offer their cached tools and start
        at the first call.
        """
        self._remember_loop()
        found = self.server_list()
        if not (found.servers or found.pending or found.problems or self._manager is not None):
            return  # no server here: nothing to import or start
        disabled = self.disabled()
        active = {name: s for name, s in found.servers.items() if name not in disabled}
        manager = self.manager
        manager.configure(active)
        # Only the servers this work may need are started to list their tools (all of
        # them for a chat; for one call, the server it names, if any).
        needed = [name for name in active if self.needed is None or name in self.needed]
        failures = manager.list_unknown(needed, manager.launcher.startup_timeout_s + 1,
                                        wait_for=self.needed)
        notices = list(found.problems)
        notices += [f"MCP server {s.name} in {s.origin} is not trusted in this version, so it "
                    "does not start; run `workbench trust` to allow it" for s in found.pending.values()]
        notices += [f"MCP server {name} could not start: {why}" for name, why in failures.items()]
        self._notices = notices
        self._failures = failures

    def explained(self, tool: str, outcome: Any) -> Any:
        """A tool not found whose name names a server that could not list its tools
        says why (the server's failure) rather than only that it is unknown."""
        if outcome.ok or outcome.error.get("kind") != "not_found":
            return outcome
        from dataclasses import replace

        from workbench.mcp.naming import servers_named_by

        failures = self._failures
        for server in sorted(servers_named_by(tool)):
            if server in failures:
                message = f"{outcome.error['message']}: the MCP server {server} could not start: {failures[server]}"
                return replace(outcome, error={**outcome.error, "message": message})
        return outcome

    def notices(self) -> list[str]:
        """What the last load of the servers found wrong, for the person."""
        return list(self._notices)

    def tools(self) -> list[Tool]:
        """The tools of every configured server (none before the first load)."""
        manager = self._manager
        if manager is None:
            return []
        return [tool for name in list(manager.servers) for tool in self._tools_of(name)]

    def _tools_of(self, name: str) -> list[Tool]:
        from workbench.mcp.tools import registry_tools

        server = self.manager.servers.get(name)
        specs = self.manager.tools_of(name) if server is not None else None
        if server is None or specs is None:
            return []
        folder = Path(server.config.cwd or self.workspace.folder)
        return list(registry_tools(server.config, specs, folder,
                                   lambda tool: self._handler(name, tool)))

    def _handler(self, server_name: str, tool: str):
        from workbench.mcp.connection import CallBridge
        from workbench.mcp.results import outcome, progress_fraction, progress_label

        async def handler(arguments: Any, ctx: Any) -> Any:
            loop = asyncio.get_running_loop()
            self._loop = loop

            def progress(value: float, total: float | None, message: str | None) -> None:
                ctx.set_progress(progress_fraction(value, total), progress_label(value, total, message))

            def log_line(level: str, message: str) -> None:
                loop.call_soon_threadsafe(ctx.log, level, message)

            bridge = CallBridge(loop=loop, progress=progress, ask=ctx.ask_user, log=log_line)
            return outcome(await self.manager.call(server_name, tool, arguments, bridge))

        return handler

    # --- what front-ends show --------------------------------------------------------

    def servers_if_any(self) -> list[dict[str, Any]]:
        """``mcp_servers``, without creating anything when no server entry applies."""
        found = self.server_list()
        if not (found.servers or found.pending or self._manager is not None):
            return []
        return self.servers()

    def servers(self) -> list[dict[str, Any]]:
        """Every server entry with its state and tools, secrets masked: what ``mcp list``
        prints and the TUI shows (see ``workbench.mcp.status.server_rows``)."""
        from workbench.mcp.status import server_rows

        self._remember_loop()
        return server_rows(self.server_list(), self.disabled(), self.manager,
                           self._failures)

    def only_for(self, tool: str) -> None:
        """Start, at the next load, only the servers a call of ``tool`` may need, as a
        person names it (``mcp__S__T`` and ``mcp:S.T`` name ``S``; any other name, none),
        so one call never waits for a server it does not use (``workbench call``)."""
        self.needed = servers_named_by(tool)

    @staticmethod
    def entry(name: str, *, command: str | None = None, args: tuple[str, ...] = (),
              env: dict[str, str] | None = None, cwd: str | None = None, url: str | None = None,
              headers: dict[str, str] | None = None, timeout_ms: int | None = None,
              sandbox: bool = False, grants: tuple[str, ...] = ()) -> ServerConfig:
        """A server's entry as ``add`` takes it (``workbench mcp add``'s flags): a stdio
        server's ``command`` and ``args``, or an HTTP one's ``url``; see ``ServerConfig``."""
        from workbench.mcp.config import ServerConfig

        return ServerConfig(name=name, command=command, args=args, env=env or {}, cwd=cwd,
                            url=url, headers=headers or {}, timeout_ms=timeout_ms,
                            sandbox=sandbox, grants=grants)

    def add(self, server: ServerConfig, *, scope: str = "global",
                replace: bool = False) -> str | None:
        """Add a server entry (``workbench mcp add``) and register its tools.

        Returns:
            A notice when it does not apply yet (a project entry needs trust).

        Raises:
            ConfigError: The entry is not valid, or a server of that name exists.
        """
        from workbench.mcp.config import add_entry

        path = add_entry(self.home, self.workspace.folder, server, scope, replace)  # type: ignore[arg-type]
        self.store.audit("person", "mcp.add", server.name, {"scope": scope, "file": str(path)})
        return self.refresh(path)

    def remove(self, name: str, *, scope: str = "global") -> str | None:
        """Remove a server entry and its tools; returns a notice as ``mcp_add``.

        Raises:
            WorkbenchError: No such entry in that scope's file.
        """
        from workbench.mcp.config import config_path, remove_server, set_disabled

        path = config_path(self.home, self.workspace.folder, scope)  # type: ignore[arg-type]
        if not remove_server(path, name):
            raise WorkbenchError(f"no MCP server named {name!r} in {path}")
        if name in self.disabled():
            set_disabled(self.home, self.workspace.folder, self.disabled(), name, False)
        self.store.audit("person", "mcp.remove", name, {"scope": scope, "file": str(path)})
        return self.refresh(path)

    def set_enabled(self, name: str, enabled: bool, tool: str | None = None) -> str | None:
        """Switch a server (in every chat: ``mcp.disabled`` in the person's config) or one
        of its tools (``disabled_tools`` in the server's entry) on or off.

        Raises:
            WorkbenchError: No such server (or it has no such tool).
        """
        from workbench.mcp.config import entry_file, set_disabled, update_server

        found = self.server_list()
        config = found.servers.get(name) or found.pending.get(name)
        if config is None:
            raise WorkbenchError(f"no MCP server named {name!r}; `workbench mcp list` shows them")
        action = f"mcp.{'enable' if enabled else 'disable'}"
        if tool is None:
            set_disabled(self.home, self.workspace.folder, self.disabled(), name, not enabled)
            self.store.audit("person", action, name, {})
            return self.refresh(None)
        known = self.manager.tools_of(name) if name in self.manager.servers else None
        if known is not None and tool not in {t["name"] for t in known} | set(config.disabled_tools):
            raise WorkbenchError(f"the MCP server {name} has no tool named {tool!r}")
        self.store.audit("person", action, f"{name}/{tool}", {})
        off = sorted({t for t in config.disabled_tools if t != tool} | (set() if enabled else {tool}))
        path = entry_file(self.home, self.workspace.config.project_file, config)
        update_server(path, name, "disabled_tools", off or None)
        return self.refresh(path)

    def trust_project(self, project_dir: Path) -> TrustRecord:
        """Trust the project's ``.workbench/config.toml`` as it is now (what ``workbench
        trust`` does) and apply it: its settings and its MCP servers.

        Raises:
            ConfigError: There is no project config there, or it cannot be read.
        """
        from workbench.config.trust import trust_project

        record = trust_project(self.home, project_dir)
        self.refresh(None)
        return record

    def refresh(self, written: Path | None) -> str | None:
        """Read the server entries again and re-register their tools (after a change);
        returns a notice when ``written`` is a project file that now needs trust."""
        from workbench.mcp.config import trust_notice
        from workbench.mcp.naming import server_of

        with self.loading.lock:
            self.workspace.config.reload()
            for extension in {t.extension for t in self.registry.all_tools()}:
                if server_of(extension) is not None:
                    self.registry.remove_extension(extension)
            if self.loading.loaded:
                self.sources.reload("mcp")
        return trust_notice(self.home, written)

    def prompts(self) -> list[dict[str, Any]]:
        """The prompts of every enabled server, as the chat offers them: a slash command
        ``/mcp__server__prompt`` each, with its description and arguments."""
        rows = []
        for server in self.servers():
            if server["state"] in ("disabled", "untrusted"):
                continue
            listing = self.manager.listing(server["name"]) if server["name"] in self.manager.servers else None
            for prompt in (listing or {}).get("prompts", []):
                rows.append({"server": server["name"], "name": prompt["name"],
                             "command": "/" + tool_name(server["name"], prompt["name"]),
                             "description": prompt.get("description", ""),
                             "arguments": prompt.get("arguments", [])})
        return rows

    async def get_prompt(self, server: str, name: str,
                             arguments: dict[str, str] | None = None) -> dict[str, Any]:
        """One prompt's messages (``prompts/get``), starting the server if needed; ``text``
        joins their text, for a slash command to put in the chat.

        Raises:
            WorkbenchError: No such server, or it could not start or refused.
        """
        async def get(found: Any) -> Any:
            return await (await found.ensure_started()).get_prompt(name, arguments or {})

        result = await self.request(server, get)
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        data["text"] = "\n\n".join(m["content"]["text"] for m in data.get("messages", [])
                                    if m.get("content", {}).get("type") == "text")
        return data

    async def read_resource(self, server: str, uri: str) -> dict[str, Any]:
        """One resource's contents (``resources/read``), starting the server if needed.

        Raises:
            WorkbenchError: No such server, or it could not start or refused.
        """
        async def read(found: Any) -> Any:
            return await (await found.ensure_started()).read_resource(uri)

        result = await self.request(server, read)
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def check(self, names: list[str] | None = None) -> dict[str, str]:
        """Start the enabled servers (or ``names``) now; returns why each failed."""
        await asyncio.to_thread(self.loading.ensure)
        chosen = [n for n in self.manager.servers if names is None or n in names]

        async def start(name: str) -> str | None:
            async def started(server: Any) -> None:
                await server.ensure_started()

            try:
                await self.manager.on_server(name, started)
            except ToolError as exc:
                return exc.message
            return None

        results = await asyncio.gather(*(start(n) for n in chosen))
        return {n: why for n, why in zip(chosen, results) if why}

    def set_in_chat(self, session_id: str, server: str, enabled: bool) -> None:
        """Switch a server's tools off or on in one chat (as an extension ``mcp:NAME``).

        Raises:
            WorkbenchError: No such session or server.
        """
        session = find_session(self.store, session_id)
        if server not in self.server_list().servers:
            raise WorkbenchError(f"no MCP server named {server!r}; `workbench mcp list` shows them")
        self.store.set_session_extension(session["id"], extension_name(server), enabled)
        self.store.audit("person", f"session.extension.{'enable' if enabled else 'disable'}",
                         extension_name(server), {"session_id": session["id"]})

    def serve_backend(self, *, builtin: bool = True,
                      addons: Iterable[str] = ()) -> ServeBackend:
        """What ``workbench mcp serve`` offers: the built-in tools (unless ``builtin`` is
        False) and the extensions' tools, each call through the gateway as the caller
        ``agent``, never asked anything (see ``workbench.mcp.serve``). The host's own
        tools (``tool_invoke``, the memory tools…) are not offered: they serve a chat.
        A first-party add-on's tools are offered only when ``addons`` names it (as a
        chat has one only once switched on); a call to another's is refused."""
        from workbench.core.gateway import CallOptions
        from workbench.mcp.serve import host_backend
        from workbench.tools.registry import HOST_RUNTIME

        named = frozenset(addons)
        options = CallOptions(caller="agent", prompt=False)

        def tools() -> list[tuple[str, str, dict[str, Any]]]:
            self.loading.ensure()
            served = self.sources.served()
            return [(t.name, t.description, t.parameters) for t in self.registry.available()
                    if t.origin in served and (builtin or t.source != "builtin")
                    and t.runtime != HOST_RUNTIME and not t.person_only
                    and (not t.first_party or t.extension in named)]

        async def call(name: str, arguments: dict[str, Any], call_id: str):
            try:
                found = self.registry.resolve(name)
            except ToolError:
                found = None
            if found is not None and found.first_party and found.extension not in named:
                return self.gateway.refused(call_id, name, arguments, options, ToolError(
                    "not_found", f"{name!r} belongs to the add-on {found.extension}, which this "
                    f"server does not serve (`workbench mcp serve --addon {found.extension}`)"))
            return await self.gateway.call(name, arguments, options, call_id=call_id)

        return host_backend(tools=tools, call=call, subscribe=self.bus.subscribe)

    async def serve_stdio(self, *, builtin: bool = True, addons: Iterable[str] = ()) -> None:
        """Serve ``serve_backend`` as an MCP server on stdin and stdout until the client
        goes (``workbench mcp serve``)."""
        from workbench.mcp.serve import serve_stdio

        await serve_stdio(self.serve_backend(builtin=builtin, addons=addons))

    async def aclose(self) -> None:
        """Stop every server and what it started (called by ``Host.aclose``)."""
        manager = self._manager
        if manager is not None:
            await manager.aclose()

    # --- from the MCP loop ------------------------------------------------------------

    def _remember_loop(self) -> None:
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            pass

    async def request(self, server: str, request) -> Any:
        """Run ``request(server)`` on the server ``server`` (on its loop), the extensions
        loaded first.

        Raises:
            WorkbenchError: No such server, or it could not start or refused.
        """
        from mcp import MCPError

        self._remember_loop()
        await asyncio.to_thread(self.loading.ensure)
        try:
            return await self.manager.on_server(server, request)
        except ToolError as exc:
            raise WorkbenchError(exc.message) from None
        except MCPError as exc:
            raise WorkbenchError(f"the MCP server refused: {exc.error.message}") from None

    def _changed(self, name: str, what: str) -> None:
        """On the server's loop: its state or listings changed."""
        manager = self._manager
        server = manager.servers.get(name) if manager is not None else None
        if manager is None or server is None:
            return
        if what == "tools":
            self._on_host(lambda: self._tools_changed(name))
        elif what == "sandbox":
            self.bus.publish(Notice(level="warning",
                                    message=f"MCP server {name}: {manager.notes.get(name, '')}"))
        elif what == "state":
            from workbench.mcp.status import state_notice

            notice = state_notice(name, server)
            if notice is not None:
                self.bus.publish(Notice(level=notice[0], message=notice[1]))  # type: ignore[arg-type]

    def _tools_changed(self, name: str) -> None:
        if not self.loading.loaded:
            return  # the first load registers them
        before = {t.name for t in self.registry.all_tools() if t.extension == extension_name(name)}
        self.sources.refresh("mcp")
        after = {t.name for t in self.registry.all_tools() if t.extension == extension_name(name)}
        if before != after:
            self.bus.publish(ExtensionStatusChanged(report=self.loading.report().to_json(),
                                                    reloaded=True))

    def _on_host(self, action) -> None:
        """Run ``action`` now with the reload lock, on the server's loop (the host's);
        while a reload holds the lock, retry shortly rather than block the loop."""
        if self.loading.lock.acquire(blocking=False):
            try:
                action()
            finally:
                self.loading.lock.release()
            return
        try:
            asyncio.get_running_loop().call_later(0.05, self._on_host, action)
        except RuntimeError:  # no loop here: wait for the reload on a thread
            threading.Thread(target=self._locked, args=(action,), daemon=True).start()

    def _locked(self, action) -> None:
        with self.loading.lock:
            action()

    def _fallback(self, server: str) -> CallBridge | None:
        """An elicitation while no call runs: asked through the host's responder."""
        from workbench.mcp.connection import CallBridge

        loop = self._loop
        if loop is None or loop.is_closed():
            return None

        async def ask(questions: list[dict[str, Any]]) -> list[Any]:
            from workbench.events import RequestDenied

            try:
                return await self.gateway.responder.answer(
                    AskUserRequest(tool=extension_name(server), call_id="", questions=questions))
            except RequestDenied as exc:
                raise ToolError("cancelled", exc.reason) from exc

        return CallBridge(loop=loop, progress=lambda *a: None, ask=ask)


def _server_limits(config: Config) -> Limits:
    from workbench.sandbox.policy import Limits

    return Limits(memory_mb=config.settings.sandbox.memory_mb)


def _startup_timeout_s(config: Config) -> float:
    return config.settings.mcp.startup_timeout_ms / 1000
