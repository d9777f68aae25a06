"""The table of known settings: each key's type, default and one line of help.

A dotted key (``tools.timeout_ms``) is a key inside a TOML table (``[tools]``).
Values are checked here, whether they come from a file or from the command line;
the callers say where the value came from so an error can name it.

This module must not import tomlkit or touch files; it imports only ``workbench.errors``.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.errors import ConfigError, ExitCode, UnknownSettingError

_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list of strings",
}


@dataclass(frozen=True)
class Setting:
    """One known setting.

    Attributes:
        key: The dotted name, e.g. ``tools.timeout_ms``.
        type: One of ``str``, ``int``, ``float``, ``bool`` or ``list`` (of strings).
        default: The value when no config file sets it.
        help: One line saying what it does.
        check: Extra rule beyond the type: returns a problem, or None when the value is fine.
    """

    key: str
    type: type
    default: Any
    help: str
    check: Callable[[Any], str | None] | None = None

    @property
    def type_name(self) -> str:
        """The type in words, for messages (``an integer``)."""
        return _TYPE_NAMES[self.type]


def _positive(value: int | float) -> str | None:
    return None if value > 0 else "must be greater than zero"


def _approval_policy(value: str) -> str | None:
    if value in ("deny", "allowlisted"):
        return None
    if value.startswith("delegate:") and value[len("delegate:"):].strip():
        return None
    return "must be 'deny', 'allowlisted' or 'delegate:COMMAND'"


def _http_url(value: str) -> str | None:
    scheme, sep, rest = value.partition("://")
    if sep and scheme in ("http", "https") and rest.strip("/"):
        return None
    return "must be an http:// or https:// URL"


def _no_empty_items(value: list[str]) -> str | None:
    return "must not contain empty names" if any(not item.strip() for item in value) else None


SETTINGS: dict[str, Setting] = {
    setting.key: setting
    for setting in (
        Setting("model", str, "echo", "The model new chats use, e.g. 'echo' or 'scripted:FILE'."),
        Setting("theme", str, "workbench-dark", "The TUI theme."),
        Setting("tools.timeout_ms", int, 300_000,
                "How long one tool call may run, in milliseconds.", _positive),
        Setting("tools.max_output_bytes", int, 1_048_576,
                "The largest tool result kept, in bytes.", _positive),
        Setting("extensions.enabled", bool, True,
                "Load extensions; when off, extension diagnostics still run."),
        Setting("extensions.samples", bool, False,
                "Load the samples extension (one small tool per ctx capability), for development."),
        Setting("extensions.registry", str, "https://registry.npmjs.org",
                "The npm registry extensions are searched for and installed from.",
                _http_url),
        Setting("headless.approvals", str, "deny",
                "How headless runs answer permission requests: "
                "deny, allowlisted or delegate:COMMAND.", _approval_policy),
        Setting("headless.allowlist", list, [],
                "Tools a headless run may use without asking, when approvals is allowlisted.",
                _no_empty_items),
        Setting("headless.delegate_timeout_s", float, 30.0,
                "How long a delegate command may take to answer, in seconds.", _positive),
        Setting("sandbox.memory_mb", int, 1024,
                "The memory one tool worker may use, in MiB.", _positive),
        Setting("sandbox.keep_warm", bool, True,
                "Start each tool's next worker ahead of its call (never shared between calls)."),
        Setting("sandbox.unsandboxed_tools", list, [],
                "Tools you allow to run WITHOUT the sandbox where this machine cannot provide "
                "one (EXTENSION.TOOL); empty means such tools are refused.", _no_empty_items),
        Setting("hooks.budget_ms", int, 2000,
                "How long one hook handler may run before its worker is killed.", _positive),
        Setting("speech.tts", bool, False, "Text-to-Speech for tools (needs espeak-ng)."),
        Setting("speech.stt", bool, False, "Speech-to-Text for tools (needs pocketsphinx)."),
    )
}
"""Every known setting by its dotted key, in the order ``config list`` shows them."""

TABLES: frozenset[str] = frozenset(
    key.rsplit(".", 1)[0] for key in SETTINGS if "." in key
)
"""The TOML tables that hold settings (``tools``, ``extensions``, ``headless``)."""


def lookup(key: str) -> Setting:
    """The setting named ``key``.

    Args:
        key: A dotted setting name.

    Returns:
        The setting.

    Raises:
        UnknownSettingError: When no setting has that name (exit code 2).
    """
    try:
        return SETTINGS[key]
    except KeyError:
        raise UnknownSettingError(unknown_key_message(key)) from None


def unknown_key_message(key: str) -> str:
    """A message for an unknown key, suggesting the closest known one."""
    close = difflib.get_close_matches(key, list(SETTINGS), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "; run `workbench config list` to see them"
    return f"unknown setting {key!r}{hint}"


def describe(value: Any) -> str:
    """Say what a value is, in TOML's words, for error messages."""
    if isinstance(value, bool):
        kind = "boolean"
    elif isinstance(value, int):
        kind = "integer"
    elif isinstance(value, float):
        kind = "float"
    elif isinstance(value, str):
        kind = "string"
    elif isinstance(value, list):
        kind = "array"
    elif isinstance(value, dict):
        return "a table"
    else:
        kind = type(value).__name__
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}"


