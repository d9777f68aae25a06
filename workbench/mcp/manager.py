"""The MCP servers of one host: configured, listed, called, stopped.

A server runs on the event loop of its first call (see ``workbench.mcp.connection``);
``call`` and ``on_server`` reach it there from whichever loop asks. A server's tools
are cached by the digest of its entry (``<cache>/mcp/``), so a host registers known
tools without starting anything; a server whose tools were never listed is probed
(started, listed, stopped) by ``list_unknown``, on a thread of its own, since the
registry is built by synchronous code.

A probe that fails is kept beside the cache (``NAME-DIGEST.failed.json``: why, and
when): the next hosts do not wait on that server again. They report the kept failure
and probe it once more in the background (its state ``starting`` meanwhile), and its
tools join the registry when it lists them; only work that names the server (a call
of one of its tools) waits for it, within its start time. A changed entry is another
server, with no failure kept. Stopping the host stops every server and its
process tree; an ``atexit`` hook kills what is left when the host was never closed.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

from workbench.errors import ToolError
from workbench.mcp.config import ServerConfig
from workbench.mcp.connection import CallBridge, McpServer, alive, on_loop
from workbench.mcp.sandboxed import SYSTEM_PATH, prepare
from workbench.mcp.session import Launcher, probe
from workbench.mcp.transport import StdioProcess, server_environment
from workbench.sandbox.policy import Limits

log = logging.getLogger(__name__)

T = TypeVar("T")
STOP_TIMEOUT = 10.0
LISTINGS = ("tools", "prompts", "resources")
TOOL_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations", "execution")


class McpManager:
    """Owns the servers of one host; see the module docstring.

    Args:
        cwd: The folder stdio servers start in unless their entry names one.
        env: The host's environment (the source of ``env:`` grants and a few basics).
        logs_dir: Where each server's stderr is copied (``mcp-NAME.log``).
        cache_dir: Where listings are cached.
        limits: Resource limits of sandboxed servers.
        startup_timeout_s: How long a server may take to start and list its tools.
        on_change: Called on a server's loop with ``(server name, what)`` when its
            state, tools, prompts or resources change.
        fallback: Given a server's name, answers its elicitations that arrive while no
            call is running.
    """

    def __init__(self, *, cwd: Path, env: Mapping[str, str], logs_dir: Path, cache_dir: Path,
                 limits: Limits, startup_timeout_s: float,
                 on_change: Callable[[str, str], None],
                 fallback: Callable[[str], CallBridge | None] = lambda name: None) -> None:
        self.cwd = cwd
        self.env = dict(env)
        self.logs_dir = logs_dir
        self.cache_dir = cache_dir
        self.limits = limits
        self.on_change = on_change
        self.fallback = fallback
        self.servers: dict[str, McpServer] = {}
        self.launcher = Launcher(open_stdio=self._open_stdio, startup_timeout_s=startup_timeout_s)
        self._exit_hook = False
        self.notes: dict[str, str] = {}
        """The last thing the sandbox reported of each sandboxed server while it ran."""
        self._probes: dict[str, StdioProcess] = {}
        """The last process started for each server: what a probe that ran out of time
        leaves to kill."""
        self._killed = False
        """Whether ``kill_all`` ran: a probe still to start then starts nothing."""
        self.probing: set[str] = set()
        """The servers probed in the background now (shown as ``starting``)."""
        self._settled: set[str] = set()
        """Probes whose outcome is already kept (given up on, or the host closing): what
        their process says as it is killed is not their failure."""

    # --- servers --------------------------------------------------------------------

    def configure(self, configs: Mapping[str, ServerConfig]) -> None:
        """Make the servers match ``configs``: a removed or changed entry's server is
        stopped (in the background); a new one waits for its first need."""
        for name, server in list(self.servers.items()):
            wanted = configs.get(name)
            if wanted is None or wanted.digest() != server.config.digest():
                del self.servers[name]
                self._stop_soon(server)
            elif wanted != server.config:
                server.config = wanted  # e.g. disabled_tools: nothing that runs changed
        for name, config in configs.items():
            if name not in self.servers:
                self.servers[name] = McpServer(config, self.launcher, self._changed,
                                               fallback=self.fallback)

    def _kill_at_exit(self) -> None:
        if not self._exit_hook:
            atexit.register(self.kill_all)
            self._exit_hook = True

    def _changed(self, server: McpServer, what: str) -> None:
        if self.servers.get(server.name) is not server:
            return  # a server being replaced
        if what == "state":
            self._kill_at_exit()
        if what in LISTINGS and server.tools is not None:
            self._write_cache(server.config, self.listing(server.name) or {})
        self.on_change(server.name, what)

    def server(self, name: str) -> McpServer:
        """The server ``name``.

        Raises:
            ToolError: (``unavailable``) it is no longer configured.
        """
        server = self.servers.get(name)
        if server is None:
            raise ToolError("unavailable", f"the MCP server {name} is no longer configured here")
        return server

    async def call(self, name: str, tool: str, arguments: Any, bridge: CallBridge) -> Any:
        """Call ``tool`` of ``name`` from this loop (the server's, or across to it)."""
        server = self.server(name)
        loop = server.loop
        if loop is None or not alive(loop) or loop is asyncio.get_running_loop():
            return await server.call(tool, arguments, bridge)
        return await on_loop(loop, server.call(tool, arguments, bridge))

    async def on_server(self, name: str, action: Callable[[McpServer], Coroutine[Any, Any, T]]) -> T:
        """Run ``action(server)`` where the server runs (starting it here if it is not)."""
        server = self.server(name)
        loop = server.loop
        if loop is None or not alive(loop):
            return await action(server)
        return await on_loop(loop, action(server))

    # --- listings -------------------------------------------------------------------

    def listing(self, name: str) -> dict[str, list[dict[str, Any]]] | None:
        """A server's ``tools``, ``prompts`` and ``resources`` as JSON: as the running
        server listed them, else as cached, else None (never listed)."""
        server = self.servers[name]
        if server.tools is not None:
            return {"tools": as_json(server.tools, TOOL_KEYS), "prompts": as_json(server.prompts),
                    "resources": as_json(server.resources)}
        return self.read_cache(server.config)

    def tools_of(self, name: str) -> list[dict[str, Any]] | None:
        """A server's tools, live or cached; None when never listed."""
        found = self.listing(name)
        return None if found is None else found["tools"]

    def list_unknown(self, names: list[str], timeout: float,
                     wait_for: set[str] | None = None) -> dict[str, str]:
        """Probe the servers among ``names`` whose tools were never listed, together, on
        a thread of their own; wait up to ``timeout`` for their listings (not for them
        to stop). A server whose last probe failed is not waited on unless ``wait_for``
        names it: it is probed in the background (``on_change(name, "tools")`` once it
        lists its tools). Returns why each one that failed could not be listed: a
        protocol error ends a probe at once (see ``session.connect``); a server probed
        in the background says why it failed last time."""
        todo = [self.servers[n].config for n in names if self.tools_of(n) is None]
        if not todo:
            return {}
        kept = {c.name: self.read_failure(c) for c in todo}
        later = [c for c in todo if kept[c.name] is not None
                 and (wait_for is None or c.name not in wait_for)]
        now = [c for c in todo if c not in later]
        failures = {c.name: f"{kept[c.name]} (at its last start; starting it again in the "
                    "background)" for c in later}
        done: concurrent.futures.Future[dict[str, str]] = concurrent.futures.Future()
        waited = {c.name for c in now}
        self.probing |= {c.name for c in later}
        if later:
            self._kill_at_exit()

        async def probe_all() -> None:
            found: dict[str, str] = {}
            pending = set(waited)

            def settle(name: str) -> None:
                pending.discard(name)
                self.probing.discard(name)
                if not pending and not done.done():
                    done.set_result(found)

            def listed(config: ServerConfig) -> Callable[[dict[str, Any]], None]:
                def keep(listing: dict[str, Any]) -> None:
                    late = config.name in self._settled  # given up on, and listed after all
                    self._settled.discard(config.name)
                    self._write_cache(config, {k: as_json(listing[k], TOOL_KEYS if k == "tools" else None)
                                               for k in LISTINGS})
                    settle(config.name)
                    if (config.name not in waited or late) and self.servers.get(config.name) is not None:
                        # Off this loop, which ends with the probe: the host registers them.
                        threading.Thread(target=self.on_change, args=(config.name, "tools"),
                                         daemon=True).start()
                return keep

            async def one(config: ServerConfig) -> None:
                try:
                    await probe(config, self.launcher, listed(config))
                except Exception as exc:
                    if config.name in self._settled:
                        self._settled.discard(config.name)
                    elif config.name in pending or config.name in self.probing:
                        found[config.name] = _reason(exc)
                        self._write_failure(config, found[config.name])
                    settle(config.name)

            await asyncio.gather(*(one(c) for c in todo))
            if not done.done():
                done.set_result(found)

        if now:
            # The SDK is imported before the wait starts: the start time is the server's
            # to use, not ours (an import takes seconds on a loaded machine).
            import anyio  # noqa: F401
            import mcp.types  # noqa: F401
            from mcp import ClientSession  # noqa: F401
            from mcp.shared.message import SessionMessage  # noqa: F401
        threading.Thread(target=asyncio.run, args=(probe_all(),), name="mcp-probe",
                         daemon=True).start()
        if not now:
            return failures
        try:
            return {**failures, **done.result(timeout)}
        except concurrent.futures.TimeoutError:
            late = [c for c in now if self.read_cache(c) is None]
            for config in late:
                # Its probe thread may not outlive this process to stop it: end it now.
                # One not started yet (its thread still importing) goes on in the
                # background, and is killed with the host if it is still going.
                self._write_failure(config, "it did not list its tools in time")
                self._settled.add(config.name)
                self.probing.add(config.name)
                process = self._probes.pop(config.name, None)
                if process is not None:
                    process.kill_now()
            if late:
                self._kill_at_exit()
            return {**failures, **{c.name: "it did not list its tools in time" for c in late}}

    # --- stdio launch ----------------------------------------------------------------

    async def _open_stdio(self, config: ServerConfig) -> tuple[StdioProcess, Any]:
        if self._killed and config.name in self._settled:
            raise RuntimeError("the host is closing")  # a probe late past kill_all
        process, start_proxy = await self._new_stdio(config)
        self._probes[config.name] = process
        return process, start_proxy

    async def _new_stdio(self, config: ServerConfig) -> tuple[StdioProcess, Any]:
        log_path = self.logs_dir / f"mcp-{config.name}.log"
        if not config.sandbox:
            env = server_environment(self.env, config.env)
            return StdioProcess([config.command or "", *config.args], env,
                                config.cwd or str(self.cwd), log_path), None
        launch = prepare(config, cwd=self.cwd, env=self.env, limits=self.limits,
                         pins_file=self.cache_dir / "pins" / f"{config.name}-{config.digest()[:16]}.json")
        process = StdioProcess(launch.argv, {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}, "/", log_path,
                               pass_fds=launch.pass_fds, on_started=launch.started,
                               on_note=lambda note: self._sandbox_note(config.name, note))
        if launch.control is None:
            return process, None
        control = launch.control
        timeout = self.launcher.startup_timeout_s

        async def start_proxy() -> Callable[[], Coroutine[Any, Any, None]]:
            from workbench.sandbox.proxy import Proxy

            control.settimeout(timeout)
            try:
                _, fds, _, _ = await asyncio.to_thread(socket.recv_fds, control, 16, 1)
            finally:
                control.close()
            if not fds:
                raise RuntimeError("the sandboxed server did not set up its network proxy")
            proxy = await Proxy.serve(socket.socket(fileno=fds[0]), launch.policy.net, per_call=False)

            async def close() -> None:
                proxy.close()

            return close

        return process, start_proxy

    def _sandbox_note(self, name: str, note: str) -> None:
        """What the sandbox reported of a running server: kept for its status row, told."""
        self.notes[name] = note
        self.on_change(name, "sandbox")

    # --- the listing cache -----------------------------------------------------------

    def _cache_file(self, config: ServerConfig) -> Path:
        return self.cache_dir / f"{config.name}-{config.digest()[:16]}.json"

    def read_cache(self, config: ServerConfig) -> dict[str, list[dict[str, Any]]] | None:
        """The cached listing of the server ``config`` describes, if any."""
        try:
            data = json.loads(self._cache_file(config).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in LISTINGS):
            return None
        return {k: data[k] for k in LISTINGS}

    def _failure_file(self, config: ServerConfig) -> Path:
        return self.cache_dir / f"{config.name}-{config.digest()[:16]}.failed.json"

    def read_failure(self, config: ServerConfig) -> str | None:
        """Why the last probe of the server ``config`` describes failed, if it did."""
        try:
            data = json.loads(self._failure_file(config).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return str(data["reason"]) if isinstance(data, dict) and data.get("reason") else None

    def _write_failure(self, config: ServerConfig, reason: str) -> None:
        path = self._failure_file(config)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
            temp.write_text(json.dumps({"reason": reason, "at": int(time.time() * 1000)}),
                            encoding="utf-8")
            temp.replace(path)
        except OSError as exc:
            log.debug("cannot keep why %s failed: %s", config.name, exc)

    def _write_cache(self, config: ServerConfig, listing: dict[str, Any]) -> None:
        path = self._cache_file(config)
        self._failure_file(config).unlink(missing_ok=True)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for old in path.parent.glob(f"{config.name}-*.json"):
                if old != path:
                    old.unlink(missing_ok=True)
            temp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
            temp.write_text(json.dumps(listing), encoding="utf-8")
            temp.replace(path)
        except OSError as exc:
            log.debug("cannot cache the listing of %s: %s", config.name, exc)

    # --- stopping -------------------------------------------------------------------

    def _stop_soon(self, server: McpServer) -> None:
        loop = server.loop
        if loop is not None and alive(loop):
            asyncio.run_coroutine_threadsafe(server.stop(), loop)
        elif server.process is not None:
            server.process.kill_now()

    async def aclose(self) -> None:
        """Stop every server cleanly (stdin closed, then its process group ended)."""
        async def stop(server: McpServer) -> None:
            loop = server.loop
            if loop is None or not alive(loop):
                if server.process is not None:
                    server.process.kill_now()
                return
            with contextlib.suppress(asyncio.TimeoutError, RuntimeError):
                await asyncio.wait_for(on_loop(loop, server.stop()), STOP_TIMEOUT)

        await asyncio.gather(*(stop(s) for s in self.servers.values()))
        self.kill_all()

    def kill_all(self) -> None:
        """SIGKILL every server's process group, and those of probes still running in
        the background (the host is exiting)."""
        for server in self.servers.values():
            if server.process is not None:
                server.process.kill_now()
        self._killed = True
        for name in list(self.probing):
            self._settled.add(name)
            self.probing.discard(name)
            process = self._probes.pop(name, None)
            if process is not None:
                process.kill_now()
        if self._exit_hook:
            atexit.unregister(self.kill_all)
            self._exit_hook = False


def as_json(items: list[Any], keep: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """MCP listing entries (tools, prompts, resources) as JSON, in the protocol's names."""
    out = []
    for item in items:
        data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
        out.append({k: v for k, v in data.items() if keep is None or k in keep})
    return out


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "it did not answer in time"
    if isinstance(exc, FileNotFoundError):
        return f"its command was not found ({exc.filename})"
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions)
    return str(exc) or type(exc).__name__
