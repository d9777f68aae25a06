"""Snapshot setup: SVGs go to the top-level ``snapshots/`` folder; ids and paths are fixed.

pytest-textual-snapshot 1.1 stores through syrupy 4.8's ``SingleFileSnapshotExtension``,
whose ``dirname`` defaults to ``__snapshots__/<test module>/`` beside the test. The
``snap_compare`` fixture looks up ``pytest_textual_snapshot.SVGImageExtension`` by name
each time it runs, so rebinding that name points it at our subclass.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_textual_snapshot
from app_factory import make_app
from syrupy.location import PyTestLocation

from workbench.tui.app import WorkbenchApp

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "snapshots"


class TopLevelSVGExtension(pytest_textual_snapshot.SVGImageExtension):
    """Store each SVG as ``snapshots/<test module>/<Class.test>.svg`` at the repository root."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(SNAPSHOTS / test_location.basename)


@pytest.fixture(autouse=True)
def _top_level_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pytest_textual_snapshot, "SVGImageExtension", TopLevelSVGExtension)


@pytest.fixture(autouse=True)
def _fixed_ids_and_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Session ids and the ``$home`` a permission names come out the same every run."""
    ids = random.Random(20240601)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=ids.getrandbits(128), version=4))
    monkeypatch.setenv("HOME", "/home/person")


@pytest.fixture
def snapshot_app(workdir: Path) -> Iterator[Callable[[list[dict[str, Any]]], WorkbenchApp]]:
    """Build apps with ``app_factory.make_app`` in the test's working folder; close their hosts after."""
    apps: list[WorkbenchApp] = []

    def make(replies: list[dict[str, Any]]) -> WorkbenchApp:
        app = make_app(workdir, replies)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.host.close()
