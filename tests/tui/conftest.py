"""Fixtures for the Pilot tests: an app on a scripted model, and a way to wait for it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.css.query import NoMatches
from textual.pilot import Pilot

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

    async def wait(pilot: Pilot, predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
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
                raise AssertionError(f"timed out waiting for {predicate.__doc__ or predicate}")
            await pilot.pause(0.02)

    return wait
