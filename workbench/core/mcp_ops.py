"""MCP servers in the Host: their tools in the registry, their state, prompts and resources.

``Host`` inherits ``McpOps``. The servers are a ``ToolSource``
(``workbench.core.mcp_source.McpSource``, loaded after the extensions and the host's
own tools): a reload calls ``add_mcp_tools`` and registers ``mcp_tools()``, so MCP
tools take their place in the precedence (built-in, extension, MCP) and survive a
reload; ``Host.ashutdown`` stops the sources, which calls ``aclose_mcp``. Each MCP tool is a registry ``Tool`` with ``runtime="mcp"``, the
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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import ToolError, WorkbenchError
from workbench.events import AskUserRequest, ExtensionStatusChanged, Notice
from workbench.mcp.naming import extension_name, tool_name

if TYPE_CHECKING:
    from workbench.config.files import Config
    from workbench.config.trust import TrustRecord
    from workbench.core.host import Host
    from workbench.mcp.config import ServerConfig, ServerList
    from workbench.mcp.connection import CallBridge
    from workbench.mcp.manager import McpManager
    from workbench.mcp.serve import ServeBackend
    from workbench.sandbox.policy import Limits
    from workbench.tools.registry import Tool

log = logging.getLogger(__name__)

_MANAGER = "_mcp_manager"


class McpOps:
    """The Host's MCP methods; see the module docstring."""

    mcp_needed: set[str] | None = None
    """The servers whose never-listed tools a load starts them to list; None: every
    one (a chat's model may call any tool). ``call_tool`` narrows it to the server a
    tool's name names, so one call never waits for a server it does not use."""

    # --- the servers --------------------------------------------------------------

    def mcp_follow_folder(self: Host, folder: Path) -> None:
        """Stdio servers started from now on start in ``folder``."""
        manager = self.__dict__.get(_MANAGER)
        if manager is not None:
            manager.cwd = folder

    @property
    def mcp(self: Host) -> McpManager:
        """The MCP servers of this host (created on first use; nothing starts yet)."""
        manager = self.__dict__.get(_MANAGER)
        if manager is None:
            import os

            from workbench.mcp.manager import McpManager

            manager = McpManager(
                cwd=self.cwd, env=os.environ, logs_dir=self.home.logs_dir,
                cache_dir=self.home.cache_dir / "mcp",
                limits=_server_limits(self.config),
                startup_timeout_s=_startup_timeout_s(self.config),
                on_change=self._mcp_changed, fallback=self._mcp_fallback)
            self.__dict__[_MANAGER] = manager
        return manager

    def _mcp_follow_config(self: Host) -> None:
        """Servers started from now on get the limits of ``self.config``."""
        manager = self.__dict__.get(_MANAGER)
        if manager is not None:
            manager.limits = _server_limits(self.config)
            manager.launcher.startup_timeout_s = _startup_timeout_s(self.config)

    def mcp_server_list(self: Host) -> ServerList:
        """The server entries that apply here (see ``workbench.mcp.config.load_servers``)."""
        from workbench.mcp.config import load_servers

        return load_servers(self.config)

    def mcp_disabled(self: Host) -> set[str]:
        """Servers the person switched off everywhere (``mcp.disabled`` in their own config:
        a project cannot switch a server back on)."""
        for layer in self.config.layers:
            if layer.origin.startswith("global"):
                return set(layer.values.get("mcp.disabled", []))
        return set()

    def add_mcp_tools(self: Host) -> None:
        """Configure every enabled server, so that ``mcp_tools`` offers their tools (the
        MCP source's load, at every reload).

        Servers whose tools were never listed are started now, together, within
        ``mcp.startup_timeout_ms``, except one whose last start failed: that one is
        started again in the background unless this work names it
        (``McpManager.list_unknown``). The others offer their cached tools and start
        at the first call.
        """
        _remember_loop(self)
        found = self.mcp_server_list()
        if not (found.servers or found.pending or found.problems or _MANAGER in self.__dict__):
            return  # no server here: nothing to import or start
        disabled = self.mcp_disabled()
        active = {name: s for name, s in found.servers.items() if name not in disabled}
        manager = self.mcp
        manager.configure(active)
        # Only the servers this work may need are started to list their tools (all of
        # them for a chat; for one call, the server it names, if any).
        needed = [name for name in active if self.mcp_needed is None or name in self.mcp_needed]
        failures = manager.list_unknown(needed, manager.launcher.startup_timeout_s + 1,
                                        wait_for=self.mcp_needed)
        notices = list(found.problems)
        notices += [f"MCP server {s.name} in {s.origin} is not trusted in this version, so it "
                    "does not start; run `workbench trust` to allow it" for s in found.pending.values()]
        notices += [f"MCP server {name} could not start: {why}" for name, why in failures.items()]
        self.__dict__["_mcp_notices"] = notices
        self.__dict__["_mcp_failures"] = failures

    def _mcp_explained(self: Host, tool: str, outcome: Any) -> Any:
        """A tool not found whose name names a server that could not list its tools
        says why (the server's failure) rather than only that it is unknown."""
        if outcome.ok or outcome.error.get("kind") != "not_found":
            return outcome
        from dataclasses import replace

        from workbench.mcp.naming import servers_named_by

        failures = self.__dict__.get("_mcp_failures", {})
        for server in sorted(servers_named_by(tool)):
            if server in failures:
                message = f"{outcome.error['message']}: the MCP server {server} could not start: {failures[server]}"
                return replace(outcome, error={**outcome.error, "message": message})
        return outcome

    def mcp_notices(self: Host) -> list[str]:
        """What the last load of the servers found wrong, for the person."""
        return list(self.__dict__.get("_mcp_notices", []))

    def mcp_tools(self: Host) -> list[Tool]:
        """The tools of every configured server (none before the first load)."""
        manager = self.__dict__.get(_MANAGER)
        if manager is None:
            return []
        return [tool for name in list(manager.servers) for tool in self._mcp_tools_of(name)]

    def _mcp_tools_of(self: Host, name: str) -> list[Tool]:
        from workbench.mcp.tools import registry_tools

        server = self.mcp.servers.get(name)
        specs = self.mcp.tools_of(name) if server is not None else None
        if server is None or specs is None:
            return []
        folder = Path(server.config.cwd or self.cwd)
        return list(registry_tools(server.config, specs, folder,
                                   lambda tool: self._mcp_handler(name, tool)))

    def _mcp_handler(self: Host, server_name: str, tool: str):
        from workbench.mcp.connection import CallBridge
        from workbench.mcp.results import outcome, progress_fraction, progress_label

        async def handler(arguments: Any, ctx: Any) -> Any:
            loop = asyncio.get_running_loop()
            self.__dict__["_mcp_loop"] = loop

            def progress(value: float, total: float | None, message: str | None) -> None:
                ctx.set_progress(progress_fraction(value, total), progress_label(value, total, message))

            def log_line(level: str, message: str) -> None:
                loop.call_soon_threadsafe(ctx.log, level, message)

            bridge = CallBridge(loop=loop, progress=progress, ask=ctx.ask_user, log=log_line)
            return outcome(await self.mcp.call(server_name, tool, arguments, bridge))

        return handler

    # --- what front-ends show --------------------------------------------------------

    def mcp_servers_if_any(self: Host) -> list[dict[str, Any]]:
        """``mcp_servers``, without creating anything when no server entry applies."""
        found = self.mcp_server_list()
        if not (found.servers or found.pending or _MANAGER in self.__dict__):
            return []
        return self.mcp_servers()

    def mcp_servers(self: Host) -> list[dict[str, Any]]:
        """Every server entry with its state and tools, secrets masked: what ``mcp list``
        prints and the TUI shows (see ``workbench.mcp.status.server_rows``)."""
        from workbench.mcp.status import server_rows

        _remember_loop(self)
        return server_rows(self.mcp_server_list(), self.mcp_disabled(), self.mcp,
                           self.__dict__.get("_mcp_failures"))

    def mcp_add(self: Host, server: ServerConfig, *, scope: str = "global",
                replace: bool = False) -> str | None:
        """Add a server entry (``workbench mcp add``) and register its tools.

        Returns:
            A notice when it does not apply yet (a project entry needs trust).

        Raises:
            ConfigError: The entry is not valid, or a server of that name exists.
        """
        from workbench.mcp.config import add_entry

        path = add_entry(self.home, self.cwd, server, scope, replace)  # type: ignore[arg-type]
        self.store.audit("person", "mcp.add", server.name, {"scope": scope, "file": str(path)})
        return self.refresh_mcp(path)

    def mcp_remove(self: Host, name: str, *, scope: str = "global") -> str | None:
        """Remove a server entry and its tools; returns a notice as ``mcp_add``.

        Raises:
            WorkbenchError: No such entry in that scope's file.
        """
        from workbench.mcp.config import config_path, remove_server, set_disabled

        path = config_path(self.home, self.cwd, scope)  # type: ignore[arg-type]
        if not remove_server(path, name):
            raise WorkbenchError(f"no MCP server named {name!r} in {path}")
        if name in self.mcp_disabled():
            set_disabled(self.home, self.cwd, self.mcp_disabled(), name, False)
        self.store.audit("person", "mcp.remove", name, {"scope": scope, "file": str(path)})
        return self.refresh_mcp(path)

    def mcp_set_enabled(self: Host, name: str, enabled: bool, tool: str | None = None) -> str | None:
        """Switch a server (in every chat: ``mcp.disabled`` in the person's config) or one
        of its tools (``disabled_tools`` in the server's entry) on or off.

        Raises:
            WorkbenchError: No such server (or it has no such tool).
        """
        from workbench.mcp.config import entry_file, set_disabled, update_server

        found = self.mcp_server_list()
        config = found.servers.get(name) or found.pending.get(name)
        if config is None:
            raise WorkbenchError(f"no MCP server named {name!r}; `workbench mcp list` shows them")
        action = f"mcp.{'enable' if enabled else 'disable'}"
        if tool is None:
            set_disabled(self.home, self.cwd, self.mcp_disabled(), name, not enabled)
            self.store.audit("person", action, name, {})
            return self.refresh_mcp(None)
        known = self.mcp.tools_of(name) if name in self.mcp.servers else None
        if known is not None and tool not in {t["name"] for t in known} | set(config.disabled_tools):
            raise WorkbenchError(f"the MCP server {name} has no tool named {tool!r}")
        self.store.audit("person", action, f"{name}/{tool}", {})
        off = sorted({t for t in config.disabled_tools if t != tool} | (set() if enabled else {tool}))
        path = entry_file(self.home, self.config.project_file, config)
        update_server(path, name, "disabled_tools", off or None)
        return self.refresh_mcp(path)

    def trust_project_config(self: Host, project_dir: Path) -> TrustRecord:
        """Trust the project's ``.workbench/config.toml`` as it is now (what ``workbench
        trust`` does) and apply it: its settings and its MCP servers.

        Raises:
            ConfigError: There is no project config there, or it cannot be read.
        """
        from workbench.config.trust import trust_project

        record = trust_project(self.home, project_dir)
        self.refresh_mcp(None)
        return record

    def refresh_mcp(self: Host, written: Path | None) -> str | None:
        """Read the server entries again and re-register their tools (after a change);
        returns a notice when ``written`` is a project file that now needs trust."""
        from workbench.mcp.config import trust_notice
        from workbench.mcp.naming import server_of

        with self._loading:
            self.config.reload()
            for extension in {t.extension for t in self.registry.all_tools()}:
                if server_of(extension) is not None:
                    self.registry.remove_extension(extension)
            if self._extensions_loaded:
                self.sources.reload("mcp")
        return trust_notice(self.home, written)

    def mcp_prompts(self: Host) -> list[dict[str, Any]]:
        """The prompts of every enabled server, as the chat offers them: a slash command
        ``/mcp__server__prompt`` each, with its description and arguments."""
        rows = []
        for server in self.mcp_servers():
            if server["state"] in ("disabled", "untrusted"):
                continue
            listing = self.mcp.listing(server["name"]) if server["name"] in self.mcp.servers else None
            for prompt in (listing or {}).get("prompts", []):
                rows.append({"server": server["name"], "name": prompt["name"],
                             "command": "/" + tool_name(server["name"], prompt["name"]),
                             "description": prompt.get("description", ""),
                             "arguments": prompt.get("arguments", [])})
        return rows

    async def mcp_get_prompt(self: Host, server: str, name: str,
                             arguments: dict[str, str] | None = None) -> dict[str, Any]:
        """One prompt's messages (``prompts/get``), starting the server if needed; ``text``
        joins their text, for a slash command to put in the chat.

        Raises:
            WorkbenchError: No such server, or it could not start or refused.
        """
        async def get(found: Any) -> Any:
            return await (await found.ensure_started()).get_prompt(name, arguments or {})

        result = await self._mcp_request(server, get)
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        data["text"] = "\n\n".join(m["content"]["text"] for m in data.get("messages", [])
                                    if m.get("content", {}).get("type") == "text")
        return data

    async def mcp_read_resource(self: Host, server: str, uri: str) -> dict[str, Any]:
        """One resource's contents (``resources/read``), starting the server if needed.

        Raises:
            WorkbenchError: No such server, or it could not start or refused.
        """
        async def read(found: Any) -> Any:
            return await (await found.ensure_started()).read_resource(uri)

        result = await self._mcp_request(server, read)
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def mcp_check(self: Host, names: list[str] | None = None) -> dict[str, str]:
        """Start the enabled servers (or ``names``) now; returns why each failed."""
        await asyncio.to_thread(self.ensure_extensions)
        chosen = [n for n in self.mcp.servers if names is None or n in names]

        async def start(name: str) -> str | None:
            async def started(server: Any) -> None:
                await server.ensure_started()

            try:
                await self.mcp.on_server(name, started)
            except ToolError as exc:
                return exc.message
            return None

        results = await asyncio.gather(*(start(n) for n in chosen))
        return {n: why for n, why in zip(chosen, results) if why}

    def set_mcp_server_enabled(self: Host, session_id: str, server: str, enabled: bool) -> None:
        """Switch a server's tools off or on in one chat (as an extension ``mcp:NAME``).

        Raises:
            WorkbenchError: No such session or server.
        """
        session = self.session(session_id)
        if server not in self.mcp_server_list().servers:
            raise WorkbenchError(f"no MCP server named {server!r}; `workbench mcp list` shows them")
        self.store.set_session_extension(session["id"], extension_name(server), enabled)
        self.store.audit("person", f"session.extension.{'enable' if enabled else 'disable'}",
                         extension_name(server), {"session_id": session["id"]})

    def mcp_serve_backend(self: Host, *, builtin: bool = True) -> ServeBackend:
        """What ``workbench mcp serve`` offers: the built-in tools (unless ``builtin`` is
        False) and the extensions' tools, each call through the gateway as the caller
        ``agent``, never asked anything (see ``workbench.mcp.serve``). The host's own
        tools (``tool_invoke``, the memory tools…) are not offered: they serve a chat."""
        from workbench.core.gateway import CallOptions
        from workbench.mcp.serve import host_backend
        from workbench.tools.registry import HOST_RUNTIME

        def tools() -> list[tuple[str, str, dict[str, Any]]]:
            self.ensure_extensions()
            served = self.sources.served()
            return [(t.name, t.description, t.parameters) for t in self.registry.available()
                    if t.origin in served and (builtin or t.source != "builtin")
                    and t.runtime != HOST_RUNTIME]

        def call(name: str, arguments: dict[str, Any], call_id: str):
            return self.gateway.call(name, arguments, CallOptions(caller="agent", prompt=False),
                                     call_id=call_id)

        return host_backend(tools=tools, call=call, subscribe=self.bus.subscribe)

    async def aclose_mcp(self: Host) -> None:
        """Stop every server and what it started (called by ``Host.aclose``)."""
        manager = self.__dict__.get(_MANAGER)
        if manager is not None:
            await manager.aclose()

    # --- from the MCP loop ------------------------------------------------------------

    async def _mcp_request(self: Host, server: str, request) -> Any:
        from mcp import MCPError

        _remember_loop(self)
        await asyncio.to_thread(self.ensure_extensions)
        try:
            return await self.mcp.on_server(server, request)
        except ToolError as exc:
            raise WorkbenchError(exc.message) from None
        except MCPError as exc:
            raise WorkbenchError(f"the MCP server refused: {exc.error.message}") from None

    def _mcp_changed(self: Host, name: str, what: str) -> None:
        """On the server's loop: its state or listings changed."""
        manager = self.__dict__.get(_MANAGER)
        server = manager.servers.get(name) if manager is not None else None
        if server is None:
            return
        if what == "tools":
            self._mcp_on_host(lambda: self._mcp_tools_changed(name))
        elif what == "sandbox":
            self.bus.publish(Notice(level="warning",
                                    message=f"MCP server {name}: {manager.notes.get(name, '')}"))
        elif what == "state":
            from workbench.mcp.status import state_notice

            notice = state_notice(name, server)
            if notice is not None:
                self.bus.publish(Notice(level=notice[0], message=notice[1]))  # type: ignore[arg-type]

    def _mcp_tools_changed(self: Host, name: str) -> None:
        if not self._extensions_loaded:
            return  # the first load registers them
        before = {t.name for t in self.registry.all_tools() if t.extension == extension_name(name)}
        self.sources.refresh("mcp")
        after = {t.name for t in self.registry.all_tools() if t.extension == extension_name(name)}
        if before != after:
            self.bus.publish(ExtensionStatusChanged(report=self.status_report().to_json(),
                                                    reloaded=True))

    def _mcp_on_host(self: Host, action) -> None:
        """Run ``action`` now with the reload lock, on the server's loop (the host's);
        while a reload holds the lock, retry shortly rather than block the loop."""
        if self._loading.acquire(blocking=False):
            try:
                action()
            finally:
                self._loading.release()
            return
        try:
            asyncio.get_running_loop().call_later(0.05, self._mcp_on_host, action)
        except RuntimeError:  # no loop here: wait for the reload on a thread
            threading.Thread(target=self._mcp_locked, args=(action,), daemon=True).start()

    def _mcp_locked(self: Host, action) -> None:
        with self._loading:
            action()

    def _mcp_fallback(self: Host, server: str) -> CallBridge | None:
        """An elicitation while no call runs: asked through the host's responder."""
        from workbench.mcp.connection import CallBridge

        loop = self.__dict__.get("_mcp_loop")
        if loop is None or loop.is_closed():
            return None

        async def ask(questions: list[dict[str, Any]]) -> list[Any]:
            from workbench.events import RequestDenied

            try:
                return await self.responder.answer(
                    AskUserRequest(tool=extension_name(server), call_id="", questions=questions))
            except RequestDenied as exc:
                raise ToolError("cancelled", exc.reason) from exc

        return CallBridge(loop=loop, progress=lambda *a: None, ask=ask)


def _server_limits(config: Config) -> Limits:
    from workbench.sandbox.policy import Limits

    return Limits(memory_mb=config.settings.sandbox.memory_mb)


def _startup_timeout_s(config: Config) -> float:
    return config.settings.mcp.startup_timeout_ms / 1000


def _remember_loop(host: Any) -> None:
    try:
        host.__dict__["_mcp_loop"] = asyncio.get_running_loop()
    except RuntimeError:
        pass
