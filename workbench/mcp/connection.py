"""The life of one MCP server: started on first need, supervised, restarted, stopped.

States are the supervisor's (``workbench.states``: ``STOPPED``, ``STARTING``, ``RUNNING``,
``BACKOFF``, ``FATAL``, by ``CONNECTION_TRANSITIONS``); every change goes through
``change_state``, which tells the owner. A server
that dies is restarted after a growing delay (its tools answer ``unavailable`` with
the reason meanwhile); after ``MAX_FAILURES`` quick failures in a row it is left
``FATAL`` until the next call needs it. ``tools/list_changed`` (and the prompt and
resource equivalents) re-list in the background and tell the owner.

A server runs on the event loop of its first call (the host's loop: the TUI's, a
headless run's), so a warm call crosses no thread. When that loop has ended (a CLI
command runs one per call), the next call starts the server again on its own loop.
A call from another thread's loop reaches it through a ``CallBridge``, as do the
call's progress notifications and elicitation forms, which end at the gateway's
``ToolContext`` like any tool's. ``probe`` lists a server's tools with a connection
of its own, for callers that have no loop (a reload on a worker thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from workbench.errors import ToolError
from workbench.mcp.config import ServerConfig
from workbench.mcp.results import elicitation_answer, elicitation_questions
from workbench.mcp.session import Launcher, connect, list_all, list_everything
from workbench.mcp.transport import StdioProcess
from workbench.states import CONNECTION_TRANSITIONS, ProcessState, Stateful

log = logging.getLogger(__name__)
T = TypeVar("T")

BACKOFF_S = (0.25, 1.0, 2.0, 4.0, 8.0, 16.0)
MAX_FAILURES = 6
STABLE_S = 30.0
"""A run this long counts as a success: the next death starts the delays from the beginning."""
DEATH_REASON_WAIT = 1.0
LOG_LEVELS = {"debug": "debug", "info": "info", "notice": "info", "warning": "warn", "error": "error",
              "critical": "error", "alert": "error", "emergency": "error"}
"""MCP's syslog levels as a tool's log levels."""


State = ProcessState
"""A server's state: the supervisor's ``ProcessState``, by the name callers of this package use."""


def alive(loop: asyncio.AbstractEventLoop | None) -> bool:
    """Whether ``loop`` can still run a server's tasks."""
    return loop is not None and not loop.is_closed() and loop.is_running()


async def on_loop(loop: asyncio.AbstractEventLoop, coro: Awaitable[T]) -> T:
    """Await ``coro`` on ``loop``: here when it is the running loop, else across threads
    (cancelling the caller cancels it there)."""
    if loop is asyncio.get_running_loop():
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


@dataclass
class CallBridge:
    """How a server reaches one call's caller: its loop, its progress, its forms."""

    loop: asyncio.AbstractEventLoop
    progress: Callable[[float, float | None, str | None], None]
    """Called on the caller's loop."""
    ask: Callable[[list[dict[str, Any]]], Awaitable[list[Any]]]
    """A coroutine function run on the caller's loop (the call's ``ctx.ask_user``)."""
    log: Callable[[str, str], None] = lambda level, message: None

    def report(self, value: float, total: float | None, message: str | None) -> None:
        if self.loop is asyncio.get_running_loop():
            self.progress(value, total, message)
        else:
            self.loop.call_soon_threadsafe(self.progress, value, total, message)

    async def ask_across(self, questions: list[dict[str, Any]]) -> list[Any]:
        return await on_loop(self.loop, self.ask(questions))


