"""The ``ToolSource`` contract: what every kind of thing that offers tools implements.

The host's own tools, the extensions (installed, a project's, the samples) and MCP
servers are each one ``ToolSource``; the host holds them in one ``ToolSources``, in
the order they were registered, and treats them all alike:

- a (re)load calls every source's ``load``, then registers its ``tools()`` (each
  stamped with the source's ``name`` as its ``origin``) and its ``load_errors()``;
- the ``Dispatcher`` hands each authorized call to the source that offered the tool
  (``ToolSources.owner``), which runs it (``call``: by default the tool's in-process
  ``handler``; the extensions' source runs it in a sandboxed worker);
- ``follow_config`` passes a changed config on; ``start`` runs once as the host opens,
  ``stop`` as it shuts down (on its event loop), ``close`` as it closes;
- the status report and the Tools menu list every source's ``status_rows()``;
  ``conflicts()`` adds what a source knows clashes beyond the registry's names;
- ``workbench mcp serve`` offers the tools of the sources with ``served`` set.

Adding a source is one module that subclasses ``ToolSource`` and one line that
registers it (``host.sources.register(MySource(...))``; the built-in ones are
registered the same way by ``Host``, each built by a factory of ``workbench.core.sources``
from the services it needs). A minimal
example is in ``tests/unit/tools/test_source.py``.

This module imports only the tool registry and the precedence rule of ours, and is
typed with the standard library; it runs nothing.
"""

from __future__ import annotations

import dataclasses
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.errors import ToolError
from workbench.precedence import Conflict, source_rank
from workbench.tools.disclosure import prepare_soon
from workbench.tools.registry import HOST_RUNTIME, LoadError, Tool, ToolRegistry

if TYPE_CHECKING:
    from workbench.config.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceRow:
    """One thing of a source a person sees and a chat switches as one: an extension,
    an MCP server, the host's own tools.

    Attributes:
        name: How a chat switches it: the ``extension`` its tools carry (``mcp:time``
            for an MCP server).
        title: How it is shown (``time`` for that server).
        kind: What it is, as the Tools menu says: ``built-in``, ``workbench`` (the
            host's own tools), ``extension``, ``MCP server``, or a new source's own word.
        tools: How many tools it brings (those offered only when a turn needs them
            left out).
        state: ``ok``, or the source's word for why it is not offering its tools
            (an MCP server's ``disabled``, ``untrusted``, ``stopped``...).
        note: Why a chat cannot switch it here; empty when it can.
    """

    name: str
    title: str
    kind: str
    tools: int = 0
    state: str = "ok"
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class ToolSource(ABC):
    """A kind of thing that offers tools; see the module docstring.

    Subclasses set ``name`` and ``precedence`` and implement ``tools``; every other
    member has a default that does nothing.

    Attributes:
        name: Unique among the host's sources; each of its tools carries it as its
            ``origin``.
        precedence: The earliest place in ``SOURCE_ORDER`` its tools may take: one that
            claims an earlier ``source`` is refused as it registers (an MCP server
            cannot offer a ``builtin`` tool).
        served: Whether ``workbench mcp serve`` offers its tools to another agent (the
            host's own tools serve a chat; an MCP server's would loop).
    """

    name: str = ""
    precedence: str = "plugin"
    served: bool = False

    @abstractmethod
    def tools(self) -> list[Tool]:
        """The tools it offers now, shadowed or not; the registry decides who wins a name.

        Called after ``load`` at every (re)load, and by ``ToolSources.refresh`` when the
        source says its tools changed; it should be cheap (what ``load`` found)."""

    def load(self) -> None:
        """Find again what it offers (a reload): read files, list servers. Every source
        is loaded before any source's ``tools()`` is asked for, in registration order."""

    def load_errors(self) -> list[LoadError]:
        """What it could not load at the last ``load``, with why (in a person's words)."""
        return []

    def notices(self) -> list[str]:
        """What a person should know about it since the last ``load``."""
        return []

    def start(self) -> None:
        """Runs once as the host opens, before the first load."""

    async def stop(self) -> None:
        """Stop what it runs, on the loop it runs on (the host's ``ashutdown``)."""

    def close(self) -> None:
        """Release what is left once the loop is gone (the host's ``close``)."""

    def follow_config(self, settings: Settings) -> None:
        """The host's config changed (another folder's took over): apply what its typed
        settings (``workbench.config.settings.Settings``, e.g.
        ``settings.tools.timeout_ms``) say to what starts from now on."""

    def status_rows(self) -> list[SourceRow]:
        """One row per thing of it a person sees and a chat switches (see ``SourceRow``)."""
        return []

    def conflicts(self) -> list[Conflict]:
        """Clashes it knows of beyond tool names given twice (the registry reports those)."""
        return []

    async def call(self, tool: Tool, arguments: Any, ctx: Any, *, timeout_ms: int) -> Any:
        """Run one call of its ``tool`` the gateway validated, authorized and records.

        By default the tool's in-process ``handler`` is awaited (the host's own code, or
        code that reaches a process of its own, such as an MCP server).

        Raises:
            ToolError: The call failed; of kind ``unavailable`` when it cannot run.
        """
        return await run_handler(tool, arguments, ctx)


