"""The settings as a front-end shows and edits them: every value, where it comes from,
the two config files and whether the project's config is trusted.

``SettingsService`` is reached as ``host.settings``; the TUI's Settings screen reads
``view`` (the files as they are now) and ``declared`` (a setting's declaration: its
help, its type, whether it is secret), shows values with ``shown`` and asks what a
project's config sets with ``project_keys`` before it is trusted. Values are written
through ``host.config.set``, as ``workbench config set`` does. It must not import a
front-end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.config.document import read_values
from workbench.config.files import Config
from workbench.config.settings import DEFAULTS, SETTINGS, Setting, format_value
from workbench.errors import ConfigError, WorkbenchError

if TYPE_CHECKING:
    from workbench.core.chat_models import ChatModels
    from workbench.core.workspace import Workspace

__all__ = ["DEFAULTS", "DEFAULT_THEME", "SETTING_KEYS", "ConfigView", "Setting", "SettingsService"]

SETTING_KEYS: tuple[str, ...] = tuple(SETTINGS)
"""Every setting's key, in table order."""

DEFAULT_THEME: str = DEFAULTS.theme
"""The theme a person who chose none gets (the ``theme`` setting's default)."""


@dataclass(frozen=True)
class ConfigView:
    """What a front-end shows of the config, read at one moment.

    Attributes:
        global_file: The home's ``config.toml``.
        project_file: The project's config found from the working folder, if any.
        project_state: ``none``, ``untrusted``, ``trusted`` or ``changed``.
        trusted_at: When the project's config was trusted, if it was.
        rows: ``(key, value, origin)`` per setting.
        problem: Why the files could not be read now (the values in force are shown).
        chats: Which chats follow the default model and which have their own
            (``host.chat_models``).
    """

    global_file: Path
    project_file: Path | None
    project_state: str
    trusted_at: str | None
    rows: list[tuple[str, Any, str]] = field(default_factory=list)
    problem: str = ""
    chats: dict[str, Any] = field(default_factory=dict)


class SettingsService:
    """The settings as shown and edited; see the module docstring.

    Args:
        workspace: The home, the host's folder and the config in force.
        chat_models: Which chats follow the default model (the ``model`` row's help).
    """

    def __init__(self, *, workspace: Workspace, chat_models: ChatModels) -> None:
        self.workspace = workspace
        self.chat_models = chat_models

    def declared(self, key: str) -> Setting:
        """The declaration of setting ``key``: its help, type, rule, whether it is secret.

        Raises:
            KeyError: No such setting.
        """
        return SETTINGS[key]

    @staticmethod
    def shown(value: Any) -> str:
        """A value as ``config show`` prints it and a person types it."""
        return format_value(value)

    def view(self) -> ConfigView:
        """The config as the files say now; on a file that cannot be read, the values
        the host holds, and why."""
        workspace = self.workspace
        try:
            config = Config.load(workspace.home, workspace.folder)
            problem = ""
        except ConfigError as exc:
            config, problem = workspace.config, str(exc)
        record = config.trust_record
        try:
            chats = self.chat_models.chat_models()
        except WorkbenchError:
            chats = {}
        return ConfigView(workspace.home.config_file, config.project_file, config.project_state,
                          record.trusted_at if record else None, config.items(), problem, chats)

    @staticmethod
    def project_keys(path: Path) -> list[str]:
        """The keys a project's config file sets, sorted (shown before it is trusted).

        Raises:
            WorkbenchError: The file cannot be read.
        """
        return sorted(read_values(path))