def validate(key: str, value: Any, *, where: str | None = None) -> Any:
    """Check a value against its setting and return it in the setting's type.

    Integers are accepted where a number (float) is expected; nothing else is converted.

    Args:
        key: A known setting name.
        value: The value, as read from TOML or given by code.
        where: The file (and line) the value came from, for the error.

    Returns:
        The value, normalized (a float for number settings, a fresh list for lists).

    Raises:
        UnknownSettingError: When ``key`` is not a known setting.
        ConfigError: When the value has the wrong type or breaks the setting's rule.
    """
    setting = lookup(key)
    normalized = _coerce(setting, value)
    if normalized is None:
        raise ConfigError(
            f"setting {key!r} must be {setting.type_name}, not {describe(value)}", where=where)
    if setting.check is not None:
        problem = setting.check(normalized)
        if problem:
            raise ConfigError(f"setting {key!r} {problem} (got {describe(value)})", where=where)
    return normalized


def _coerce(setting: Setting, value: Any) -> Any:
    """The value in the setting's type, or None when it has the wrong type."""
    if setting.type is bool:
        return value if isinstance(value, bool) else None
    if setting.type is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if setting.type is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value) if math.isfinite(value) else None
    if setting.type is str:
        return value if isinstance(value, str) else None
    if setting.type is list:
        if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
            return list(value)
        return None
    raise TypeError(f"setting {setting.key!r} has an unsupported type {setting.type!r}")


_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})


def parse_value(key: str, text: str) -> Any:
    """Read a value typed on the command line, by the setting's type.

    Booleans accept true/false, yes/no, on/off and 1/0. Lists accept a JSON array
    (``["a", "b"]``) or comma-separated names (``a, b``); an empty string is an
    empty list.

    Args:
        key: A known setting name.
        text: The value as typed.

    Returns:
        The checked value in the setting's type.

    Raises:
        UnknownSettingError: When ``key`` is not a known setting.
        ConfigError: When the text is not a valid value (exit code 2).
    """
    setting = lookup(key)
    raw = text.strip()
    value: Any
    try:
        if setting.type is bool:
            word = raw.lower()
            if word in _TRUE_WORDS:
                value = True
            elif word in _FALSE_WORDS:
                value = False
            else:
                raise ValueError("expected true/false, yes/no, on/off or 1/0")
        elif setting.type is int:
            value = int(raw.replace("_", ""))
        elif setting.type is float:
            value = float(raw.replace("_", ""))
        elif setting.type is list:
            value = _parse_list(raw)
        else:
            value = text
    except ValueError as exc:
        raise ConfigError(f"{text!r} is not {setting.type_name} for {key!r}: {exc}",
                          exit_code=ExitCode.USAGE) from None
    try:
        return validate(key, value)
    except ConfigError as exc:
        raise ConfigError(exc.message, exit_code=ExitCode.USAGE) from None


def _parse_list(raw: str) -> list[str]:
    if raw.startswith("["):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON array ({exc.msg})") from None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError("the JSON array must hold only strings")
        return value
    return [item.strip() for item in raw.split(",") if item.strip()]


def format_value(value: Any) -> str:
    """Show a value the way it would be typed: ``true``, ``30.0``, ``["a", "b"]``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)