async def run_handler(tool: Tool, arguments: Any, ctx: Any) -> Any:
    """Await ``tool``'s in-process handler.

    Raises:
        ToolError: of kind ``unavailable`` when it has none.
    """
    if tool.handler is None:
        raise ToolError("unavailable", f"{tool.qualified_name} has no handler")
    return await tool.handler(arguments, ctx)


class ToolSources:
    """The host's tool sources, in registration order, and the registry they fill.

    Args:
        registry: The registry every source's tools go into.
        fallback: The source that runs a tool without an ``origin`` (one put in the
            registry by hand) that has no in-process handler.
    """

    def __init__(self, registry: ToolRegistry, fallback: str | None = None) -> None:
        self.registry = registry
        self.fallback = fallback
        self._sources: dict[str, ToolSource] = {}
        self.prepare_ranking = True
        """Whether a load reads the tools for ranking ahead, on a thread of its own
        (``disclosure.prepare_soon``): off for a host opened for one call alone, which
        offers no tool list to a model (a catalog is still built when one is asked for)."""

    def register(self, source: ToolSource) -> ToolSource:
        """Add ``source`` after the others; its tools join the registry at the next load.

        Raises:
            ValueError: It has no name or an unknown precedence, or a source of that
                name is registered.
        """
        if not source.name:
            raise ValueError(f"{type(source).__name__} has no name")
        source_rank(source.precedence)
        if source.name in self._sources:
            raise ValueError(f"a tool source named {source.name!r} is registered")
        self._sources[source.name] = source
        return source

    def unregister(self, name: str) -> ToolSource | None:
        """Remove the source ``name`` and withdraw its tools."""
        self.registry.remove_origin(name)
        return self._sources.pop(name, None)

    def __iter__(self) -> Iterator[ToolSource]:
        return iter(list(self._sources.values()))

    def get(self, name: str) -> ToolSource | None:
        return self._sources.get(name)

    def owner(self, tool: Tool) -> ToolSource | None:
        """The source that runs ``tool``'s calls: the one that offered it; for a tool
        put in the registry by hand, a ``ToolSource``'s default (its handler) when it
        has one or is the host's own, else the ``fallback``."""
        found = self._sources.get(tool.origin)
        if found is not None:
            return found
        if tool.handler is not None or tool.runtime == HOST_RUNTIME:
            return _IN_PROCESS
        return self._sources.get(self.fallback) if self.fallback else None

    # --- loading -------------------------------------------------------------------

    def rebuild(self) -> None:
        """Empty the registry, load every source, then register what each offers."""
        self.registry.clear()
        for source in self:
            source.load()
        for source in self:
            self._add(source)
        if self.prepare_ranking:
            prepare_soon(self.registry.all_tools())

    def reload(self, name: str) -> None:
        """Load one source again and put what it offers now in place of what it did
        (its load errors are those of the last full ``rebuild``)."""
        self._sources[name].load()
        self.refresh(name)

    def refresh(self, name: str) -> None:
        """Put the tools source ``name`` offers now in place of those it offered (its
        tools changed: an MCP server's list did), without loading it again."""
        self.registry.remove_origin(name)
        self._add(self._sources[name], errors=False)
        if self.prepare_ranking:
            prepare_soon(self.registry.all_tools())

    def _add(self, source: ToolSource, *, errors: bool = True) -> None:
        earliest = source_rank(source.precedence)
        for tool in source.tools():
            if source_rank(tool.source) < earliest:
                log.warning("%s offers %s as %s, before its place (%s): left out",
                            source.name, tool.qualified_name, tool.source, source.precedence)
                continue
            self.registry.add(dataclasses.replace(tool, origin=source.name))
        if errors:
            self.registry.load_errors.extend(source.load_errors())

    # --- what the host does to every source -------------------------------------------

    def start(self) -> None:
        for source in self:
            source.start()

    async def stop(self) -> None:
        """Stop every source, the last registered first; one that fails is logged and
        the others still stop."""
        for source in reversed(list(self)):
            try:
                await source.stop()
            except Exception:
                log.exception("the tool source %s did not stop cleanly", source.name)

    def close(self) -> None:
        for source in reversed(list(self)):
            try:
                source.close()
            except Exception:
                log.exception("the tool source %s did not close cleanly", source.name)

    def follow_config(self, settings: Settings) -> None:
        for source in self:
            source.follow_config(settings)

    def notices(self) -> list[str]:
        return [notice for source in self for notice in source.notices()]

    def status_rows(self) -> list[tuple[str, SourceRow]]:
        """Every source's rows, each with the source's name, in registration order."""
        return [(source.name, row) for source in self for row in source.status_rows()]

    def conflicts(self) -> list[Conflict]:
        """The registry's conflicts, then those the sources know of."""
        return self.registry.conflicts() + [c for source in self for c in source.conflicts()]

    def served(self) -> set[str]:
        """The names of the sources ``workbench mcp serve`` offers."""
        return {source.name for source in self if source.served}


class _InProcess(ToolSource):
    """Runs a tool put in the registry by hand that has an in-process handler."""

    name = "in-process"

    def tools(self) -> list[Tool]:
        return []


_IN_PROCESS = _InProcess()
