"""Tool disclosure: what the model is offered when every tool's schema would not fit.

Each offered tool costs the model context: its name, description and parameter
schema. When the enabled tools' schemas together take more than a budget
(``tools.schema_token_budget``), disclosure turns on and the model is offered:

1. the ``alwaysAvailable`` tools;
2. the tools ranked most relevant to the current user message
   (:mod:`workbench.tools.ranking`), best first, as many as fit in what is left of
   the budget (a tool too large for the room left is skipped, not cut);
3. the bridge tools ``tool_search`` (find any enabled tool, with its schema) and
   ``tool_invoke`` (call it by name, through the gateway like any call).

Without disclosure every enabled tool is offered, the relevant ones first.

Schema tokens are an estimate, the same for a tool every time it is counted: the
length of the tool's name, description and parameters as compact JSON with sorted
keys, divided by four (about four characters a token for English and JSON in the
common tokenizers), rounded up. It is for budgeting and the status report, not an
exact count for any one model.

Some host-native tools are offered only when a turn needs them (the bridge tools,
and the memory tools ``skill_load``, ``skill_file`` and ``memory_search``); they are
never counted among the enabled tools (``is_on_demand``).

Imports the ranking and the registry's ``Tool``; nothing of the core.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from workbench.tools.ranking import PerObject, ToolIndex, ToolListCache, index_for, known, prepare
from workbench.tools.registry import HOST_RUNTIME, Tool

CHARS_PER_TOKEN = 4
"""The estimate's characters per token."""

BRIDGE_TOOLS = ("tool_search", "tool_invoke")
"""The host-native tools that reach the tools disclosure does not offer directly."""

MEMORY_TOOLS = ("skill_load", "skill_file", "memory_search")
"""The host-native tools that reach memories: offered when there are skills or memories."""

ON_DEMAND_TOOLS = frozenset(BRIDGE_TOOLS + MEMORY_TOOLS)


def is_on_demand(tool: Tool) -> bool:
    """Whether ``tool`` is a host-native tool offered only when a turn needs it."""
    return tool.runtime == HOST_RUNTIME and tool.name in ON_DEMAND_TOOLS


def schema_tokens(tool: Tool) -> int:
    """The estimated tokens of ``tool``'s schema as offered to a model (see the module
    docstring)."""
    text = json.dumps({"name": tool.name, "description": tool.description,
                       "parameters": tool.parameters},
                      separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=str)
    return math.ceil(len(text) / CHARS_PER_TOKEN)


_known_tokens: PerObject[int] = PerObject()


def _tokens_of(tool: Tool) -> int:
    """``schema_tokens(tool)``, counted once per tool object (a new list of the same
    tools, as a chat's switches give, counts none again)."""
    found = _known_tokens.get(tool)
    if found is None:
        found = schema_tokens(tool)
        _known_tokens.put(tool, found)
    return found


def prepare_soon(tools: Sequence[Tool]) -> threading.Thread | None:
    """Read the words of ``tools`` for ranking and count their schema tokens, on a thread
    of its own, off the path of whatever runs next: the loader calls it when tools are
    loaded (at start, on a reload), so that the first message after the tool list
    changed only assembles its catalog.

    Returns:
        The thread, or None when every tool was prepared already.
    """
    left = [tool for tool in tools if not (known(tool) and _known_tokens.get(tool) is not None)]
    if not left:
        return None

    def work() -> None:
        prepare(left)
        for tool in left:
            _tokens_of(tool)

    thread = threading.Thread(target=work, name="workbench-tool-catalog", daemon=True)
    thread.start()
    return thread


class ToolCatalog:
    """One list of enabled tools with its ranking index and schema tokens; build it with
    :func:`catalog_for`.

    Attributes:
        tools: The tools, in the order given.
        index: Their ranking index.
        total_tokens: The estimated tokens of all their schemas.
    """

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools: tuple[Tool, ...] = tuple(tools)
        self.index: ToolIndex = index_for(self.tools)
        self._tokens = {id(tool): _tokens_of(tool) for tool in self.tools}
        self.total_tokens = sum(self._tokens.values())

    def tokens(self, tool: Tool) -> int:
        """The estimated tokens of one of the catalog's tools."""
        found = self._tokens.get(id(tool))
        return schema_tokens(tool) if found is None else found

    def tokens_by(self, key: Callable[[Tool], str]) -> dict[str, int]:
        """The estimated schema tokens summed per ``key(tool)`` (e.g. per extension),
        largest first."""
        totals: dict[str, int] = {}
        for tool in self.tools:
            totals[key(tool)] = totals.get(key(tool), 0) + self._tokens[id(tool)]
        return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))




_catalogs = ToolListCache(lambda tools: ToolCatalog(tools))


def catalog_for(tools: Sequence[Tool]) -> ToolCatalog:
    """The catalog of ``tools``, built once and cached while the same tool objects are
    enabled (the catalog holds them, so the identity key stays theirs)."""
    return _catalogs.get(tools)


