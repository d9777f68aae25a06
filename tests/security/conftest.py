"""Fixtures for the hostile suite: extensions written by the test, a host to run them."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs import Lab
from workbench.core.host import Host


@pytest.fixture
async def lab(tmp_path: Path):
    root = tmp_path / "lab"
    root.mkdir()
    async with Host.open(cwd=tmp_path) as host:
        yield Lab(host, root)


