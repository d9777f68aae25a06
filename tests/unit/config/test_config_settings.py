"""The settings table: types, checks, and values typed on the command line."""

from __future__ import annotations

import pytest

from workbench.config.settings import SETTINGS, format_value, lookup, parse_value, validate
from workbench.errors import ConfigError, ExitCode, UnknownSettingError


def test_defaults_have_their_declared_types() -> None:
    for setting in SETTINGS.values():
        assert validate(setting.key, setting.default) == setting.default
    assert SETTINGS["model"].default == "auto"
    assert SETTINGS["tools.timeout_ms"].default == 300_000
    assert SETTINGS["headless.delegate_timeout_s"].default == 30.0


def test_unknown_key_is_a_usage_error_with_a_suggestion() -> None:
    with pytest.raises(UnknownSettingError) as caught:
        lookup("tools.timeout")
    assert caught.value.exit_code == ExitCode.USAGE
    assert "tools.timeout_ms" in str(caught.value)


@pytest.mark.parametrize(("key", "value"), [
    ("tools.timeout_ms", "5"),
    ("tools.timeout_ms", True),
    ("tools.timeout_ms", 1.5),
    ("extensions.enabled", 1),
    ("model", 3),
    ("headless.allowlist", "a,b"),
    ("headless.allowlist", ["a", 2]),
    ("headless.delegate_timeout_s", "3"),
])
def test_wrong_types_are_refused(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        validate(key, value, where="here.toml:3")


def test_numbers_accept_integers() -> None:
    assert validate("headless.delegate_timeout_s", 5) == 5.0
    assert isinstance(validate("headless.delegate_timeout_s", 5), float)


@pytest.mark.parametrize("policy", ["deny", "allowlisted", "delegate:my-approver --json"])
def test_approval_policies_accepted(policy: str) -> None:
    assert validate("headless.approvals", policy) == policy


@pytest.mark.parametrize("policy", ["allow", "delegate:", "delegate:  ", "Deny"])
def test_approval_policies_refused(policy: str) -> None:
    with pytest.raises(ConfigError, match="deny"):
        validate("headless.approvals", policy)


def test_positive_numbers_required() -> None:
    with pytest.raises(ConfigError, match="greater than zero"):
        validate("tools.timeout_ms", 0)


@pytest.mark.parametrize(("text", "expected"), [
    ("true", True), ("Yes", True), ("1", True), ("on", True),
    ("false", False), ("no", False), ("0", False), ("OFF", False),
])
def test_parse_bool(text: str, expected: bool) -> None:
    assert parse_value("extensions.enabled", text) is expected


def test_parse_bool_refuses_other_words() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_value("extensions.enabled", "maybe")
    assert caught.value.exit_code == ExitCode.USAGE


def test_parse_numbers() -> None:
    assert parse_value("tools.timeout_ms", "60_000") == 60_000
    assert parse_value("headless.delegate_timeout_s", "2.5") == 2.5
    with pytest.raises(ConfigError, match="an integer"):
        parse_value("tools.timeout_ms", "1.5")


def test_parse_lists() -> None:
    assert parse_value("headless.allowlist", '["fs.read", "web.get"]') == ["fs.read", "web.get"]
    assert parse_value("headless.allowlist", "fs.read, web.get") == ["fs.read", "web.get"]
    assert parse_value("headless.allowlist", "") == []
    with pytest.raises(ConfigError, match="JSON"):
        parse_value("headless.allowlist", '["unclosed"')
    with pytest.raises(ConfigError, match="strings"):
        parse_value("headless.allowlist", "[1, 2]")


def test_parse_strings_keep_text() -> None:
    assert parse_value("model", "scripted:run.json") == "scripted:run.json"


def test_format_value() -> None:
    assert format_value(True) == "true"
    assert format_value(["a"]) == '["a"]'
    assert format_value(30.0) == "30.0"
    assert format_value("echo") == "echo"
