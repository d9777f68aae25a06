"""Theme files: the shipped ones load, broken ones are reported by file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.color import Color
from textual.command import CommandPalette

from visible import until_screen, until_shown

from workbench.tui.app import open_app
from workbench.tui.themes import THEMES_DIR, ThemeFileError, load_theme_file, load_themes, parse_theme


def test_shipped_themes_load() -> None:
    themes, problems = load_themes(THEMES_DIR)
    assert problems == []
    by_name = {theme.name: theme for theme in themes}
    assert {"workbench-dark", "workbench-light", "workbench-high-contrast"} <= set(by_name)
    assert by_name["workbench-dark"].dark is True
    assert by_name["workbench-light"].dark is False
    assert by_name["workbench-dark"].primary.startswith("#")


def test_theme_file_fields(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\ndark = false\n[colors]\nprimary = "#112233"\n'
                    'background = "white"\n[variables]\n"footer-key-foreground" = "#112233 50%"\n')
    theme = load_theme_file(path)
    assert (theme.name, theme.dark, theme.primary, theme.background) == ("mine", False, "#112233", "white")
    assert theme.variables == {"footer-key-foreground": "#112233 50%"}


@pytest.mark.parametrize(("data", "message"), [
    ({"dark": True, "colors": {"primary": "#fff"}}, "'name' must be a non-empty string"),
    ({"name": "x", "colors": {}}, "needs 'primary'"),
    ({"name": "x", "colors": {"primary": "not-a-colour"}}, "colors.primary: 'not-a-colour' is not a color"),
    ({"name": "x", "colors": {"primary": "#fff", "glow": "#fff"}}, "unknown color 'glow'"),
    ({"name": "x", "colour": {}}, "unknown key 'colour'"),
    ({"name": "x", "dark": "yes", "colors": {"primary": "#fff"}}, "'dark' must be true or false"),
    ({"name": "x", "colors": {"primary": "#fff"}, "variables": {"footer-background": "nope"}},
     "variables.footer-background: 'nope' is not a color"),
    # Only derived variables take an alpha suffix; a base color is parsed whole.
    ({"name": "x", "colors": {"primary": "#fff", "boost": "#fff 10%"}},
     "colors.boost: '#fff 10%' is not a color"),
])
def test_bad_theme_is_refused(data: dict, message: str) -> None:
    with pytest.raises(ThemeFileError, match=message) as raised:
        parse_theme(data, "bad.toml")
    assert str(raised.value).startswith("bad.toml: ")


def test_broken_files_become_problems(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text('name = "good"\n[colors]\nprimary = "#abcdef"\n')
    (tmp_path / "broken.toml").write_text('name = "broken\n')
    themes, problems = load_themes(tmp_path)
    assert [theme.name for theme in themes] == ["good"]
    assert len(problems) == 1 and problems[0].startswith("theme file broken.toml: not valid TOML")


def test_missing_folder_has_no_themes(tmp_path: Path) -> None:
    assert load_themes(tmp_path / "nowhere") == ([], [])


def contrast(one: str, other: str) -> float:
    """The WCAG contrast ratio of two opaque colors."""
    def luminance(color: str) -> float:
        channels = []
        for value in Color.parse(color).rgb:
            value /= 255
            channels.append(value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4)
        red, green, blue = channels
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue

    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_high_contrast_is_white_on_black_with_a_strong_focus() -> None:
    themes, _ = load_themes(THEMES_DIR)
    app = App()
    for theme in themes:
        app.register_theme(theme)
    app.theme = "workbench-high-contrast"
    colors = app.get_css_variables()
    assert (colors["background"], colors["foreground"]) == ("#000000", "#FFFFFF")
    assert colors["surface"] == colors["panel"] == "#000000"
    for name in ("text", "text-muted", "text-primary", "text-accent", "text-warning", "text-error",
                 "text-success", "footer-key-foreground", "border", "border-blurred"):
        assert contrast(colors[name], "#000000") >= 7, name
    # The focus: a bright outline unlike anything unfocused; on the cursor row, focused
    # or not, every text colour stays readable (WCAG AA).
    assert colors["border"] == "#FFFF00" and colors["border-blurred"] == "#FFFFFF"
    for cursor in ("block-cursor-background", "block-cursor-blurred-background"):
        for name in ("text", "text-primary", "text-accent", "text-warning", "text-error",
                     "text-success"):
            assert contrast(colors[name], colors[cursor]) >= 4.5, (name, cursor)
    # Text on coloured buttons is black.
    assert colors["button-color-foreground"] == "#000000"


async def test_a_theme_chosen_in_the_palette_is_still_chosen_after_restart(home, workdir, until) -> None:
    home.config_file.write_text("# my config\nmodel = \"echo\"\n")
    app = open_app(model="echo")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            assert app.theme == "workbench-dark"
            await pilot.press("ctrl+p")
            await until_screen(pilot, CommandPalette)
            await pilot.press(*"workbench-high", "down", "enter")
            await until(pilot, lambda: 'theme = "workbench-high-contrast"'
                        in home.config_file.read_text())
            assert app.theme == "workbench-high-contrast"
    finally:
        app.host.close()
    assert home.config_file.read_text().startswith("# my config\nmodel = \"echo\"\n")
    again = open_app(model="echo")
    try:
        assert again.theme == "workbench-high-contrast"
        async with again.run_test(size=(80, 24)) as pilot:
            await until_shown(pilot, lambda: again.theme == "workbench-high-contrast")
    finally:
        again.host.close()


def test_the_first_frames_theme_is_the_settings_default() -> None:
    """The theme drawn before the config is read is the one the config defaults to."""
    from workbench.core.settings_service import DEFAULT_THEME as SETTINGS_DEFAULT
    from workbench.tui.themes import DEFAULT_THEME

    assert DEFAULT_THEME == SETTINGS_DEFAULT
