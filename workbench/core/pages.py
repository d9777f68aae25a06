"""The rows of extensions' pages, as ``host.pages`` returns them and the faces draw them.

Part of the core's public API (``workbench.core``): ``PageRow`` for a page as listed,
``OpenedPage`` for a page opened (its card parsed, ``workbench.cards``),
``PageActionOutcome`` for an action run on it, ``PageError`` for a page that cannot be
opened or an action that is refused. The service is ``core/page_service.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.cards import Card
from workbench.core.calls import ToolOutcome
from workbench.errors import WorkbenchError

__all__ = ["OpenedPage", "PageActionOutcome", "PageError", "PageRow"]


class PageError(WorkbenchError):
    """A page that cannot be listed or opened, or an action on it that is refused; the
    message says what and ``where`` names the page (``page EXTENSION/ID``)."""


@dataclass(frozen=True)
class PageRow:
    """One page an extension declares in its manifest (``pages``)."""

    extension: str
    extension_title: str
    """The extension's display name."""
    id: str
    title: str
    tool: str
    """The tool (its name in the manifest) that serves the page's card."""

    @property
    def key(self) -> str:
        """``EXTENSION/ID``: how the page is named on the command line and in messages."""
        return f"{self.extension}/{self.id}"

    def to_json(self) -> dict[str, Any]:
        return {"extension": self.extension, "extension_title": self.extension_title,
                "id": self.id, "title": self.title, "tool": self.tool}


@dataclass(frozen=True)
class OpenedPage:
    """A page opened: its tool called as the person, its card checked."""

    page: PageRow
    card: Card
    document: dict[str, Any]
    """The card document as the tool returned it (checked by ``parse_card``)."""


@dataclass(frozen=True)
class PageActionOutcome:
    """What an ``Action.Execute`` on a page came to, and the page opened again after it."""

    page: PageRow
    verb: str
    outcome: ToolOutcome
    """The call of the action's tool."""
    reopened: OpenedPage | None = None
    """The page as its tool serves it after the action; None when it could not be opened
    again (``reopen_error`` says why)."""
    reopen_error: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"page": self.page.to_json(), "verb": self.verb,
                                **self.outcome.to_json()}
        if self.reopened is not None:
            data["card"] = self.reopened.document
        if self.reopen_error:
            data["reopen_error"] = self.reopen_error
        return data
