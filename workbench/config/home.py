"""Where workbench keeps its data, config, cache and logs: one folder, the home.

The home is ``$WORKBENCH_HOME`` when that is set, else the platform's user data
folder (``platformdirs.user_data_dir("workbench")``). Every other path workbench
writes outside a project is derived from it here, so nothing else joins paths onto
the home by hand.

It also finds a project's config file (``.workbench/config.toml``) from a folder
upward. This module must not import anything of ours; it is a leaf of the config package.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

HOME_ENV = "WORKBENCH_HOME"
"""The environment variable that overrides the home folder."""

APP_NAME = "workbench"

PROJECT_DIR_NAME = ".workbench"
"""The folder inside a project that holds its config and local state."""

CONFIG_NAME = "config.toml"
"""The name of the global and of every project config file."""


@dataclass(frozen=True)
class Home:
    """The folder that holds workbench's database, config, extensions, cache and logs.

    Attributes:
        root: The home folder itself (absolute).
    """

    root: Path

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> Home:
        """Find the home folder from the environment.

        Args:
            env: The environment to read ``WORKBENCH_HOME`` from; ``os.environ``
                when omitted.

        Returns:
            The home, not yet created on disk (see ``ensure``).
        """
        env = os.environ if env is None else env
        override = env.get(HOME_ENV, "").strip()
        if override:
            root = Path(override).expanduser()
        else:
            root = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
        return cls(root=Path(os.path.abspath(root)))

    @property
    def config_file(self) -> Path:
        """The global config file, ``config.toml``."""
        return self.root / CONFIG_NAME

    @property
    def db_path(self) -> Path:
        """The SQLite store, ``workbench.db``."""
        return self.root / "workbench.db"

    @property
    def extensions_dir(self) -> Path:
        """Installed extensions, one folder each."""
        return self.root / "extensions"

    @property
    def cache_dir(self) -> Path:
        """Files that can be rebuilt and may be deleted at any time."""
        return self.root / "cache"

    @property
    def logs_dir(self) -> Path:
        """Log files."""
        return self.root / "logs"

    @property
    def trust_file(self) -> Path:
        """The record of trusted project configs (digest, time and content)."""
        return self.root / "trusted-projects.json"

    def ensure(self) -> Home:
        """Create the home and its folders if they are missing.

        The home itself is made private to the user (mode ``0o700``), since it
        holds grants, chat history and the trust record.

        Returns:
            This home, for chaining.
        """
        created = not self.root.exists()
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        if created:
            # mkdir's mode is filtered by the umask; set it exactly.
            os.chmod(self.root, 0o700)
        for folder in (self.extensions_dir, self.cache_dir, self.logs_dir):
            folder.mkdir(exist_ok=True)
        return self

    def is_home(self, folder: Path) -> bool:
        """Whether ``folder`` is this home, however it is spelled.

        A home set to ``~/.workbench`` must not be mistaken for the project
        folder of the user's home directory; project discovery asks this.

        Args:
            folder: Any folder.

        Returns:
            True when ``folder`` resolves to the home's root.
        """
        try:
            return folder.resolve() == self.root.resolve()
        except OSError:
            return False


def storage_name(identity: str, name: str) -> str:
    """The file name of what the home keeps for an extension (its private database under
    ``databases/``, its dependency caches under ``cache/``): an installed extension's
    name; for one a project keeps (identity ``project:FOLDER``), its name after a digest
    of its identity, so it never opens an installed one's, nor another project's of the
    same name."""
    if identity == name or not identity:
        return name
    return f"project-{hashlib.sha256(identity.encode()).hexdigest()[:16]}-{name}"


def project_config_path(project_dir: Path) -> Path:
    """The config file of the project rooted at ``project_dir``."""
    return project_dir / PROJECT_DIR_NAME / CONFIG_NAME


def find_project_config(cwd: Path, home: Home) -> Path | None:
    """Find the nearest ``.workbench/config.toml`` from ``cwd`` upward.

    The search stops at the filesystem root. A ``.workbench`` folder that is the
    home itself is skipped, so a home at ``~/.workbench`` is never read as a
    project config.

    Args:
        cwd: The folder to start from.
        home: The workbench home.

    Returns:
        The absolute path of the project config file, or None when there is none.
    """
    folder = Path(os.path.abspath(cwd))
    for candidate_dir in (folder, *folder.parents):
        candidate = project_config_path(candidate_dir)
        if candidate.is_file() and not home.is_home(candidate.parent):
            return candidate
    return None
