"""Shared fixtures: every test runs with its own home and working folder.

``WORKBENCH_HOME`` points into the test's temporary folder, the XDG folders point
there too (so nothing falls back to the real home), and the test starts in a fresh
empty working folder. No test reads or writes the user's real config or data.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from disks import small_disk  # noqa: F401  (a fixture for every test)
from shells import network_answers, shell_config, shell_lab  # noqa: F401  (fixtures for the shell's tests)

XDG_VARIABLES = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point HOME, the workbench home and XDG folders into ``tmp_path``; start in ``tmp_path/work``."""
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    # The user's home ($home in permission templates) is the test's folder too.
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in XDG_VARIABLES:
        monkeypatch.setenv(name, str(tmp_path / "xdg" / name.lower()))
    monkeypatch.delenv("XDG_CONFIG_DIRS", raising=False)
    monkeypatch.delenv("XDG_DATA_DIRS", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture
def workdir(tmp_path: Path, _isolated: None) -> Path:
    """The fresh folder each test starts in (its current directory)."""
    return tmp_path / "work"


@pytest.fixture
def home(_isolated: None):
    """The test's workbench home (under ``tmp_path/home``), created on disk."""
    from workbench.config.home import Home

    return Home.resolve().ensure()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, start the slow tests (``e2e``, ``slow``) first, spread over the workers.

    ``--dist worksteal`` hands worker k the k-th contiguous share of this order, and an
    idle worker then takes half of another's queue. A slow test late in a share keeps
    its worker busy after the others are done; at the head of each share, the slow
    tests run side by side and the quick ones fill in around them. A module's slow
    tests stay in one share, so that its module-scoped setup (a model server) is made
    once. Nothing is left out or added.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers < 2:
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("e2e") or item.get_closest_marker("slow"):
            modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    if not modules:
        return
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for module in sorted(modules.values(), key=len, reverse=True):
        min(heads, key=len).extend(module)
    chosen = {id(item) for module in modules.values() for item in module}
    quick = [item for item in items if id(item) not in chosen]
    order: list[pytest.Item] = []
    for share, head in enumerate(heads):
        # The share's size as the scheduler cuts it: what is left over the workers left.
        size = (len(items) - len(order)) // (workers - share)
        fill = max(0, size - len(head))
        order += head + quick[:fill]
        del quick[:fill]
    items[:] = order + quick
