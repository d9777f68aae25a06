"""Fixtures of the extension tests: an open store and a manager on the test's home."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workbench.config.home import Home
from workbench.ext.manager import ExtensionManager
from workbench.store import Store


@pytest.fixture
def store(home: Home) -> Iterator[Store]:
    with Store.open(home.db_path) as opened:
        yield opened


@pytest.fixture
def manager(home: Home, store: Store) -> ExtensionManager:
    """A manager whose registry is a closed port: these tests never reach a network."""
    return ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
