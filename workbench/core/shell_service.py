"""The shell's network in each chat, as the Tools menu and the CLI choose it.

``ShellService`` is reached as ``host.shell``; it asks the ``shell`` tool source
(``workbench.shell.source``) and turns its refusals into the core's. It must not import
a front-end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.sessions import find_session
from workbench.errors import ToolError, WorkbenchError

if TYPE_CHECKING:
    from workbench.shell.source import ShellSource
    from workbench.store import Store
    from workbench.tools.source import ToolSources


class ShellService:
    """The shell's network per chat; see the module docstring.

    Args:
        sources: Every tool source (the ``shell`` one among them).
        store: Where the sessions are.
    """

    def __init__(self, *, sources: ToolSources, store: Store) -> None:
        self.sources = sources
        self.store = store

    @property
    def source(self) -> ShellSource:
        """The ``shell`` tool source."""
        from workbench.shell.source import ShellSource

        found = self.sources.get("shell")
        assert isinstance(found, ShellSource)
        return found

    def network(self, session_id: str | None) -> dict[str, Any]:
        """What the shell may reach in a chat: ``level`` (its choice or the setting,
        within the ceiling), ``chosen``, ``setting``, ``ceiling``, ``levels``,
        ``allowed_hosts`` (allowed for the chat from a network card), ``labels``
        (each level in words, as a front-end shows it)."""
        return self._labelled(self.source.network(session_id))

    @staticmethod
    def _labelled(found: dict[str, Any]) -> dict[str, Any]:
        from workbench.shell.network import described

        return {**found, "labels": {level: described(level) for level in found["levels"]}}

    def set_network(self, session_id: str, level: str | None) -> dict[str, Any]:
        """Choose the shell's network for a chat (``off``, ``registries``, ``all``; None
        follows the setting); capped by ``shell.network_ceiling`` from the person's config.

        Returns:
            The chat's network as ``network`` gives it.

        Raises:
            WorkbenchError: No such session, or not a level.
        """
        session = find_session(self.store, session_id)
        try:
            return self._labelled(self.source.set_network(session["id"], level))
        except ToolError as exc:
            raise WorkbenchError(exc.message) from None
