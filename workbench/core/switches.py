"""Per-chat extension switches: what a chat that switched extensions off is offered.

A chat (its Tools menu) can switch extensions off; the store keeps its choices
(``session_extensions``). For that chat the switched-off extensions are as if they
were not loaded: their tools are not offered, and a name one of them won goes to the
next tool by precedence. A model's call to a tool only they provide is refused as
``not_found``, saying why.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from workbench.errors import ToolError
from workbench.tools.registry import ToolRegistry


def route_in_chat(registry: ToolRegistry, name: str,
                  off: Collection[str]) -> tuple[str, ToolError | None]:
    """The name to call for a model's ``name`` in a chat with ``off`` switched off, or
    why it is refused there.

    Returns:
        ``(name, None)`` when the chat offers the same tool as everywhere (or nothing
        by that name is known: the gateway says so); ``(EXTENSION.TOOL, None)`` when
        the winner is switched off and another tool takes the name;
        ``(name, error)`` when only switched-off extensions provide it.
    """
    try:
        winner = registry.resolve(name)
    except ToolError:
        return name, None
    try:
        chosen = registry.resolve(name, exclude=off)
    except ToolError:
        return name, ToolError("not_found", f"{name!r} belongs to the extension "
                               f"{winner.extension}, which is switched off in this chat")
    return (name if chosen is winner else chosen.qualified_name), None


def known_extensions(registry: ToolRegistry, loaded: Iterable[dict],
                     installed: Iterable[object] = ()) -> set[str]:
    """Every extension name a chat may switch: those with tools (the host's own
    included), those loaded, those that failed to load and those installed."""
    return ({tool.extension for tool in registry.all_tools()}
            | {entry["name"] for entry in loaded}
            | {error.extension for error in registry.load_errors}
            | {str(getattr(found, "name")) for found in installed})
