"""A display bubble a tool pushed, as the conversation holds it.

``DisplayView(display, payload)`` is what the message list mounts for each
``DisplayBubble`` event; the bubble itself (``widgets/bubbles``) depends on the kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical

if TYPE_CHECKING:
    from workbench.tui.widgets.bubbles.bubble import Bubble


class DisplayView(Vertical):
    """One display bubble in the conversation.

    Args:
        display: ``markdown``, ``table``, ``diff`` or ``image``.
        payload: The bubble's data, as the toolkit sends it.
    """

    DEFAULT_CSS = """
    DisplayView {
        height: auto;
        margin: 0 0 1 2;
    }
    """

    def __init__(self, display: str, payload: dict[str, Any]) -> None:
        super().__init__(classes=f"-{display}")
        self.kind = display
        self.payload = payload

    @property
    def bubble(self) -> Bubble:
        """The bubble shown."""
        from workbench.tui.widgets.bubbles.bubble import Bubble

        return self.query_one(Bubble)

    def compose(self) -> ComposeResult:
        # Imported at the first bubble: the bubbles (Markdown, syntax highlighting)
        # are not needed for the first frame.
        from workbench.tui.widgets.bubbles.bubble import bubble_for

        yield bubble_for(self.kind, self.payload)