@dataclass(frozen=True)
class Disclosure:
    """What one model step is offered of the enabled tools.

    Attributes:
        active: Whether the schemas exceed the budget, so only some tools are offered
            directly and the bridge tools reach the rest.
        offered: The tools offered directly, in the order offered (the bridge tools
            are not among them).
        deferred: The enabled tools not offered directly (reached through the bridge).
        total_tokens: The estimated schema tokens of every enabled tool.
        offered_tokens: The estimated schema tokens of ``offered``.
        budget: The budget compared against.
    """

    active: bool
    offered: tuple[Tool, ...]
    deferred: tuple[Tool, ...]
    total_tokens: int
    offered_tokens: int
    budget: int


def disclose(tools: Sequence[Tool], message: str, budget: int, *,
             bridge: Iterable[Tool] = ()) -> Disclosure:
    """Choose what the model is offered of ``tools`` for ``message``.

    Args:
        tools: The enabled tools (without the on-demand host tools).
        message: The current user message, which the tools are ranked for.
        budget: The estimated schema tokens the offered tools may take.
        bridge: The bridge tools that will be offered beside them when disclosure is
            active; their schemas come out of the budget first.

    Returns:
        The choice; see :class:`Disclosure`.
    """
    catalog = catalog_for(tools)
    if catalog.total_tokens <= budget:
        return Disclosure(False, tuple(catalog.index.ordered(message)), (),
                          catalog.total_tokens, catalog.total_tokens, budget)
    offered = list(catalog.index.always)
    room = budget - sum(schema_tokens(tool) for tool in bridge)
    room -= sum(catalog.tokens(tool) for tool in offered)
    for tool, _score in catalog.index.rank(message):
        cost = catalog.tokens(tool)
        if cost <= room:
            offered.append(tool)
            room -= cost
    chosen = {id(tool) for tool in offered}
    return Disclosure(True, tuple(offered), tuple(t for t in catalog.tools if id(t) not in chosen),
                      catalog.total_tokens, sum(catalog.tokens(t) for t in offered), budget)


@dataclass(frozen=True)
class DisclosureSummary:
    """What the status report says of disclosure for one chat (or the host).

    Attributes:
        active: Whether the enabled tools' schemas exceed the budget.
        budget: ``tools.schema_token_budget``.
        total_tokens: The estimated schema tokens of every enabled tool.
        by_extension: ``(extension or MCP server, tokens)``, largest first.
        by_source: ``(source, tokens)`` (``builtin``, ``extension``, ``mcp``…).
        every_turn: With disclosure on, the tools offered in every turn: the
            ``alwaysAvailable`` ones and the bridge.
        ranked: With disclosure on, the tools ranked per message (those that fit are
            offered, the rest reached with the bridge).
        on_demand: The host tools offered only when a turn needs them.
    """

    active: bool
    budget: int
    total_tokens: int
    by_extension: tuple[tuple[str, int], ...] = ()
    by_source: tuple[tuple[str, int], ...] = ()
    every_turn: int = 0
    ranked: int = 0
    on_demand: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"budget": self.budget, "by_extension": dict(self.by_extension),
                "by_source": dict(self.by_source), "ranked_per_message": self.ranked,
                "on_demand_tools": list(self.on_demand)}

    def markdown_lines(self) -> list[str]:
        """The lines the ``## Tool Disclosure`` section adds after the token estimate."""
        lines = [f"- **By extension or server:** {_listing(self.by_extension)}"] if self.by_extension else []
        if self.active:
            lines.append(f"- **Offered every turn:** {self.every_turn} (always available and the "
                         f"bridge); **ranked per message:** {self.ranked}, the rest reached with "
                         f"tool_search and tool_invoke")
        return lines


def _listing(pairs: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{name} {tokens}" for name, tokens in pairs)


def summarize(available: Sequence[Tool], budget: int) -> DisclosureSummary:
    """Disclosure as it stands for ``available`` (a chat's available tools, the on-demand
    host tools included) under ``budget``."""
    enabled = [tool for tool in available if not is_on_demand(tool)]
    catalog = catalog_for(enabled)
    active = catalog.total_tokens > budget
    always = sum(1 for tool in enabled if tool.always_available)
    bridge = sum(1 for tool in available if is_on_demand(tool) and tool.name in BRIDGE_TOOLS)
    return DisclosureSummary(
        active=active, budget=budget, total_tokens=catalog.total_tokens,
        by_extension=tuple(catalog.tokens_by(lambda t: t.extension).items()),
        by_source=tuple(catalog.tokens_by(lambda t: t.source).items()),
        every_turn=always + bridge if active else 0, ranked=len(enabled) - always if active else 0,
        on_demand=tuple(tool.name for tool in available if is_on_demand(tool)))
