"""Paths as a person reads them on screen: their own home folder written ``~``."""

from __future__ import annotations

from pathlib import Path


def shown_path(path: str | Path) -> str:
    """``path`` with the user's home folder written ``~`` (``~/notes``); other paths,
    and strings that are not paths (``npm:name``, ``builtin``), as they are."""
    text = str(path)
    if not text.startswith("/"):
        return text
    try:
        home = Path.home()
    except (KeyError, RuntimeError):
        return text
    try:
        relative = Path(text).relative_to(home)
    except ValueError:
        return text
    return "~" if relative == Path(".") else f"~/{relative.as_posix()}"
