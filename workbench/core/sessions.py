"""Sessions as the front-ends show them: one lookup and one row shape.

``find_session`` is how every service turns a session id (or a unique prefix of it)
into the session, with the same refusal; ``SessionRow`` is what ``host.chats.rows``
returns and both the CLI (``sessions list``) and the TUI (the sessions screen) render.
Stdlib only, besides the store it is handed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from workbench.agent.loop import TurnResult as TurnResult  # what host.chats' turns end as
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.store import Store


def find_session(store: Store, session_id: str) -> dict[str, Any]:
    """The session ``session_id`` (or a unique prefix of it).

    Raises:
        WorkbenchError: No such session.
    """
    found = store.get_session(session_id)
    if found is None:
        raise WorkbenchError(f"no session {session_id!r}; `workbench sessions list` shows them")
    return found


@dataclass(frozen=True)
class SessionRow:
    """One chat, as a list of chats shows it (``sessions list``, the sessions screen)."""

    id: str
    """The session's full id."""
    title: str
    """Its title; empty when it has none."""
    created_at: int
    """When it was started, in unix milliseconds."""
    updated_at: int
    """When it last changed, in unix milliseconds."""
    message_count: int
    """How many messages it holds."""
    model: str | None = None
    """Its own model spec; None when it follows the default."""
    folder: str | None = None
    """Its project folder, if it keeps one."""

    @classmethod
    def of(cls, session: dict[str, Any]) -> SessionRow:
        """The row of a session as the store gives it."""
        return cls(id=session["id"], title=" ".join(str(session.get("title") or "").split()),
                   created_at=int(session.get("created_at") or 0),
                   updated_at=int(session.get("updated_at") or 0),
                   message_count=int(session.get("message_count") or 0),
                   model=session.get("model") or None, folder=session.get("folder") or None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
