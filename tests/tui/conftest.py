"""Fixtures for the Pilot tests: an app on a scripted model, and a way to wait for it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from visible import drawn, wait_until
from visible import until_screen as visible_until_screen

from workbench.tui.app import WorkbenchApp, open_app


@pytest.fixture
def make_app(workdir: Path) -> Iterator[Callable[[list[dict[str, Any]]], WorkbenchApp]]:
    """Build apps whose model replays ``replies`` (written to ``replies.json`` in the
    working folder); their hosts are closed when the test ends."""
    apps: list[WorkbenchApp] = []

    def make(replies: list[dict[str, Any]]) -> WorkbenchApp:
        (workdir / "replies.json").write_text(json.dumps(replies), encoding="utf-8")
        app = open_app(model="scripted:replies.json")
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.host.close()


@pytest.fixture
def until() -> Callable:
    """``await until(pilot, predicate)``: let the app run until ``predicate()`` holds, and
    return what it returned. A predicate that queries a widget not mounted yet
    (``NoMatches``) has not held yet: screens mount their children after they are shown."""
    return wait_until


@pytest.fixture
def until_screen() -> Callable:
    """``await until_screen(pilot, Kind)``: wait until a ``Kind`` screen is on top with
    everything it composes mounted and drawn (a pushed screen is on the stack before its
    content is), and return it."""
    return visible_until_screen


@pytest.fixture
def until_notified(until: Callable) -> Callable:
    """``await until_notified(pilot, text)``: wait until a notification containing
    ``text`` has been shown, and return its message."""

    async def wait(pilot: Pilot, text: str, timeout: float = 60.0) -> str:
        app = pilot.app

        def notified() -> str | None:
            return next((note.message for note in app._notifications if text in note.message),
                        None)

        notified.__doc__ = f"a notification saying {text!r}"
        return await until(pilot, notified, timeout=timeout)

    return wait


@pytest.fixture
def until_drawn(until: Callable) -> Callable:
    """``await until_drawn(pilot)``: wait until the top screen is mounted and has drawn
    every change made to it (nothing left to lay out or repaint)."""

    async def wait(pilot: Pilot, timeout: float = 60.0) -> None:
        app = pilot.app

        def done() -> bool:
            """the top screen drawn"""
            return drawn(app)

        await until(pilot, done, timeout=timeout)

    return wait
