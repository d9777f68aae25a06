"""One precedence rule for every name more than one source can give: tools, providers,
hooks.

A ``PrecedenceRegistry`` keeps, per key (a tool's name, a provider's type and name),
every candidate in precedence order: by the rank its registry gives it (the source's
place in ``SOURCE_ORDER``, then the extension's name), ties kept in the order they
were added. The first candidate wins the key; the others are shadowed, never dropped:
``conflicts()`` names each key held more than once as one ``Conflict`` shape, whatever
kind of thing it is.

It also keeps the one namespace no source may give a tool in but the first-party
add-ons: ``addon__<id>__<tool>`` (``RESERVED_PREFIX``, ``addon_tool_name``,
``is_reserved``). A first-party add-on (``ext/addons.py``) declares its tools by their
own names (``events-list``) and is offered them as ``addon__calendar__events-list``;
no manifest may declare a tool there (``manifest/checks.py``) and the tool registry
leaves out any tool there that is not such an add-on's own (``tools/registry.py``).

This module imports nothing of ours (a leaf): the registries of tools
(``tools/registry.py``), providers (``core/provider_registry.py``) and hooks
(``hooks/registry.py``) build on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

SOURCE_ORDER = ("builtin", "extension", "mcp", "plugin")
"""The places a source's contributions take, first to last: the host's own and the
built-in extension, the extensions (installed, then a project's), MCP servers, plugins."""


RESERVED_PREFIX = "addon__"
"""The start of every first-party add-on tool's name, and of no other tool's."""

ADDON_ID_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
"""What an add-on id looks like: it is part of its tools' names."""

MAX_TOOL_NAME = 64
"""The longest tool name a model's function list takes."""


def addon_tool_name(addon_id: str, tool: str) -> str:
    """The name a first-party add-on's tool is offered under: ``addon__<id>__<tool>``."""
    return f"{RESERVED_PREFIX}{addon_id}__{tool}"


def is_reserved(name: str) -> bool:
    """Whether a tool name is in the add-ons' namespace (in any case, so that no name
    even looks like one to a model)."""
    return name.lower().startswith(RESERVED_PREFIX)


def source_rank(source: str) -> int:
    """The place of ``source`` in ``SOURCE_ORDER``.

    Raises:
        ValueError: ``source`` is not one of them.
    """
    try:
        return SOURCE_ORDER.index(source)
    except ValueError:
        raise ValueError(f"unknown source {source!r} (one of {', '.join(SOURCE_ORDER)})") from None


@dataclass(frozen=True)
class Party:
    """One side of a conflict: where a candidate comes from.

    Attributes:
        source: Its place in the precedence (``builtin``, ``extension``, ``mcp``...).
        extension: What gives it: an extension's name, ``mcp:SERVER``, ``workbench``.
        qualified: How it is still reached when shadowed (``EXTENSION.TOOL``); empty
            when nothing names it that way.
    """

    source: str
    extension: str
    qualified: str = ""

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "extension": self.extension}


@dataclass(frozen=True)
class Conflict:
    """A key given more than once: who holds it and who is shadowed.

    Attributes:
        kind: What the key names: ``tool``, ``hook``, or a provider's type (``model``,
            ``memory``, ``search``).
        name: The name given more than once.
        winner: Who holds it.
        shadowed: The others, in precedence order.
    """

    kind: str
    name: str
    winner: Party
    shadowed: tuple[Party, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "name", "winner", "shadowed"}``, each party ``{"source", "extension"}``."""
        return {"kind": self.kind, "name": self.name, "winner": self.winner.to_json(),
                "shadowed": [party.to_json() for party in self.shadowed]}


class PrecedenceRegistry(Generic[K, T]):
    """Candidates per key, in precedence order; see the module docstring.

    Args:
        rank: The sort key of a candidate (lowest first).
        party: A candidate as a side of a ``Conflict``.
        describe: A key as a conflict names it: ``(kind, name)``.
    """

    def __init__(self, *, rank: Callable[[T], Any], party: Callable[[T], Party],
                 describe: Callable[[K], tuple[str, str]]) -> None:
        self._rank = rank
        self._party = party
        self._describe = describe
        self._by_key: dict[K, list[T]] = {}

    def add(self, key: K, item: T) -> None:
        """Offer ``item`` under ``key``; its rank decides whether it wins."""
        candidates = self._by_key.setdefault(key, [])
        candidates.append(item)
        candidates.sort(key=self._rank)

    def clear(self) -> None:
        """Forget every candidate."""
        self._by_key.clear()

    def remove_where(self, withdrawn: Callable[[T], bool]) -> None:
        """Withdraw every candidate ``withdrawn`` says; a key left with none goes."""
        for key in list(self._by_key):
            left = [item for item in self._by_key[key] if not withdrawn(item)]
            if left:
                self._by_key[key] = left
            else:
                del self._by_key[key]

    def candidates(self, key: K) -> list[T]:
        """Every candidate of ``key``, the winner first (a copy)."""
        return list(self._by_key.get(key, ()))

    def first(self, key: K, offered: Callable[[T], bool] | None = None) -> T | None:
        """The winner of ``key`` among the candidates ``offered`` lets through."""
        return next((item for item in self._by_key.get(key, ())
                     if offered is None or offered(item)), None)

    def keys(self, order: Callable[[K], Any] | None = None) -> list[K]:
        """Every key held, sorted (by ``order`` when given)."""
        return sorted(self._by_key, key=order)  # type: ignore[arg-type,type-var]

    def __iter__(self) -> Iterator[T]:
        """Every candidate, key by key in sorted order, each key's in precedence order."""
        for key in self.keys():
            yield from self._by_key[key]

    def conflicts(self, *, order: Callable[[K], Any] | None = None,
                  held: Callable[[K], Party | None] | None = None) -> list[Conflict]:
        """Every key given more than once, by key.

        Args:
            order: How the keys are sorted (their natural order when None).
            held: Who holds a key outside this registry (a built-in provider's name),
                or None: then every candidate of that key is shadowed, even a lone one.
        """
        found = []
        for key in self.keys(order):
            candidates = self._by_key[key]
            holder = held(key) if held is not None else None
            if holder is not None:
                winner, shadowed = holder, candidates
            elif len(candidates) > 1:
                winner, shadowed = self._party(candidates[0]), candidates[1:]
            else:
                continue
            kind, name = self._describe(key)
            found.append(Conflict(kind, name, winner, tuple(self._party(c) for c in shadowed)))
        return found