class McpServer(Stateful):
    """One configured server; see the module docstring.

    Args:
        config: Its entry.
        launcher: How to start it.
        on_change: Called on the server's loop with ``(server, what)``: ``state``,
            ``tools``, ``prompts`` or ``resources``.
        fallback: Given the server's name, answers an elicitation that arrives while no
            call is running.
    """

    def __init__(self, config: ServerConfig, launcher: Launcher,
                 on_change: Callable[[McpServer, str], None],
                 fallback: Callable[[str], CallBridge | None] | None = None) -> None:
        self.config = config
        self.launcher = launcher
        self.on_change = on_change
        self.fallback = fallback
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop the server runs on, from its first need."""
        self.state = State.STOPPED
        self.reason = ""
        """Why it is not running (the last death or failure), for people."""
        self.retry_at: float | None = None
        self.tools: list[Any] | None = None
        self.prompts: list[Any] = []
        self.resources: list[Any] = []
        self.server_info: dict[str, Any] = {}
        self.session: Any = None
        self.process: StdioProcess | None = None
        self.failures = 0
        self._supervisor: asyncio.Task | None = None
        self._attempt: asyncio.Future | None = None
        self._stop: asyncio.Event | None = None
        self._lost: asyncio.Future | None = None
        self._calls: list[CallBridge] = []
        self._refreshing: dict[str, asyncio.Task] = {}
        self._dirty: set[str] = set()

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def pid(self) -> int | None:
        running = self.process is not None and self.current_state() is State.RUNNING
        return self.process.pid if running and self.process is not None else None

    def current_state(self) -> State:
        """Its state; ``STOPPED`` once the loop it ran on has ended."""
        return self.state if self.loop is None or alive(self.loop) else State.STOPPED

    transitions = CONNECTION_TRANSITIONS

    def on_state_change(self, old: State, new: State, reason: str) -> None:
        self.reason = reason
        self.on_change(self, "state")

    # --- life ------------------------------------------------------------------

    async def ensure_started(self) -> Any:
        """The running session, starting the server (on this loop) if needed.

        Raises:
            ToolError: (``unavailable``) it could not start, or is waiting to restart.
        """
        if self.loop is not None and not alive(self.loop):
            self._forget()
        if self.state is State.RUNNING and self.session is not None:
            return self.session
        if self.state is State.BACKOFF:
            wait = max(0.0, (self.retry_at or 0) - time.monotonic())
            raise ToolError("unavailable", f"the MCP server {self.name} is unavailable "
                            f"({self.reason}); it restarts in {wait:.1f} s")
        if self._supervisor is None or self._supervisor.done():
            self.loop = asyncio.get_running_loop()
            self.failures = 0
            self._stop = asyncio.Event()
            self._attempt = self.loop.create_future()
            self._supervisor = asyncio.ensure_future(self._supervise())
        assert self._attempt is not None
        await asyncio.shield(self._attempt)
        if self.state is State.RUNNING and self.session is not None:
            return self.session
        raise ToolError("unavailable", f"the MCP server {self.name} could not start: {self.reason}")

    def _forget(self) -> None:
        """The loop it ran on has ended (its tasks were cancelled): start afresh."""
        if self.process is not None:
            self.process.kill_now()
        self.loop = self.session = self._supervisor = self._attempt = self.process = None
        self.state, self.retry_at, self._calls = State.STOPPED, None, []
        self._refreshing.clear()

    async def _supervise(self) -> None:
        assert self._stop is not None
        while not self._stop.is_set():
            started = time.monotonic()
            self.change_state(State.STARTING, self.reason)
            try:
                reason = await self._run_once()
            except Exception as exc:  # a failed start, in words
                reason = _describe(exc, self.process)
            finally:
                self.session = None
                self._settle_attempt()
            if self._stop.is_set():
                break
            if time.monotonic() - started > STABLE_S:
                self.failures = 0
            self.failures += 1
            if self.failures >= MAX_FAILURES:
                self.retry_at = None
                self.change_state(State.FATAL, f"{reason} (gave up after {self.failures} attempts; "
                                          "the next call tries again)")
                return
            delay = BACKOFF_S[min(self.failures - 1, len(BACKOFF_S) - 1)]
            self.retry_at = time.monotonic() + delay
            self.change_state(State.BACKOFF, reason)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._stop.wait()
            self._attempt = asyncio.get_running_loop().create_future()
        self.change_state(State.STOPPED, "stopped")

    def _settle_attempt(self) -> None:
        if self._attempt is not None and not self._attempt.done():
            self._attempt.set_result(None)

    async def _run_once(self) -> str:
        """Connect, list, serve until the connection ends; returns why it ended."""
        assert self._stop is not None
        self._lost = asyncio.get_running_loop().create_future()
        async with contextlib.AsyncExitStack() as stack:
            session, init, self.process = await connect(
                stack, self.config, self.launcher, elicit=self._elicit, on_message=self._on_message)
            self.session = session
            listing = await list_everything(session, init, self.launcher.startup_timeout_s)
            self.server_info = listing.pop("server_info")
            self.tools, self.prompts, self.resources = (
                listing["tools"], listing["prompts"], listing["resources"])
            self.retry_at = None
            self.change_state(State.RUNNING)
            self._settle_attempt()
            self.on_change(self, "tools")
            ended = [asyncio.ensure_future(self._stop.wait()), self._lost]
            if self.process is not None:
                ended.append(asyncio.ensure_future(self.process.exited.wait()))
            try:
                await asyncio.wait(ended, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in ended:
                    if task is not self._lost:
                        task.cancel()
            if self._stop.is_set():
                return "stopped"
            if self._lost.done():
                return str(self._lost.result())
            return self.process.exit_reason() if self.process is not None else "the connection ended"

    async def stop(self) -> None:
        """Stop the server and everything it started; it stays ``STOPPED``.
        Run it on the server's loop (``on_loop``)."""
        if self._stop is not None:
            self._stop.set()
        if self._supervisor is not None and not self._supervisor.done():
            try:
                async with asyncio.timeout(5.0):
                    await asyncio.shield(self._supervisor)
            except TimeoutError:
                self._supervisor.cancel()
        if self.process is not None:
            self.process.kill_now()

    # --- listings --------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            # A line or event that is not a message: the session goes on. (A connection
            # that is gone shows as the end of stdout, or as a call's ``CONNECTION_CLOSED``.)
            log.warning("MCP server %s sent something unreadable: %s", self.name, message)
            return
        method = getattr(message, "method", "")
        if method == "notifications/message" and self._calls:
            # A server's log line while a call runs: the call's log, as a tool's ctx.log.
            params = message.params
            text = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
            self._calls[-1].log(LOG_LEVELS.get(params.level, "info"), f"{self.name}: {text}")
            return
        what = {"notifications/tools/list_changed": "tools",
                "notifications/prompts/list_changed": "prompts",
                "notifications/resources/list_changed": "resources"}.get(method)
        if what is not None:
            self._refresh(what)

    def _refresh(self, what: str) -> None:
        """Re-list ``what`` in the background; notifications in a burst cost one extra listing."""
        running = self._refreshing.get(what)
        if running is not None and not running.done():
            self._dirty.add(what)
            return

        async def refresh() -> None:
            while True:
                self._dirty.discard(what)
                if self.session is None:
                    return
                try:
                    setattr(self, what, await list_all(self.session, what))
                except Exception as exc:
                    log.debug("MCP server %s: re-listing %s failed: %s", self.name, what, exc)
                    return
                self.on_change(self, what)
                if what not in self._dirty:
                    return

        self._refreshing[what] = asyncio.ensure_future(refresh())

    # --- calls ----------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any], bridge: CallBridge) -> Any:
        """Call ``tool`` (on the server's loop); returns the ``CallToolResult``.

        Raises:
            ToolError: ``unavailable`` when the server is down or died during the call,
                ``tool`` when it answered with a protocol error.
        """
        import anyio
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED

        session = await self.ensure_started()
        process = self.process

        async def progress(value: float, total: float | None, message: str | None) -> None:
            bridge.report(value, total, message)

        self._calls.append(bridge)
        try:
            return await session.call_tool(tool, arguments, progress_callback=progress)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ToolError("unavailable", f"the MCP server {self.name} stopped before the call "
                            "reached it; it is being restarted") from None
        except MCPError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                raise ToolError("tool", f"the MCP server {self.name} refused the call: "
                                f"{exc.error.message}", code=exc.error.code) from None
            reason = "the connection closed"
            if process is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(DEATH_REASON_WAIT):
                        await process.exited.wait()
                reason = process.exit_reason()
            elif self._lost is not None and not self._lost.done():
                self._lost.set_result(reason)  # an HTTP server: connect again, a new session
            raise ToolError("unavailable", f"the MCP server {self.name} stopped during the call "
                            f"({reason}); it is being restarted") from None
        except (ValueError, RuntimeError) as exc:  # a result the protocol does not allow
            raise ToolError("tool", f"the MCP server {self.name} answered with something the "
                            f"workbench cannot use: {exc}") from None
        finally:
            with contextlib.suppress(ValueError):
                self._calls.remove(bridge)

    async def _elicit(self, context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        bridge = self._calls[-1] if self._calls else self.fallback(self.name) if self.fallback else None
        if bridge is None:
            return ElicitResult(action="decline")
        questions = elicitation_questions(self.name, params)
        try:
            answers = await bridge.ask_across(questions)
        except ToolError:
            return ElicitResult(action="decline")
        try:
            action, content = elicitation_answer(questions, list(answers))
        except ValueError as exc:
            bridge.log("warn", f"the answer to {self.name}'s form was not sent: {exc}")
            return ElicitResult(action="cancel")
        return ElicitResult(action=action, content=content if action == "accept" else None)


def _describe(exc: BaseException, process: StdioProcess | None) -> str:
    if isinstance(exc, TimeoutError):
        return "it did not answer in time"
    if isinstance(exc, FileNotFoundError):
        return f"its command was not found ({exc.filename})"
    if process is not None and process.returncode is not None:
        return process.exit_reason()
    text = str(exc) or type(exc).__name__
    if isinstance(exc, BaseExceptionGroup):
        text = "; ".join(str(e) or type(e).__name__ for e in exc.exceptions)
    return text
