"""Settings: the home folder, the global and project config files, and project trust.

Owns where workbench keeps its files (``Home``), the declaration of every setting
(``Settings``, also the typed view ``Config.settings``) and the table derived from it, TOML
reading and comment-keeping writes, and the trust record that gates a project's
config. Must not import the store, the core or any front-end.
"""

from __future__ import annotations

from workbench.config.files import Config, Layer, set_setting
from workbench.config.home import HOME_ENV, Home, find_project_config, project_config_path
from workbench.config.settings import DEFAULTS, SETTINGS, Setting, Settings, format_value, lookup, parse_value
from workbench.config.trust import TrustRecord, check_trust, forget_project, trust_project

__all__ = [
    "DEFAULTS",
    "HOME_ENV",
    "SETTINGS",
    "Config",
    "Home",
    "Layer",
    "Setting",
    "Settings",
    "TrustRecord",
    "check_trust",
    "find_project_config",
    "forget_project",
    "format_value",
    "lookup",
    "parse_value",
    "project_config_path",
    "set_setting",
    "trust_project",
]
