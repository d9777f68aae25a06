"""The tool registry: every tool on offer, which one a name resolves to, and what it shadows.

Precedence follows the source: built-in, then extension, then MCP, then plugin; among
extensions of one source the first by name wins. A shadowed tool is never dropped in
silence: ``conflicts()`` names it with its winner, and ``EXTENSION.TOOL`` still
reaches it. ``available`` and ``resolve`` can leave some extensions out (those a chat
switched off), and single tools by ``EXTENSION.TOOL``: the next tool by precedence then
takes the name.

Most tools run in a sandboxed worker. A tool whose ``runtime`` is ``"host"`` is the
host's own code (such as ``extensions_status``): it has a ``handler`` that is awaited
in the host's process, and it is registered with the source ``builtin``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.config.home import storage_name
from workbench.errors import ToolError
from workbench.precedence import RESERVED_PREFIX, is_reserved
from workbench.precedence import addon_tool_name as tool_name
from workbench.precedence import SOURCE_ORDER, Conflict, Party, PrecedenceRegistry, source_rank

__all__ = ["SOURCE_ORDER", "Conflict", "HOST_RUNTIME", "LoadError", "Tool", "ToolRegistry"]

HOST_RUNTIME = "host"
"""The ``runtime`` of a tool that is the host's own code, run in-process by its handler."""

HostHandler = Callable[[Any, Any], Awaitable[Any]]
"""``(arguments, ctx) -> result``: how a host-native tool runs."""


@dataclass(frozen=True)
class Tool:
    """One tool an extension provides, as the host sees it."""

    name: str
    description: str
    parameters: dict[str, Any]
    extension: str
    source: str
    function: str
    folder: Path
    entry: Path | None
    runtime: str | None
    permissions: dict[str, Any] = field(default_factory=dict)
    timeout_ms: int | None = None
    platforms: tuple[str, ...] = ()
    always_available: bool = False
    triggers: tuple[str, ...] = ()
    database: bool = False
    """Whether the extension asked for a private database (``"database": true``)."""
    parallel_safe: bool = False
    """Whether it may run beside other parallel-safe calls of the same model message."""
    handler: HostHandler | None = field(default=None, compare=False, repr=False)
    """For a host-native tool (``runtime == "host"``): the coroutine function that runs it."""
    owner: str = ""
    """The extension's identity when it is not its name: ``project:FOLDER`` for a
    project's own extension. Empty for installed ones (their name is the identity)."""
    action: bool = False
    """Whether it changes what the person keeps (``"action": true``): an unattended
    call needs the ``act`` grant."""
    audience: str = "everyone"
    """``person`` for a tool no model is offered or may call (``"audience": "person"``);
    ``everyone`` otherwise."""
    declared: str = ""
    """The tool's name in its manifest when it is offered under another: a first-party
    add-on's ``events-list`` offered as ``addon__calendar__events-list``."""
    first_party: bool = False
    """Whether it is a tool of a first-party add-on installed from its shipped folder:
    only such a tool may take a name in the ``addon__`` namespace."""
    replaces: tuple[str, ...] = ()
    """The built-in tools it is offered in place of, in a chat that has it on
    (``"replaces"``; honoured for a first-party add-on's tool only)."""
    origin: str = field(default="", compare=False)
    """The name of the ``ToolSource`` that offers it (``host``, ``extensions``, ``mcp``...),
    set as its source's tools are registered; it runs the tool's calls. Empty for a
    tool put in a registry by hand."""

    @property
    def identity(self) -> str:
        """What the extension's private resources (database, grants, memories) are kept
        under: the name of an installed extension, the folder of a project's."""
        return self.owner or self.extension

    @property
    def storage_name(self) -> str:
        """A file name for what is kept for the extension on disk (its private database,
        its dependency caches): an installed one's name; for a project's, its name after
        a digest of its identity, so that it never opens an installed one's, nor another
        project's of the same name."""
        return storage_name(self.identity, self.extension)

    @property
    def person_only(self) -> bool:
        """Whether only the person may call it: never offered to, nor run for, a model."""
        return self.audience == "person"

    @property
    def own_name(self) -> str:
        """The name its manifest gives it (what its own results name it by)."""
        return self.declared or self.name

    @property
    def grant_key(self) -> str:
        """``IDENTITY.TOOL``: what this tool's grants are kept under."""
        return f"{self.identity}.{self.name}"

    @property
    def qualified_name(self) -> str:
        """``EXTENSION.TOOL``: the name that reaches this tool even when shadowed."""
        return f"{self.extension}.{self.name}"

    def rank(self) -> tuple[int, str]:
        return (source_rank(self.source), self.extension)

    def party(self) -> Party:
        return Party(self.source, self.extension, self.qualified_name)


