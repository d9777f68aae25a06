"""The person's locale, as tools are told it (``ctx.getChatContext().locale``).

The ``locale`` setting wins when set; otherwise the environment says it, in POSIX
order: ``LC_ALL``, ``LC_MESSAGES``, ``LANG``. POSIX names (``pt_BR.UTF-8``,
``sr_RS@latin``) become BCP 47 tags, as ``Intl`` takes them (``pt-BR``, ``sr-RS``).
``C`` and ``POSIX`` name no language, so the next variable is asked. This module
imports nothing of workbench.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

ENV_ORDER = ("LC_ALL", "LC_MESSAGES", "LANG")
"""The variables that say the locale, first wins."""

_POSIX = re.compile(r"^(?P<language>[A-Za-z]{2,3})(?:[_-](?P<rest>[A-Za-z0-9]{2,8}(?:[_-][A-Za-z0-9]{1,8})*))?"
                    r"(?:\.[^@]*)?(?:@.*)?$")


def to_tag(value: str) -> str | None:
    """A locale name as a BCP 47 tag (``en_US.UTF-8`` → ``en-US``), or ``None`` for one
    that names no language (``C``, ``POSIX``, empty) or is not a locale name."""
    match = _POSIX.match(value.strip())
    if match is None or value.strip().upper() in ("C", "POSIX"):
        return None
    language = match["language"].lower()
    if not match["rest"]:
        return language
    parts = re.split(r"[_-]", match["rest"])
    shaped = [part.upper() if len(part) == 2 or part.isdigit() else
              part.title() if len(part) == 4 else part.lower() for part in parts]
    return "-".join([language, *shaped])


def user_locale(configured: str, env: Mapping[str, str]) -> str | None:
    """The person's locale: the ``locale`` setting, else the environment's (see the
    module docstring); ``None`` only when neither names one."""
    if configured.strip():
        return to_tag(configured)
    for name in ENV_ORDER:
        tag = to_tag(env.get(name, "") or "")
        if tag is not None:
            return tag
    return None
