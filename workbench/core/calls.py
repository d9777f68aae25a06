"""The shapes of one tool call a front-end makes and reads: how it is made
(``CallOptions``) and what it came to (``ToolOutcome``).

Part of the core's public API (``workbench.core``): ``host.tools.call`` takes the one and
returns the other, and ``workbench call`` prints it. The gateway (``core/gateway.py``)
makes the call; this module imports the hooks' context label alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.hooks.dispatch import CONTEXT_LABEL

__all__ = ["CallOptions", "ToolOutcome"]


@dataclass
class ToolOutcome:
    """What a call came to: a result, or an error of a known kind."""

    call_id: str
    tool: str
    ok: bool
    result: Any = None
    error: dict[str, Any] | None = None
    context: str | None = None
    """Hooks' additional context, handed to the model as one ``[hook context]`` block."""
    details: dict[str, Any] = field(default_factory=dict)
    """Display metadata about the result (hooks may change it, never its receipts)."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = ({"ok": True, "result": self.result} if self.ok
                                else {"ok": False, "error": self.error})
        if self.context:
            data["hook_context"] = f"{CONTEXT_LABEL}\n{self.context}"
        return data


@dataclass(frozen=True)
class CallOptions:
    """How one call is made.

    Attributes:
        caller: Who asked: ``model``, ``person``, ``schedule`` or ``agent``.
        session_id: The chat session, if any.
        grants: ``(kind, value)`` pairs granted for this call alone.
        prompt: Whether a missing permission may be asked for; when false it fails
            at once with kind ``permission``, and optional permissions not granted
            are left out.
        user_message: The message that triggered the call, for ``get_chat_context``.
        model_call_id: The id the model gave the call (kept as data in its record; the
            record's key is always ours).
        message_id: The assistant message that asked for the call.
    """

    caller: str = "person"
    session_id: str | None = None
    grants: tuple[tuple[str, str], ...] = ()
    prompt: bool = True
    user_message: str = ""
    without_hooks_of: frozenset[str] = frozenset()
    """Extensions switched off for this call's chat: their hooks do not run."""
    model_call_id: str | None = None
    message_id: int | None = None
    undoing: bool = False
    """Whether the person makes this call to undo a change of the list (its own change
    is then not recorded: an undo is not undone in turn)."""
