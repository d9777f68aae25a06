"""How the core asks a person: the ``Responder`` a front-end provides.

The TUI answers with a modal form, the headless front-end from flags, files or a
policy. The core only awaits ``Responder.answer``; a responder that will not answer
raises ``RequestDenied``, and the core treats that as "no".
"""

from __future__ import annotations

from typing import Any, Protocol

from workbench.events import PermissionAnswer, Request, RequestDenied


class Responder(Protocol):
    async def answer(self, request: Request) -> Any:
        """Return the answer to ``request`` or raise ``RequestDenied``."""
        ...


class DenyAll:
    """The responder of last resort: every request is refused, nothing waits."""

    async def answer(self, request: Request) -> Any:
        raise RequestDenied("no one is there to answer; requests are denied")


__all__ = ["DenyAll", "PermissionAnswer", "RequestDenied", "Responder"]
