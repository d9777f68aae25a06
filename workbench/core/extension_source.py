"""The extensions as a ``ToolSource``: the built-in extension, the installed ones, a
trusted project's and the samples.

A (re)load runs ``workbench.core.extensions.load_extensions`` (imported then, so that
opening a host does not import the extension manager); their tools run in a sandboxed
worker, or, only where this machine cannot sandbox and the person listed the tool in
``sandbox.unsandboxed_tools``, in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.core.ctx_handler import CallHandler
from workbench.core.load_record import LoadRecord
from workbench.core.runner import SandboxRunner
from workbench.errors import ToolError
from workbench.precedence import Conflict
from workbench.tools.inprocess import run_inprocess
from workbench.tools.registry import LoadError, Tool, ToolRegistry
from workbench.tools.source import SourceRow, ToolSource

if TYPE_CHECKING:
    from workbench.core.workspace import Workspace
    from workbench.capabilities.memories import Memories
    from workbench.core.extensions import Loaded
    from workbench.core.provider_registry import ProviderRegistry
    from workbench.ext.manager import ExtensionManager
    from workbench.hooks.registry import HookRegistry


class ExtensionSource(ToolSource):
    """The extensions' tools: the built-in extension's, the installed ones', a trusted
    project's and the samples'; see the module docstring.

    Args:
        manager: The extension manager (built on first need by the host).
        memories: Where the knowledge and skills they ship go.
        hooks: Where the hooks they declare go.
        providers: Where the providers they declare go.
        workspace: The folder whose project extensions load, the settings that apply
            (``extensions.enabled``, ``extensions.samples``) and the tools the person
            allowed to run without a sandbox.
        sandbox: What runs their calls.
        platforms: The platforms this system matches (``session_platforms``).
    """

    name = "extensions"
    precedence = "builtin"
    served = True

    def __init__(self, *, manager: Callable[[], ExtensionManager], memories: Memories,
                 hooks: HookRegistry, providers: ProviderRegistry, workspace: Workspace,
                 sandbox: SandboxRunner, platforms: set[str]) -> None:
        self._manager = manager
        self._memories = memories
        self._hooks = hooks
        self._providers = providers
        self._workspace = workspace
        self._sandbox = sandbox
        self._found = ToolRegistry(platforms)
        self.loaded: Loaded | None = None
        """What the last load found: the extensions loaded, and the notices (None before it)."""
        self.record: LoadRecord | None = None
        """What the manager reported during the last load (states, manifests)."""

    def load(self) -> None:
        """Load the extensions again: their tools, and the memories, hooks and providers
        they bring (those of the last load are forgotten first)."""
        from workbench.core.extensions import load_extensions

        settings = self._workspace.config.settings
        self._memories.clear_shipped()
        self._hooks.clear()
        self._providers.clear()
        record = LoadRecord(self._manager())
        found = ToolRegistry(self._found.platforms)
        self.loaded = load_extensions(registry=found, manager=record, memories=self._memories,
                                      hooks=self._hooks, providers=self._providers,
                                      cwd=self._workspace.folder, enabled=settings.extensions.enabled,
                                      samples=settings.extensions.samples)
        self._found, self.record = found, record

    def tools(self) -> list[Tool]:
        return self._found.all_tools()

    def load_errors(self) -> list[LoadError]:
        return list(self._found.load_errors)

    @property
    def extensions(self) -> list[dict]:
        """The extensions the last load loaded (``Loaded.extensions``)."""
        return self.loaded.extensions if self.loaded is not None else []

    def notices(self) -> list[str]:
        return list(self.loaded.notices) if self.loaded is not None else []

    def status_rows(self) -> list[SourceRow]:
        """One row per extension loaded (``built-in`` or ``extension``), with its tools."""
        counts: dict[str, int] = {}
        for tool in self._found.all_tools():
            counts[tool.extension] = counts.get(tool.extension, 0) + 1
        rows: dict[str, SourceRow] = {}
        for entry in self.extensions:
            name = entry["name"]
            kind = "built-in" if entry["source"] == "builtin" else "extension"
            rows.setdefault(name, SourceRow(name, name, kind, counts.get(name, 0)))
        return list(rows.values())

    def conflicts(self) -> list[Conflict]:
        """The hook names (``EXTENSION.EVENT``) the extensions give more than once
        (``HookRegistry.conflicts``); their tool names' are the registry's."""
        return self._hooks.conflicts()

    async def call(self, tool: Tool, arguments: Any, ctx: Any, *, timeout_ms: int) -> Any:
        """Run the call in a sandboxed worker; where this machine cannot sandbox, in this
        process only when the person listed the tool in ``sandbox.unsandboxed_tools``.

        A model or a tool's arguments cannot reach that list: it is the person's setting.
        """
        sandbox = self._sandbox
        ready, missing = await sandbox.ready()
        if ready:
            return await sandbox(tool, arguments, ctx, timeout_ms=timeout_ms)
        if tool.qualified_name in self._workspace.unsandboxed_tools():
            if sandbox.files is not None:
                await sandbox.files.check(tool)
            ctx.log("warn", f"running {tool.qualified_name} WITHOUT a sandbox, as you allowed "
                    f"(this machine lacks: {missing})")
            return await run_inprocess(tool, arguments, ctx,
                                       handler=CallHandler(tool, ctx, sandbox.services))
        raise ToolError("unavailable", f"this machine cannot sandbox tools ({missing}); "
                        "see `workbench doctor`")
