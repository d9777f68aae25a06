"""The one error every Tables operation raises: a kind, a message, and extra fields."""

from __future__ import annotations

from typing import Any


class TablesError(Exception):
    """A refused operation. ``kind`` is one of ``invalid``, ``unknown``, ``stale``,
    ``conflict``, ``capacity``, ``limit``, ``constraint``, ``expired``,
    ``already_undone``, ``not_undoable``, ``timeout``; nothing was changed."""

    def __init__(self, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        return {"error": self.kind, "message": self.message, **self.extra}


def invalid(message: str) -> TablesError:
    return TablesError("invalid", message)


UNKNOWN_DATABASE = "no such database, or it is not yours to use this way"
"""The one answer to an unknown database and to a call its role does not allow."""


def unknown_database() -> TablesError:
    return TablesError("unknown", UNKNOWN_DATABASE)
