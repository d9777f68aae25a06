"""The one Textual message that carries core events into the TUI.

The core publishes plain dataclasses (``workbench.events``) and knows nothing of
Textual; the app wraps each one in a ``CoreEvent`` and posts it to the chat screen.
"""

from __future__ import annotations

from textual.message import Message

from workbench.events import Event


class CoreEvent(Message):
    """A core event, delivered to a screen.

    Args:
        event: The event as the core published it.
    """

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event
        """The event as the core published it."""
