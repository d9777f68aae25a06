"""Where the home keeps its files, and whether an error says its disk is full: what
the CLI's error guard names when a command ends on an error, with no host opened
(the host may be what failed to open).

Part of the core's public API. The config and store packages are imported when a
function runs, so the guard every command passes through costs nothing to import.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["HomePaths", "home_paths", "is_disk_full"]


@dataclass(frozen=True)
class HomePaths:
    """The home's folder (``WORKBENCH_HOME`` or the platform's), its store and its logs."""

    root: Path
    db_path: Path
    logs_dir: Path


def home_paths() -> HomePaths:
    """The home as the environment names it; nothing is created.

    Raises:
        ConfigError: The home cannot be resolved.
    """
    from workbench.config.home import Home

    home = Home.resolve()
    return HomePaths(home.root, home.db_path, home.logs_dir)


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it, or a queued write it names) says the disk
    holding the store is full."""
    from workbench.store.turns import is_disk_full as says_disk_full

    return says_disk_full(exc)
