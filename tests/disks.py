"""A real small filesystem for the full-disk tests: the ``small_disk`` fixture (in
``conftest.py``) mounts one, ``fill`` leaves a chosen number of bytes free on it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def small_disk(tmp_path):
    """A real 2 MiB filesystem (tmpfs) holding the workbench home, removed afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    assert made.returncode == 0, f"cannot mount a small tmpfs for the full-disk tests: {made.stderr}"
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until ``leave`` bytes are free."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(0, stats.f_bavail * stats.f_frsize - leave))
    return filler
