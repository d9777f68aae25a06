"""Where the host works now: its home, its folder and the config in force there.

``Workspace`` is the one place the host's folder and config are kept; every service
that reads them is given the workspace and reads them when it needs them, so a move to
another folder (``host.folder.enter``) is seen by all at once. It must not import a
front-end or another service.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from workbench.config.files import Config
from workbench.config.home import Home


class Workspace:
    """The host's home, folder and config; see the module docstring.

    Args:
        home: The home the host opened.
        config: The config in force in ``folder`` (a trusted project's included).
        folder: The host's working folder.
        env: Where API keys and the like are read from.
    """

    def __init__(self, *, home: Home, config: Config, folder: Path,
                 env: Mapping[str, str] = os.environ) -> None:
        self.home = home
        self.config = config
        """The config in force in ``folder``; replaced when the host moves."""
        self.folder = folder
        """The host's working folder (a new chat's, the one tools start in)."""
        self.env: Mapping[str, str] = env
        """Where API keys and the like are read from."""

    def own_setting(self, key: str) -> bool:
        """Whether the value of setting ``key`` in force comes from the person's own
        (global) config or its default: a project's config cannot set it."""
        return str(self.config.origin(key)).startswith(("global", "default"))

    def unsandboxed_tools(self) -> set[str]:
        """Tools the person allowed to run without a sandbox — from their own (global)
        config only: a project's config cannot opt a tool out of the sandbox."""
        if not self.own_setting("sandbox.unsandboxed_tools"):
            return set()
        return set(self.config.settings.sandbox.unsandboxed_tools)
