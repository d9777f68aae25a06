"""Which hooks are registered, per event, in registration order.

Hooks take the one precedence rule tools and providers take (``workbench.precedence``):
a hook is known by its name, ``EXTENSION.EVENT``; should two sources give the same name,
the first by precedence (the built-in before the extensions, then by extension name)
runs and the others are shadowed, never dropped, and ``conflicts()`` names them as one
``Conflict`` of kind ``hook``, the shape the tools' and providers' conflicts have.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.precedence import SOURCE_ORDER, Conflict, Party, PrecedenceRegistry, source_rank

EVENTS = ("on_tool_call", "on_tool_result", "on_session_start", "on_session_shutdown",
          "on_agent_start", "on_agent_end", "on_turn_start", "on_turn_end",
          "on_message_start", "on_message_end", "on_tool_execution_start",
          "on_tool_execution_end")
OBSERVE_ONLY = frozenset(EVENTS) - {"on_tool_call", "on_tool_result", "on_session_start"}


@dataclass(frozen=True)
class Hook:
    """One extension function subscribed to one event."""

    extension: str
    event: str
    function: str
    folder: Path
    entry: Path
    runtime: str
    owner: str = ""
    """The extension's identity (see ``Tool.identity``): its name when installed, its
    folder's when it comes from a project. Empty means the name."""
    source: str = "extension"
    """Its place in the precedence (``SOURCE_ORDER``): ``builtin`` for the built-in
    extension's, ``extension`` for the others'."""

    @property
    def name(self) -> str:
        return f"{self.extension}.{self.event}"

    @property
    def identity(self) -> str:
        """What the hook's grants are kept under; never a name alone for project code."""
        return self.owner or self.extension

    def rank(self) -> tuple[int, str]:
        return (source_rank(self.source), self.extension)

    def party(self) -> Party:
        return Party(self.source, self.extension)


REWRITE_KIND, REWRITE_VALUE = "hooks", "rewrite"
"""The grant that lets an extension's ``on_tool_call`` hook rewrite the arguments of
another extension's tools (``hooks rewrite``); off unless a person allows it."""

def rewrite_key(identity: str) -> str:
    """The grants key of an extension's hooks (``hook:IDENTITY``)."""
    return f"hook:{identity}"


class HookRegistry:
    """Hooks by event, kept in the order extensions were loaded (built-in first); see the
    module docstring for a name given twice."""

    def __init__(self) -> None:
        self._by_name: PrecedenceRegistry[tuple[str, str], Hook] = PrecedenceRegistry(
            rank=Hook.rank, party=Hook.party, describe=lambda key: ("hook", f"{key[1]}.{key[0]}"))
        self._order: dict[tuple[str, str], int] = {}
        """Each name's place, in the order names were first registered."""

    def add(self, hook: Hook) -> None:
        """Register ``hook``; precedence decides whether it runs when its name is taken."""
        if hook.event not in EVENTS:
            raise ValueError(f"unknown hook event {hook.event!r}")
        if hook.source not in SOURCE_ORDER:
            raise ValueError(f"unknown hook source {hook.source!r}")
        key = (hook.event, hook.extension)
        self._order.setdefault(key, len(self._order))
        self._by_name.add(key, hook)

    def clear(self) -> None:
        self._by_name.clear()
        self._order.clear()

    def remove_extension(self, extension: str) -> None:
        self._by_name.remove_where(lambda hook: hook.extension == extension)

    def _keys(self) -> list[tuple[str, str]]:
        return self._by_name.keys(order=self._order.__getitem__)

    def for_event(self, event: str, exclude: frozenset[str] | set[str] = frozenset()) -> list[Hook]:
        """The hooks of ``event`` that run, in registration order, leaving out ``exclude``'s
        extensions."""
        if not self._order:  # no hook was ever registered: the common case, kept cheap
            return []
        found = (self._by_name.first(key, lambda hook: hook.extension not in exclude)
                 for key in self._keys() if key[0] == event)
        return [hook for hook in found if hook is not None]

    def all(self) -> list[Hook]:
        """Every hook, shadowed ones included, in registration order."""
        return [hook for key in self._keys() for hook in self._by_name.candidates(key)]

    def by_extension(self, extension: str) -> list[Hook]:
        return [hook for hook in self.all() if hook.extension == extension]

    def conflicts(self) -> list[Conflict]:
        """Every hook name (``EXTENSION.EVENT``) registered more than once, with the one
        that runs and the shadowed ones."""
        return self._by_name.conflicts(order=self._order.__getitem__)
