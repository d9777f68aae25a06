"""Running a tool call in a sandboxed worker, and keeping the next worker warm.

The gateway hands a call here once it is authorized. Its policy comes from the
grants alone, each granted path checked against what it was when granted (a
changed one refuses the call, naming it); a worker started ahead for the same tool
and the same policy is used when there is one, otherwise one is started now. A
worker is never used for two calls.

Before any worker is used, the files of an installed extension are checked against
those the person approved (``ExtensionFiles``: sizes, times and inodes first, a hash
only for a file that looks changed); a change holds the extension, as a start of
the host would, and refuses the call naming the changed files.

Workers are started ahead by a pool (``sandbox/pool.py``): a few per tool and
policy, as many as recent use asks for, bounded in count and memory, dropped when
the tool is idle, when its grants are revoked, when the extensions are reloaded
(installed, updated, removed) and when the settings change. A worker is taken from
it only when it was started for exactly the policy the call gets now (the grants,
limits, extension folder and entry file it would find: ``pool.digest``); the pool
starts workers only after a call whose every grant is a standing one (session or
always), never with a grant given for one call alone. A worker started ahead is
sandboxed and waits with its runtime loaded; the tool's own module is imported only
when its call arrives.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from collections.abc import Callable
from typing import Any

from workbench.config.settings import DEFAULTS
from workbench.core.ctx_handler import CallHandler
from workbench.errors import ToolError
from workbench.ext.consent import FileSeen, changed_since_approved
from workbench.ext.project import is_project_identity
from workbench.permissions.policy import GrantChanged, PolicyError, build_policy
from workbench.sandbox.client import SandboxUnavailable, ZygoteClient
from workbench.sandbox.client import take as take_zygote
from workbench.sandbox.policy import Limits, Policy
from workbench.sandbox.pool import PoolLimits, WorkerPool, digest
from workbench.sandbox.worker_host import Worker
from workbench.tools.context import ToolContext
from workbench.tools.registry import Tool
from workbench.tools.source import ToolSources

log = logging.getLogger(__name__)


class ExtensionFiles:
    """Checks, as a worker is started, that an installed extension's files are still
    the approved ones.

    Args:
        store: Where the approved files are recorded (``extension_files``).
        installed: The folder an extension of that name is installed in.
        reason: Why an extension is held, as its status says at start (given its name).
        on_held: Called (in a thread) with an extension's name once it is found changed:
            the host reloads, which lists it as held with that reason.
    """

    def __init__(self, *, store, installed: Callable[[str], Path],
                 reason: Callable[[str], str], on_held: Callable[[str], None]) -> None:
        self.store = store
        self.installed = installed
        self.reason = reason
        self.on_held = on_held
        self._seen: dict[str, dict[str, FileSeen]] = {}
        self.held: dict[str, str] = {}
        """The extensions found changed since the last (re)load, with their reason."""

    def reset(self) -> None:
        """Forget what was held (a reload inspects every extension again)."""
        self.held.clear()

    async def check(self, tool: Tool) -> None:
        """Refuse ``tool`` when its installed extension's files are not the approved ones.

        Extensions with no approved files on record here (the samples, a folder loaded
        by hand) are not checked.

        Raises:
            ToolError: of kind ``unavailable``, naming the changed files.
        """
        name, key = tool.extension, tool.identity
        if key in self.held:
            raise ToolError("unavailable", f"{name} is held: {self.held[key]}")
        folder = Path(tool.folder)
        if is_project_identity(key):  # a project's own extension: its consent's files
            consent = self.store.get_project_consent(key)
            recorded = dict(consent["files"]) if consent else {}
        elif folder == self.installed(name):
            recorded = self.store.extension_files(name)
        else:
            return
        if not recorded:
            return
        changed = await asyncio.to_thread(changed_since_approved, folder, recorded,
                                          self._seen.setdefault(key, {}))
        if not changed:
            return
        reason = "" if is_project_identity(key) else await asyncio.to_thread(self.reason, name)
        if not reason:
            reason = f"files changed since you approved it: {', '.join(changed)}"
        self.held[key] = reason
        self.store.audit("host", "extension.held", key, {"changed": changed})
        await asyncio.to_thread(self.on_held, name)
        self.held.setdefault(key, reason)
        raise ToolError("unavailable", f"{name} is held: {reason}", changed=changed)


class SandboxRunner:
    """Runs calls in workers forked by one zygote.

    Args:
        services: What ctx requests reach on the host (database, model, speech…).
        cwd: The working directory tools start in.
        deno_cache: Where each extension's Deno dependency folder lives.
        python_cache: Where each extension's Python dependency folder lives
            (``python`` beside ``deno_cache`` when omitted).
        limits: Resource limits for every worker (time is set per call).
        keep_warm: Whether to start a tool's next workers ahead of its calls.
        pool: The bounds of the workers started ahead.
    """

    def __init__(self, *, services, cwd: Path, deno_cache: Path, limits: Limits,
                 keep_warm: bool = True, python_cache: Path | None = None,
                 pool: PoolLimits | None = None) -> None:
        self.services = services
        self.cwd = cwd
        self.deno_cache = deno_cache
        self.python_cache = python_cache or deno_cache.parent / "python"
        self.limits = limits
        self.keep_warm = keep_warm
        self._zygote: ZygoteClient | None = None
        self.pool = WorkerPool(lambda policy: Worker.start(self.zygote, policy), pool)
        self._report: dict | None = None
        self.files: ExtensionFiles | None = None
        """Checks an installed extension's files before each of its workers (the host sets it)."""

    def follow(self, *, limits: Limits, keep_warm: bool, pool: PoolLimits) -> None:
        """Take new settings; the workers started ahead under the old ones are dropped."""
        if (limits, keep_warm, pool) != (self.limits, self.keep_warm, self.pool.limits):
            self.pool.forget()
        self.limits, self.keep_warm, self.pool.limits = limits, keep_warm, pool

    def start(self) -> None:
        """Exec the zygote now, so the first call does not wait for it."""
        if self._zygote is None:
            self._zygote = take_zygote()  # one the entry point started ahead, or a new one

    @property
    def zygote(self) -> ZygoteClient:
        self.start()
        assert self._zygote is not None
        return self._zygote

    async def report(self) -> dict:
        """What the sandbox enforces here (probed once, inside the zygote)."""
        if self._report is None:
            try:
                self._report = await asyncio.to_thread(self.zygote.probe)
            except SandboxUnavailable as exc:
                self._report = {"ready": False, "checks": [
                    {"name": "zygote", "ok": False, "detail": str(exc), "required": True}]}
        return self._report

    async def ready(self) -> tuple[bool, str]:
        """Whether every required layer works, and if not, what is missing."""
        report = await self.report()
        missing = [f"{c['name']}: {c['detail']}" for c in report["checks"]
                   if c["required"] and not c["ok"]]
        return not missing, "; ".join(missing)

    def policy(self, tool: Tool, granted: list, timeout_ms: int) -> Policy:
        if tool.entry is None or tool.runtime is None:
            raise ToolError("unavailable", f"{tool.qualified_name} has no entry module")
        limits = Limits(**{**self.limits.__dict__,
                           "cpu_seconds": max(1, int(timeout_ms / 1000) + 5)})
        try:
            return build_policy(runtime=tool.runtime, entry=tool.entry, function=tool.function,
                                extension_dir=tool.folder, granted=granted, cwd=self.cwd,
                                limits=limits, deno_dir=self.deno_cache / tool.storage_name,
                                python_dir=self.python_cache / tool.storage_name, tool=tool.name)
        except GrantChanged as exc:
            raise ToolError("permission", str(exc), path=exc.path) from exc
        except PolicyError as exc:
            raise ToolError("unavailable", str(exc)) from exc

    async def _check_memory_bound(self, policy: Policy) -> None:
        """Refuse a worker that may start processes where its processes cannot share one
        memory bound (no memory cgroup here), unless the person accepted per-process bounds.

        Raises:
            ToolError: ``unavailable``, naming the missing layer and what to do.
        """
        if not policy.allow_processes or policy.limits.per_process_memory:
            return
        report = await self.report()
        check = next((c for c in report["checks"] if c["name"] == "memory-cgroup"), None)
        if check is None or not check["ok"]:
            detail = check["detail"] if check is not None else "not probed"
            raise ToolError("unavailable", f"this tool may start processes and this machine cannot "
                            f"bound them together (memory-cgroup: {detail}); see `workbench doctor`")

    async def __call__(self, tool: Tool, arguments: Any, ctx: ToolContext, *,
                       timeout_ms: int = DEFAULTS.tools.timeout_ms) -> Any:
        ready, missing = await self.ready()
        if not ready:
            raise ToolError("unavailable", "this machine cannot sandbox tools "
                            f"({missing}); see `workbench doctor`")
        if self.files is not None:
            await self.files.check(tool)
        owner = tool.grant_key
        epoch = self.pool.epoch(owner)  # before the grants are read into the policy
        policy = self.policy(tool, ctx.granted, timeout_ms)
        await self._check_memory_bound(policy)
        key = digest(policy)
        standing = all(req.standing for req in ctx.granted)
        took = self.keep_warm
        try:
            worker = (await self.pool.take(owner, key, standing=standing) if took else None) \
                or await Worker.start(self.zygote, policy)
        except SandboxUnavailable as exc:
            self.pool.after(owner, key, policy, standing=False, took=took)
            raise ToolError("unavailable", f"the sandbox is not available: {exc}") from exc
        except ToolError as exc:
            self.pool.after(owner, key, policy, standing=False, took=took)
            # The worker found a granted path swapped after the check above, as it made
            # its Landlock rule from it: refused as that check would have.
            _, found, why = exc.message.partition("PathChanged: ")
            if found:
                raise ToolError("permission", f"a granted path changed as the worker started: "
                                f"{why.strip()}; nothing was run") from exc
            raise
        except asyncio.CancelledError:
            self.pool.after(owner, key, policy, standing=False, took=took)
            raise
        handler = CallHandler(tool, ctx, self.services)
        try:
            result = await worker.call(arguments, ctx.chat.to_json(), handler)
        except ToolError:
            self._after(owner, key, policy, standing, took, epoch)
            raise
        except asyncio.CancelledError:
            # Not refilled after a cancellation, which may be the host shutting down.
            self.pool.after(owner, key, policy, standing=False, took=took)
            raise
        self._after(owner, key, policy, standing, took, epoch)
        return result

    def _after(self, owner: str, key: str, policy: Policy, standing: bool, took: bool,
               epoch: tuple[int, int]) -> None:
        # Started after the call, so the next workers' start never competes with it;
        # never with a grant given for this call alone.
        self.pool.after(owner, key, policy, standing=standing and self.keep_warm, took=took,
                        epoch=epoch)

    def forget(self, owner: str | None = None) -> None:
        """Drop the workers started ahead (of one tool, by its grant key, or all), e.g.
        when its grants change."""
        self.pool.forget(owner)

    async def aclose(self) -> None:
        """Stop the workers started ahead (awaiting those still starting), then the zygote."""
        await self.pool.aclose()
        self.close()

    def close(self) -> None:
        self.forget()
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None


class Dispatcher:
    """Hands each call the gateway validated, authorized and records to the
    ``ToolSource`` that offered its tool (``ToolSources.owner``), which runs it: the
    extensions' source in a sandboxed worker, the host's own tools and MCP servers'
    tools by their in-process handlers, any other source as it says.
    """

    def __init__(self, sources: ToolSources) -> None:
        self.sources = sources

    async def __call__(self, tool: Tool, arguments: Any, ctx: ToolContext, *,
                       timeout_ms: int = DEFAULTS.tools.timeout_ms) -> Any:
        source = self.sources.owner(tool)
        if source is None:
            raise ToolError("unavailable", f"{tool.qualified_name} has no source to run it")
        return await source.call(tool, arguments, ctx, timeout_ms=timeout_ms)
