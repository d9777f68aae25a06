"""Theme files: the shipped ones load, broken ones are reported by file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.tui.themes import THEMES_DIR, ThemeFileError, load_theme_file, load_themes, parse_theme


def test_shipped_themes_load() -> None:
    themes, problems = load_themes(THEMES_DIR)
    assert problems == []
    by_name = {theme.name: theme for theme in themes}
    assert {"workbench-dark", "workbench-light"} <= set(by_name)
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
