"""Shared fixtures: every test runs with its own home and working folder.

``WORKBENCH_HOME`` points into the test's temporary folder, the XDG folders point
there too (so nothing falls back to the real home), and the test starts in a fresh
empty working folder. No test reads or writes the user's real config or data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
