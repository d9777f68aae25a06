"""Fixtures for the Pilot tests: an app on a scripted model, and a way to wait for it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
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
    """``await until(pilot, predicate)``: let the app run until ``predicate()`` holds."""

    async def wait(pilot: Pilot, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {predicate.__doc__ or predicate}")
            await pilot.pause(0.02)

    return wait
