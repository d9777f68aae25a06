"""The person's locale from the config or the environment, as a BCP 47 tag."""

from __future__ import annotations

import pytest

from workbench.config.locale import to_tag, user_locale
from workbench.config.settings import SETTINGS


@pytest.mark.parametrize(("name", "tag"), [
    ("en_US.UTF-8", "en-US"), ("pt_BR", "pt-BR"), ("de", "de"), ("sr_RS@latin", "sr-RS"),
    ("zh_Hant_TW.UTF-8", "zh-Hant-TW"), ("es_419.UTF-8", "es-419"), ("en-us", "en-US"),
    ("C", None), ("C.UTF-8", None), ("POSIX", None), ("", None), ("not a locale", None)])
def test_posix_names_become_tags(name: str, tag: str | None) -> None:
    assert to_tag(name) == tag


def test_lc_all_then_lc_messages_then_lang() -> None:
    env = {"LC_ALL": "fr_FR.UTF-8", "LC_MESSAGES": "it_IT.UTF-8", "LANG": "en_GB.UTF-8"}
    assert user_locale("", env) == "fr-FR"
    assert user_locale("", {**env, "LC_ALL": ""}) == "it-IT"
    assert user_locale("", {**env, "LC_ALL": "C.UTF-8", "LC_MESSAGES": "POSIX"}) == "en-GB"
    assert user_locale("", {}) is None
    assert user_locale("ja_JP", env) == "ja-JP"  # the config wins


def test_the_setting_refuses_what_is_no_locale() -> None:
    setting = SETTINGS["locale"]
    assert setting.default == ""
    assert setting.check("de_DE.UTF-8") is None and setting.check("") is None
    assert "must be a locale" in setting.check("klingon!")
