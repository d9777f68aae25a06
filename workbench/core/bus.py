"""The event bus: the core publishes, front-ends and tests subscribe."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from workbench.events import Event

log = logging.getLogger(__name__)

Listener = Callable[[Event], None]


class EventBus:
    """Delivers every published event to each listener, in order, synchronously.

    A listener that raises is logged and kept: one broken subscriber never stops
    the core or the other subscribers.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add ``listener``; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def publish(self, event: Event) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener %r failed on %s", listener, event.kind)

    async def stream(self) -> AsyncIterator[Event]:
        """Every event from now on, as an async iterator (ends when the consumer stops)."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()
