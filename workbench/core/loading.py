"""Loading the tool sources: once on first need, again when something changes.

``Loading`` is reached as ``host.loading``. It holds the lock every (re)load and every
change to what is loaded takes, whether the first load is done and when the last one
ended, and it builds the status report of what the last load found. A reload rebuilds
the tool registry from every source (``ToolSources.rebuild``) and publishes
``ExtensionStatusChanged`` with the new report. It must not import a front-end.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from workbench.events import ExtensionStatusChanged, Notice

if TYPE_CHECKING:
    from workbench.capabilities.memories import Memories
    from workbench.core.bus import EventBus
    from workbench.core.extension_source import ExtensionSource
    from workbench.core.provider_registry import ProviderRegistry
    from workbench.core.runner import SandboxRunner
    from workbench.core.status import SessionContext, StatusReport
    from workbench.core.workspace import Workspace
    from workbench.tools.registry import ToolRegistry
    from workbench.tools.source import ToolSources


class Loading:
    """The loading of the host's tool sources; see the module docstring.

    Args:
        sources: Every source of tools, in the order they load.
        sandbox: Its warm workers are dropped at a reload, its file checks reset.
        bus: Where a (re)load's report is published.
        registry: The tool registry the sources load into.
        library: The memories (the report names those extensions ship).
        providers: The providers the extensions register (the report counts them).
        workspace: The config in force (the report's schema budget).
    """

    def __init__(self, *, sources: ToolSources, sandbox: SandboxRunner, bus: EventBus,
                 registry: ToolRegistry, library: Memories, providers: ProviderRegistry,
                 workspace: Workspace) -> None:
        self.sources = sources
        self.sandbox = sandbox
        self.bus = bus
        self.registry = registry
        self.library = library
        self.providers = providers
        self.workspace = workspace
        self.lock = threading.RLock()
        """Held by every (re)load and by whatever changes what is loaded."""
        self.loaded = False
        """Whether the first load is done."""
        self.loaded_at = 0
        """When the tool sources were last (re)loaded, in unix milliseconds."""

    @property
    def extension_source(self) -> ExtensionSource:
        """The extensions' source: what the last load found (``extensions``, ``record``)."""
        from workbench.core.extension_source import ExtensionSource

        found = self.sources.get("extensions")
        assert isinstance(found, ExtensionSource)
        return found

    @property
    def extensions(self) -> list[dict[str, Any]]:
        """The extensions the last (re)load loaded: ``{name, version, path, source, scope,
        identity, tools}`` each."""
        return self.extension_source.extensions

    def ensure(self) -> None:
        """Load the tool sources once; safe to call from a background thread."""
        with self.lock:
            if not self.loaded:
                self.reload()

    def ready(self) -> bool:
        """Whether the sources are loaded and no (re)load is under way: then a call need
        not hand ``ensure`` to a thread to wait for it."""
        if not self.lock.acquire(blocking=False):
            return False
        try:
            return self.loaded
        finally:
            self.lock.release()

    def reload(self) -> None:
        """(Re)build the tool registry from every tool source (the extensions that may
        run here, the host's own tools, the MCP servers: ``ToolSources.rebuild``), and
        publish ``ExtensionStatusChanged`` with the new report."""
        with self.lock:
            self.sources.rebuild()
            self.loaded_at = time.time_ns() // 1_000_000
            reloaded = self.loaded
            if reloaded:
                self.sandbox.forget()
            if self.sandbox.files is not None:
                self.sandbox.files.reset()
            self.loaded = True
        self.bus.publish(ExtensionStatusChanged(report=self.report().to_json(),
                                                reloaded=reloaded))

    def notices(self) -> list[str]:
        """What the person should know about the setup: the config's notices (e.g. an
        untrusted project config) and what the last load found, from every source."""
        return list(self.workspace.config.notices) + list(self.sources.notices())

    def announce(self, also: str | None = None) -> None:
        """Publish the setup notices (``notices``) as warnings, and ``also`` (the model's
        own notice, once it is built: ``host.default_model.notice``) as information."""
        for message in self.notices():
            self.bus.publish(Notice(level="warning", message=message))
        if also:
            self.bus.publish(Notice(level="info", message=also))

    def report(self, session: SessionContext | None = None) -> StatusReport:
        """The status report of the last load (for the chat ``session`` describes, when
        given), without loading first (``host.tools.status_report`` does)."""
        from workbench.core.status import build_status_report

        return build_status_report(loaded=self.extensions, registry=self.registry,
                                   shipped=self.library.shipped.values(),
                                   record=self.extension_source.record,
                                   notices=self.sources.notices(), built_at=self.loaded_at,
                                   session=session,
                                   schema_budget=self.workspace.config.settings.tools.schema_token_budget,
                                   providers=self.providers,
                                   memory_conflicts=self.library.conflicts(),
                                   sources=self.sources.status_rows(),
                                   conflicts=self.sources.conflicts())
