"""The keys a person can press, read from the bindings themselves.

The help screen and the command palette both list them from here, so an action that
a screen adds to its ``BINDINGS`` (with a description) shows in both without being
named anywhere else. A row is a binding of the app or of the screen (not of the
focused widget: those are editing keys), one row per action with all its keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.actions import ActionError, parse
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen


@dataclass(frozen=True)
class KeyRow:
    """One action and the keys that run it.

    Attributes:
        keys: The keys as the footer shows them (``^e``, ``f1``).
        description: What the binding calls itself (``Extensions``).
        help: One line on what it does: the action's docstring, or what ``describe``
            says of it.
        action: The action as bound (``open('tasks')``).
        node: Where the action runs (the app or the screen).
        enabled: Whether it can run now (a disabled one is shown dimmed).
    """

    keys: tuple[str, ...]
    description: str
    help: str
    action: str
    node: DOMNode
    enabled: bool

    @property
    def everywhere(self) -> bool:
        """Whether it is the app's (works on every screen) rather than the screen's."""
        return isinstance(self.node, App)


def _docstring(node: DOMNode, action: str) -> str:
    try:
        _, name, _ = parse(action)
    except ActionError:
        return ""
    method = getattr(node, f"action_{name}", None)
    doc = (getattr(method, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def key_rows(screen: Screen, describe: Callable[[str], str] | None = None) -> list[KeyRow]:
    """The app's and ``screen``'s bindings that have a description, the screen's first.

    Args:
        screen: The screen the keys are for.
        describe: Says what an action does when its docstring would not (the app's
            ``open('tasks')``); returns "" to fall back to the docstring.
    """
    app = screen.app
    rows: dict[tuple[int, str], KeyRow] = {}
    for active in screen.active_bindings.values():
        node, binding = active.node, active.binding
        if not binding.description or binding.system or not (node is app or node is screen):
            continue
        key = app.get_key_display(binding)
        found = rows.get((id(node), binding.action))
        if found is not None:
            if key not in found.keys:
                rows[(id(node), binding.action)] = KeyRow(
                    (*found.keys, key), found.description, found.help, found.action, node,
                    found.enabled or active.enabled)
            continue
        help_text = (describe(binding.action) if describe else "") or _docstring(node, binding.action)
        rows[(id(node), binding.action)] = KeyRow((key,), binding.description, help_text,
                                                  binding.action, node, active.enabled)
    return sorted(rows.values(), key=lambda row: row.everywhere)
