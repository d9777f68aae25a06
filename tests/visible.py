"""What a person sees: the terminal's lines, or one widget's, as text.

Textual has no public way to read the screen it composed, nor to wait until its widgets
have handled what they were sent, so this module alone reaches its compositor
(``Screen._compositor``) and the pilot's wait for the screen (``Pilot._wait_for_screen``);
tests ask these functions instead. Every wait here waits for a condition, bounded only
so that a failing test ends: none waits a fixed time or for the processor to go idle.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.css.query import NoMatches
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget


def drawn(app: App) -> bool:
    """Whether the top screen and all it composed are mounted and it has drawn every
    change made to it: nothing is left to lay out or repaint."""
    screen = app.screen
    return (screen.is_mounted and not screen._layout_required and not screen._repaint_required
            and not screen._dirty_widgets)


def screen_lines(app: App) -> list[str]:
    """The lines of the terminal as the app draws them now (the top screen, with the
    screens under a modal one, as a snapshot shows them)."""
    update = app.screen._compositor.render_update(full=True,
                                                  screen_stack=app._background_screens)
    return ["".join(segment.text for segment in strip) for strip in update.strips]


def screen_text(app: App) -> str:
    return "\n".join(screen_lines(app))


def terminal_update(app: App):
    """The whole top screen as Textual would write it to a terminal now (a Rich
    renderable: ``render_segments(console)`` gives the bytes)."""
    return app.screen._compositor.render_update(full=True)


def on_screen(app: App, widget: Widget) -> bool:
    """Whether any part of ``widget`` is within the visible screen (not scrolled away)."""
    return widget in app.screen._compositor.visible_widgets


def widget_lines(widget: Widget) -> list[str]:
    """What ``widget`` draws, line by line (whether or not it is scrolled into view)."""
    return [strip.text for strip in widget.render_lines(Region(0, 0, *widget.size))]


def described(predicate: Callable[[], Any]) -> str:
    """What ``predicate`` waits for: its docstring, else its source line (a lambda's)."""
    if predicate.__doc__:
        return predicate.__doc__
    try:
        return inspect.getsource(predicate).strip()
    except (OSError, TypeError):
        return repr(predicate)


async def wait_until(pilot: Pilot, predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Let the app run until ``predicate()`` holds, and return what it returned. A
    predicate that queries a widget not mounted yet (``NoMatches``) has not held yet:
    screens mount their children after they are shown."""
    # The bound only decides how long a failing test takes: a loaded machine (the suite
    # runs in parallel) can take seconds for what a person sees at once.
    deadline = time.monotonic() + timeout
    while True:
        try:
            held = predicate()
        except NoMatches:
            held = None
        if held:
            return held
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {described(predicate)}")
        await pilot.pause(0.02)


async def until_shown(pilot: Pilot, predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Let the app run until ``predicate()`` holds and the top screen has drawn every
    change (what a person sees then), and return what ``predicate`` returned."""
    held: list[Any] = []

    def seen() -> bool:
        value = predicate()
        held[:] = [value]
        return bool(value) and drawn(pilot.app)

    seen.__doc__ = f"{described(predicate)}, drawn"
    await wait_until(pilot, seen, timeout)
    return held[0]


async def until_screen(pilot: Pilot, kind: type[Screen], timeout: float = 60.0) -> Screen:
    """Let the app run until a ``kind`` screen is on top with everything it composes
    mounted and drawn (a pushed screen is on the stack before its content is), and
    return it."""
    app = pilot.app

    def shown() -> Screen | None:
        return app.screen if isinstance(app.screen, kind) and drawn(app) else None

    shown.__doc__ = f"a {kind.__name__} on top, mounted and drawn"
    return await wait_until(pilot, shown, timeout)


async def settled(pilot: Pilot, timeout: float = 60.0) -> None:
    """Let the app run until every widget of the top screen has handled the messages sent
    to it so far and the screen has drawn what they changed: what a person sees once the
    app has caught up with the keys pressed and the events posted (a scroll, a picture
    decoded, a turn's last event). For a change the test can name, wait for it instead."""
    app = pilot.app

    def caught_up() -> bool:
        """every message to the top screen handled, and the screen drawn"""
        return drawn(app)

    await pilot._wait_for_screen(timeout)
    await wait_until(pilot, caught_up, timeout)
