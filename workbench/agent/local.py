"""The embedded model: llama.cpp's server in a supervised child process on loopback.

``LlamaServer`` starts ``python -m workbench.agent.llama_server`` (prebuilt
``xllamacpp``) on first use, in its own session, with a minimal environment (no
API keys), waits for its address and for ``/health``, and keeps it: a server that
died is started again once; a second death is an error that quotes its log. It is
stopped with ``stop`` (the whole process group), when garbage-collected or at exit,
and on its own when the host dies: the child serves only while its stdin pipe
from the host stays open.

``LocalProvider`` speaks to it as an OpenAI-compatible endpoint. The built-in model
(SmolLM2-135M) is weak: ``notice`` says so, and how to connect a better one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from workbench.agent.grammar import tool_list
from workbench.agent.messages import ChatMessage, ModelChunk, ToolSpec
from workbench.agent.openai import OpenAIProvider
from workbench.agent.wire import ModelHTTPError, Usage
from workbench.config.settings import DEFAULTS
from workbench.errors import ModelError

log = logging.getLogger(__name__)

WEAK_MODEL_NOTICE = (
    "Using the small built-in local model (SmolLM2-135M): fine for short chat, poor at tools. "
    "Connect a better one: `workbench config set model openai:gpt-4o-mini` with OPENAI_API_KEY, "
    "or `workbench models use PATH.gguf`.")
"""What a front-end shows while the built-in model answers."""

_CHARS_PER_TOKEN = 2.5
"""A low estimate (JSON and code run near 3), so that what is sent fits the context."""

_KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "PYTHONPATH", "SYSTEMROOT")


def _stop_process(process: subprocess.Popen, grace_s: float = 2.0) -> None:
    """Stop a server child: close its stdin (it leaves), then TERM and KILL its group."""
    if process.poll() is not None:
        return
    try:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(grace_s)
        return
    except (OSError, subprocess.TimeoutExpired):
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


class LlamaServer:
    """llama.cpp's server for one GGUF file, in a child process this object supervises.

    Args:
        model: The GGUF file.
        context_tokens: The context size.
        threads: CPU threads (0: llama.cpp's choice).
        log_path: Where the server's log goes (none: discarded).
        start_timeout_s: How long loading may take.
        max_restarts: How often a server that died is started again.
    """

    def __init__(self, model: Path, *, context_tokens: int = DEFAULTS.local.context_tokens,
                 threads: int = DEFAULTS.local.threads,
                 log_path: Path | None = None, start_timeout_s: float = 120.0,
                 max_restarts: int = 1, python: str = sys.executable) -> None:
        self.model = model
        self.context_tokens = context_tokens
        self.threads = threads
        self.log_path = log_path
        self.start_timeout_s = start_timeout_s
        self.max_restarts = max_restarts
        self.python = python
        self.base_url: str | None = None
        """``http://127.0.0.1:PORT/v1`` while running."""
        self.restarts = 0
        self.load_seconds: float | None = None
        """How long the last start took, from spawning to healthy."""
        self._process: subprocess.Popen | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def ensure(self) -> str:
        """The server's base URL, starting it (or starting it again, once) as needed.

        Raises:
            ModelError: It cannot start, or died again after its restart.
        """
        with self._lock:
            if self.running():
                assert self.base_url is not None
                return self.base_url
            if self._process is not None:
                code = self._process.returncode
                if self.restarts >= self.max_restarts:
                    raise ModelError(f"the local model server stopped (exit code {code}) after being "
                                     f"restarted {self.restarts} time(s){self._log_tail()}")
                self.restarts += 1
                log.warning("the local model server stopped (exit code %s); starting it again", code)
            self._start()
            assert self.base_url is not None
            return self.base_url

    def _start(self) -> None:
        self.base_url = None
        started = time.monotonic()
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log_file: Any = self.log_path.open("ab" if self.restarts else "wb")
        else:
            log_file = subprocess.DEVNULL
        env = {key: os.environ[key] for key in _KEPT_ENV if key in os.environ}
        command = [self.python, "-m", "workbench.agent.llama_server", "--model", str(self.model),
                   "--context", str(self.context_tokens), "--threads", str(self.threads)]
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=log_file, env=env, start_new_session=True,
                                             close_fds=True)
        except OSError as exc:
            raise ModelError(f"cannot start the local model server: {exc}") from None
        finally:
            if log_file is not subprocess.DEVNULL:
                log_file.close()
        weakref.finalize(self, _stop_process, self._process)
        address = self._read_address(started + self.start_timeout_s)
        self._wait_healthy(address, started + self.start_timeout_s)
        self.base_url = f"{address}/v1"
        self.load_seconds = time.monotonic() - started
        log.info("local model server on %s (pid %s) in %.2f s", address, self.pid, self.load_seconds)

    def _read_address(self, deadline: float) -> str:
        process = self._process
        assert process is not None and process.stdout is not None
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise ModelError(f"the local model server did not start within "
                                 f"{self.start_timeout_s:g} s{self._log_tail()}")
            ready, _, _ = select.select([process.stdout], [], [], min(left, 0.5))
            if ready:
                piece = os.read(process.stdout.fileno(), 4096)
                if not piece:
                    process.wait(5)
                    raise ModelError(f"the local model server exited while starting (exit code "
                                     f"{process.returncode}){self._log_tail()}")
                line += piece
        try:
            said = json.loads(line.decode("utf-8", errors="replace"))
        except ValueError:
            said = {"error": line.decode("utf-8", errors="replace").strip()}
        if "error" in said or not str(said.get("address", "")).startswith("http://127.0.0.1:"):
            self.stop()
            raise ModelError(f"the local model server could not start: {said.get('error', said)}")
        return said["address"]

    def _wait_healthy(self, address: str, deadline: float) -> None:
        import httpx

        with httpx.Client(trust_env=False, timeout=2.0) as client:
            while time.monotonic() < deadline:
                try:
                    if client.get(f"{address}/health").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                if not self.running():
                    break
                time.sleep(0.05)
        self.stop()
        raise ModelError(f"the local model server on {address} never became healthy{self._log_tail()}")

    def _log_tail(self, lines: int = 5) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        try:
            tail = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return f"; its log ({self.log_path}) ends: " + " / ".join(line.strip() for line in tail)

    def stop(self) -> None:
        """Stop the server and everything it started."""
        process, self._process = self._process, None
        self.base_url = None
        if process is not None:
            _stop_process(process)


