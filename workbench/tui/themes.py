"""Theme files: TOML descriptions of Textual themes, read at start.

A theme file holds the theme's ``name``, whether it is ``dark``, its base colors
under ``[colors]`` and optional overrides of derived variables under ``[variables]``
(see ``themes/workbench-dark.toml``). Every color is checked here so that a broken
file is reported by name instead of failing later while the screen is drawn.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

__all__ = ["DEFAULT_THEME", "THEMES_DIR", "load_themes"]

DEFAULT_THEME = "workbench-dark"
"""The theme of the first frame, drawn before the config is read: the ``theme``
setting's default (``tests/tui/test_tui_themes.py`` holds them equal)."""

THEMES_DIR = Path(__file__).resolve().parents[2] / "themes"
"""The themes shipped beside the package."""


COLOR_KEYS = ("primary", "secondary", "accent", "warning", "error", "success",
              "foreground", "background", "surface", "panel", "boost")


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message names the file and the key."""


def _check_color(value: Any, where: str, *, alpha_suffix: bool = False) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f"{where}: expected a color string, got {type(value).__name__}")
    # Derived variables may carry an alpha suffix ("#6CA0F0 35%"); check the color part.
    # Base colors may not: Textual parses them whole (write "#6CA0F059" instead).
    color = value.split()[0] if alpha_suffix and value.strip() else value
    try:
        Color.parse(color)
    except ColorParseError:
        raise ThemeFileError(f"{where}: {value!r} is not a color") from None
    return value


def parse_theme(data: dict[str, Any], source: str) -> Theme:
    """Build a ``Theme`` from the parsed contents of a theme file.

    Args:
        data: The file's TOML, parsed.
        source: The file's name, for messages.

    Raises:
        ThemeFileError: A key is missing, unknown or of the wrong type.
    """
    unknown = set(data) - {"name", "dark", "colors", "variables"}
    if unknown:
        raise ThemeFileError(f"{source}: unknown key {sorted(unknown)[0]!r}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{source}: 'name' must be a non-empty string")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"{source}: 'dark' must be true or false")
    colors = data.get("colors", {})
    if not isinstance(colors, dict):
        raise ThemeFileError(f"{source}: [colors] must be a table")
    for key in colors:
        if key not in COLOR_KEYS:
            raise ThemeFileError(f"{source}: unknown color {key!r}; known: {', '.join(COLOR_KEYS)}")
    if "primary" not in colors:
        raise ThemeFileError(f"{source}: [colors] needs 'primary'")
    checked = {key: _check_color(value, f"{source}: colors.{key}") for key, value in colors.items()}
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ThemeFileError(f"{source}: [variables] must be a table")
    for key, value in variables.items():
        if not isinstance(value, str):
            raise ThemeFileError(f"{source}: variables.{key} must be a string")
        if key.endswith(("-background", "-foreground", "-color")):
            _check_color(value, f"{source}: variables.{key}", alpha_suffix=True)
    return Theme(name=name, dark=dark, variables=dict(variables), **checked)


def load_theme_file(path: Path) -> Theme:
    """Read and check one theme file.

    Raises:
        ThemeFileError: The file cannot be read, is not TOML, or is not a theme.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ThemeFileError(f"{path.name}: cannot be read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path.name}: not valid TOML: {exc}") from exc
    return parse_theme(data, path.name)


def load_themes(folder: Path) -> tuple[list[Theme], list[str]]:
    """Every theme in ``folder``, and a problem line for each file that failed.

    Files are read in name order; a missing folder yields nothing.
    """
    themes: list[Theme] = []
    problems: list[str] = []
    if not folder.is_dir():
        return themes, problems
    for path in sorted(folder.glob("*.toml")):
        try:
            themes.append(load_theme_file(path))
        except ThemeFileError as exc:
            problems.append(f"theme file {exc}")
    return themes, problems
