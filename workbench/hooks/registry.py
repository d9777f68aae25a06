"""Which hooks are registered, per event, in registration order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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

    @property
    def name(self) -> str:
        return f"{self.extension}.{self.event}"

    @property
    def identity(self) -> str:
        """What the hook's grants are kept under; never a name alone for project code."""
        return self.owner or self.extension


REWRITE_KIND, REWRITE_VALUE = "hooks", "rewrite"
"""The grant that lets an extension's ``on_tool_call`` hook rewrite the arguments of
another extension's tools (``hooks rewrite``); off unless a person allows it."""

def rewrite_key(identity: str) -> str:
    """The grants key of an extension's hooks (``hook:IDENTITY``)."""
    return f"hook:{identity}"


class HookRegistry:
    """Hooks by event, kept in the order extensions were loaded (built-in first)."""

    def __init__(self) -> None:
        self._hooks: list[Hook] = []

    def add(self, hook: Hook) -> None:
        if hook.event not in EVENTS:
            raise ValueError(f"unknown hook event {hook.event!r}")
        self._hooks.append(hook)

    def clear(self) -> None:
        self._hooks.clear()

    def remove_extension(self, extension: str) -> None:
        self._hooks = [h for h in self._hooks if h.extension != extension]

    def for_event(self, event: str, exclude: frozenset[str] | set[str] = frozenset()) -> list[Hook]:
        """The hooks of ``event`` in registration order, leaving out ``exclude``'s extensions."""
        return [h for h in self._hooks if h.event == event and h.extension not in exclude]

    def all(self) -> list[Hook]:
        return list(self._hooks)

    def by_extension(self, extension: str) -> list[Hook]:
        return [h for h in self._hooks if h.extension == extension]