@dataclass(frozen=True)
class LoadError:
    """An extension that could not be loaded, and why, in a person's words."""

    extension: str
    path: Path
    message: str
    tools: tuple[str, ...] = ()
    """The tools it would have brought (when its manifest could be read), so that a
    call of one says why it is missing."""


def session_platforms(env: dict[str, str] | None = None) -> set[str]:
    """The ``platforms`` values the running system matches."""
    env = dict(os.environ) if env is None else env
    if sys.platform == "darwin":
        return {"darwin"}
    if sys.platform.startswith("win"):
        return {"windows"}
    names = {"linux"}
    if env.get("WAYLAND_DISPLAY"):
        names.add("linux_wayland")
    if env.get("DISPLAY"):
        names.add("linux_x11")
    return names


class ToolRegistry:
    """Holds every tool from every source and resolves names by precedence."""

    def __init__(self, platforms: set[str] | None = None) -> None:
        self._by_name: PrecedenceRegistry[str, Tool] = PrecedenceRegistry(
            rank=Tool.rank, party=Tool.party, describe=lambda name: ("tool", name))
        self.load_errors: list[LoadError] = []
        self.platforms = session_platforms() if platforms is None else platforms

    def clear(self) -> None:
        """Forget every tool and load error (before a reload)."""
        self._by_name.clear()
        self.load_errors.clear()

    def add(self, tool: Tool) -> None:
        """Offer ``tool``; precedence decides whether it wins its name."""
        if tool.source not in SOURCE_ORDER:
            raise ValueError(f"unknown tool source {tool.source!r}")
        if is_reserved(tool.name) and not (
                tool.first_party and tool.name == tool_name(tool.extension, tool.own_name)):
            # Whatever offers it (an extension, an MCP server, a plugin): left out, said so.
            self.load_errors.append(LoadError(
                tool.extension, tool.folder,
                f"the tool {tool.name!r} is left out: names starting {RESERVED_PREFIX} are kept "
                "for the add-ons shipped with workbench"))
            return
        self._by_name.add(tool.name, tool)

    def remove_extension(self, extension: str) -> None:
        """Withdraw every tool of ``extension``."""
        self._by_name.remove_where(lambda tool: tool.extension == extension)

    def remove_origin(self, origin: str) -> None:
        """Withdraw every tool the ``ToolSource`` named ``origin`` offered."""
        self._by_name.remove_where(lambda tool: tool.origin == origin)

    def runs_here(self, tool: Tool) -> bool:
        """Whether ``tool`` runs on this system (its ``platforms``, when it names some)."""
        return not tool.platforms or bool(self.platforms & set(tool.platforms))

    def _offered(self, tool: Tool, exclude: Collection[str], skip: Collection[str]) -> bool:
        return (self.runs_here(tool) and tool.extension not in exclude
                and (not skip or tool.qualified_name not in skip))

    def resolve(self, name: str, exclude: Collection[str] = (), skip: Collection[str] = ()) -> Tool:
        """The tool ``name`` means: a plain name by precedence, or ``EXTENSION.TOOL``.

        Args:
            name: A tool name, or ``EXTENSION.TOOL``.
            exclude: Extensions to leave out, as if they were not loaded.
            skip: Single tools to leave out, by ``EXTENSION.TOOL``.

        Raises:
            ToolError: of kind ``not_found`` when nothing by that name runs here.
        """
        found = self._by_name.first(name, lambda t: self._offered(t, exclude, skip))
        if found is not None:
            return found
        extension, dot, tool_name = name.rpartition(".")
        if dot:
            found = self._by_name.first(tool_name, lambda t: t.extension == extension
                                        and self._offered(t, exclude, skip))
            if found is not None:
                return found
        for error in self.load_errors:
            if tool_name in error.tools and (not dot or extension == error.extension):
                raise ToolError("not_found", f"no tool named {name!r}: its extension "
                                f"{error.extension} is not loaded: {error.message}")
        raise ToolError("not_found", f"no tool named {name!r}")

    def available(self, exclude: Collection[str] = (), skip: Collection[str] = ()) -> list[Tool]:
        """The winning tool of every name that runs on this system, by name.

        Args:
            exclude: Extensions to leave out, as if they were not loaded: a name one
                of them won goes to the next tool by precedence.
            skip: Single tools to leave out, by ``EXTENSION.TOOL``; the same holds.
        """
        winners = (self._by_name.first(name, lambda t: self._offered(t, exclude, skip))
                   for name in self._by_name.keys())
        return [tool for tool in winners if tool is not None]

    def all_tools(self) -> list[Tool]:
        """Every tool, shadowed ones included."""
        return list(self._by_name)

    def conflicts(self) -> list[Conflict]:
        """Every name provided more than once, with its winner and the shadowed ones
        (each party's ``qualified`` is the ``EXTENSION.TOOL`` that still reaches it)."""
        return self._by_name.conflicts()