def fit(messages: Sequence[ChatMessage], budget_chars: int) -> list[ChatMessage]:
    """The conversation cut to fit a small context: long tool results are shortened,
    then the oldest messages before the last user message are left out. System
    messages and everything from the last user message on are always kept."""
    cap = max(budget_chars // 4, 200)
    out = []
    for message in messages:
        if message.role == "tool" and len(message.content) > cap:
            cut = len(message.content) - cap
            message = replace(message, content=f"{message.content[:cap]} [... {cut} more characters]")
        out.append(message)
    last_user = max((i for i, m in enumerate(out) if m.role == "user"), default=0)
    size = sum(len(m.content) + sum(len(str(c.arguments)) for c in m.tool_calls) for m in out)
    keep = [True] * len(out)
    for index, message in enumerate(out[:last_user]):
        if size <= budget_chars:
            break
        if message.role != "system":
            keep[index] = False
            size -= len(message.content) + sum(len(str(c.arguments)) for c in message.tool_calls)
    for index, message in enumerate(out[:last_user]):  # start at a user message
        if keep[index] and message.role == "user":
            break
        if message.role != "system":
            keep[index] = False
    kept = [m for m, k in zip(out, keep) if k]
    calls = {c.id for m in kept for c in m.tool_calls}
    # A result whose call was left out would only confuse the model.
    return [m for m in kept if m.role != "tool" or m.tool_call_id in calls]


class LocalProvider:
    """A GGUF model served by ``LlamaServer``, spoken to as an OpenAI-compatible endpoint.

    Args:
        model: The GGUF file.
        builtin: Whether it is the built-in SmolLM2 (its ``notice`` says it is weak).
        tool_mode: ``grammar`` (default: tools through a JSON-schema grammar, which any
            model can follow) or ``native`` (the model's own chat template).
        max_tokens: The most tokens one reply may use.
        log_path: The server's log file.
    """

    def __init__(self, model: Path, *, builtin: bool = False,
                 context_tokens: int = DEFAULTS.local.context_tokens,
                 threads: int = DEFAULTS.local.threads,
                 tool_mode: Literal["native", "grammar"] = DEFAULTS.local.tool_mode,
                 max_tokens: int = DEFAULTS.local.max_tokens, timeout_s: float = 300.0, log_path: Path | None = None,
                 notice: str | None = None) -> None:
        self.name = "local" if builtin else f"local:{model}"
        self.notice = WEAK_MODEL_NOTICE if builtin and notice is None else notice
        self.server = LlamaServer(model, context_tokens=context_tokens, threads=threads,
                                  log_path=log_path)
        self.budget_chars = int(max(context_tokens - max_tokens, 256) * _CHARS_PER_TOKEN)
        """How much conversation is sent: the context less the reply, in characters."""
        self.client = OpenAIProvider("local", base_url="http://127.0.0.1", label=self.name,
                                     tool_mode=tool_mode, max_retries=0, timeout_s=timeout_s,
                                     extra_body={"max_tokens": max_tokens},
                                     grammar_body={"temperature": 0})

    def __repr__(self) -> str:
        return f"LocalProvider(model={str(self.server.model)!r}, running={self.server.running()})"

    @property
    def last_usage(self) -> Usage | None:
        return self.client.last_usage

    async def start(self) -> str:
        """Start the server now (it starts on first use otherwise); returns its base URL."""
        return await asyncio.to_thread(self.server.ensure)

    async def stream(self, messages: Sequence[ChatMessage], tools: list[ToolSpec]) -> AsyncIterator[ModelChunk]:
        """Stream the reply; a server found dead before it said anything is restarted once."""
        room = self.budget_chars - (len(tool_list(tools)) + 400 if tools else 0)
        messages = fit(messages, max(room, 500))
        self.client.base_url = await self.start()
        said = False
        try:
            async for chunk in self.client.stream(messages, tools):
                said = True
                yield chunk
        except ModelHTTPError as exc:
            if said or exc.status is not None or not await self._died():
                raise
            log.warning("the local model server went away: %s", exc)
            self.client.base_url = await self.start()
            async for chunk in self.client.stream(messages, tools):
                yield chunk

    async def _died(self) -> bool:
        """Whether the server is gone (waiting a moment: a refused connection can come
        a little before the exit is seen)."""
        for _ in range(20):
            if not self.server.running():
                return True
            await asyncio.sleep(0.05)
        return False

    def close(self) -> None:
        """Stop the server (the host calls this when it closes)."""
        self.server.stop()

    async def aclose(self) -> None:
        self.close()
