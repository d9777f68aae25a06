"""The broker: which of a tool's requirements are granted, and recording new grants.

Grants are per tool (keyed by the tool's qualified name ``EXTENSION.TOOL``), never
shared with a sibling tool of the same extension. Scopes: ``once`` (this call only,
kept nowhere but the audit log), ``session`` (this chat session), ``always``, and
``deny`` (refused from now on without asking).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from workbench.permissions.requirements import Requirement

SCOPES = ("once", "session", "always", "deny")


class GrantStore(Protocol):
    def add_grant(self, tool: str, kind: str, value: str, scope: str,
                  session_id: str | None = None) -> int: ...

    def list_grants(self, tool: str | None = None) -> list[dict[str, Any]]: ...


class Broker:
    """Answers "is this granted?" from the store, and records decisions."""

    def __init__(self, store: GrantStore) -> None:
        self.store = store

    def _matching(self, tool: str, req: Requirement, session_id: str | None) -> list[dict[str, Any]]:
        return [g for g in self.store.list_grants(tool)
                if g["kind"] == req.kind and g["value"] == req.value
                and (g["scope"] != "session" or g["session_id"] == session_id)]

    def denied(self, tool: str, reqs: Iterable[Requirement], session_id: str | None) -> list[Requirement]:
        """The requirements the person refused for good."""
        return [r for r in reqs if any(g["scope"] == "deny" for g in self._matching(tool, r, session_id))]

    def missing(self, tool: str, reqs: Iterable[Requirement], session_id: str | None,
                extra: Iterable[tuple[str, str]] = ()) -> list[Requirement]:
        """The non-optional requirements with no standing grant.

        Args:
            tool: The tool's qualified name.
            reqs: Its requirements.
            session_id: The chat session, for session-scoped grants.
            extra: ``(kind, value)`` pairs granted for this call alone (``value`` may
                be ``"*"`` for every value of that kind).
        """
        extra = set(extra)
        left = []
        for req in reqs:
            if req.optional:
                continue
            if (req.kind, req.value) in extra or (req.kind, "*") in extra:
                continue
            grants = self._matching(tool, req, session_id)
            if not any(g["scope"] in ("session", "always") for g in grants):
                left.append(req)
        return left

    def granted(self, tool: str, reqs: Iterable[Requirement], session_id: str | None,
                extra: Iterable[tuple[str, str]] = ()) -> list[Requirement]:
        """The requirements with a standing grant or a grant for this call alone."""
        extra = set(extra)
        found = []
        for req in reqs:
            if (req.kind, req.value) in extra or (req.kind, "*") in extra:
                found.append(req)
            elif any(g["scope"] in ("session", "always") for g in self._matching(tool, req, session_id)):
                found.append(req)
        return found

    def record(self, tool: str, reqs: Iterable[Requirement], scope: str,
               session_id: str | None) -> None:
        """Keep a decision; ``once`` keeps nothing beyond the call."""
        if scope not in SCOPES:
            raise ValueError(f"unknown grant scope {scope!r}")
        if scope == "once":
            return
        for req in reqs:
            self.store.add_grant(tool, req.kind, req.value, scope,
                                 session_id if scope == "session" else None)
