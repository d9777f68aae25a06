"""The path rules of the manifest, and how an extension's entry module is found.

Three kinds of path appear in ``loca.json``: memory and entry paths, which must stay
inside the extension folder; and the paths of ``read``/``write`` permissions, which are
absolute or start with a template the host expands. The rules live here, as plain
functions raising ``ValueError``, so the models, the validator and the published JSON
Schema share them. This module imports nothing of workbench.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal, NamedTuple

Runtime = Literal["deno", "python"]
"""How an entry module runs: under Deno (TypeScript/JavaScript) or in Python."""

PATH_TEMPLATES: tuple[str, ...] = ("$home", "$downloads", "$models", "$sessions", "$extension",
                                   "$data", "$project")
"""The fixed templates a permission path may start with; ``$env.VAR`` is one more.
``$project`` (the folder the chat belongs to) and ``$data`` (the extension's own data
folder under the workbench's home) are Workbench additions to the Loca format: other
hosts may not know them (``ext validate`` says so)."""

WORKBENCH_TEMPLATES: tuple[str, ...] = ("$data", "$project")
"""The templates of :data:`PATH_TEMPLATES` that Workbench adds to the Loca format."""

ENTRY_CANDIDATES: tuple[str, ...] = ("index.ts", "index.js", "mod.ts", "main.py")
"""Where the host looks for the entry module, in order, when the manifest names none and
neither ``deno.json`` nor ``package.json`` names one (see :func:`entry_candidates`)."""

EXPORT_CONDITIONS: tuple[str, ...] = ("deno", "import", "default")
"""The conditions of a conditional ``exports`` the host follows, in order (as Deno does;
``require`` and ``types`` name nothing it runs)."""

RUNTIME_BY_SUFFIX: dict[str, Runtime] = {
    ".ts": "deno", ".js": "deno", ".mts": "deno", ".mjs": "deno", ".tsx": "deno", ".jsx": "deno",
    ".py": "python",
}
"""The runtime each entry-module suffix implies."""

RELATIVE_PATH_PATTERN = r"^(?![/\\])(?![A-Za-z]:)(?!(?:.*[/\\])?\.\.(?:[/\\]|$)).+$"
"""ECMA-262 form of :func:`check_relative_path`, published in the JSON Schema."""

ENTRY_PATH_PATTERN = RELATIVE_PATH_PATTERN[:-1] + r"\.(?:ts|js|mts|mjs|tsx|jsx|py)$"
"""ECMA-262 form of the entry path rule: a relative path with a known suffix."""

PERMISSION_PATH_PATTERN = (
    r"^(?!(?:.*[/\\])?\.\.(?:[/\\]|$))"
    r"(?:/|[A-Za-z]:[/\\]|\\\\"
    r"|\$(?:home|downloads|models|sessions|extension|data|project)(?:/|$)"
    r"|\$env\.[A-Za-z_][A-Za-z0-9_]*(?:/|$))"
)
"""ECMA-262 form of :func:`check_permission_path`, published in the JSON Schema."""

_SEPARATORS = re.compile(r"[/\\]")
_DRIVE = re.compile(r"^[A-Za-z]:")
_ENV_TEMPLATE = re.compile(r"^\$env\.[A-Za-z_][A-Za-z0-9_]*$")


def _segments(value: str) -> list[str]:
    return _SEPARATORS.split(value)


def check_relative_path(value: str) -> str:
    """Check a path that must stay inside the extension folder.

    Args:
        value: A memory or entry path from the manifest.

    Returns:
        The path, unchanged.

    Raises:
        ValueError: The path is empty, absolute, starts with a drive letter or a
            slash or backslash, or has a ``..`` segment.
    """
    if not value:
        raise ValueError("the path must not be empty")
    if "\x00" in value:
        raise ValueError("the path must not contain a NUL character")
    if value[0] in "/\\":
        raise ValueError(f"{value!r} must be relative to the extension folder, "
                         "not start with '/' or '\\'")
    if _DRIVE.match(value):
        raise ValueError(f"{value!r} must be relative to the extension folder, "
                         "not start with a drive letter")
    if ".." in _segments(value):
        raise ValueError(f"{value!r} must not contain a '..' segment")
    return value


def check_permission_path(value: str) -> str:
    """Check the path of a ``read`` or ``write`` permission.

    A valid path is absolute (``/…``, ``C:\\…``, ``\\\\server\\…``) or starts with one of
    :data:`PATH_TEMPLATES` or ``$env.VAR``, optionally followed by ``/subpath``. A ``..``
    segment is refused everywhere: it would make the path a person is asked to grant
    read differently from the one the tool gets.

    Args:
        value: The ``path`` of a permission entry.

    Returns:
        The path, unchanged.

    Raises:
        ValueError: The path is relative, uses an unknown template, or has a ``..`` segment.
    """
    if not value:
        raise ValueError("the path must not be empty")
    if "\x00" in value:
        raise ValueError("the path must not contain a NUL character")
    if ".." in _segments(value):
        raise ValueError(f"{value!r} must not contain a '..' segment")
    if value.startswith("/") or value.startswith("\\\\") or re.match(r"^[A-Za-z]:[/\\]", value):
        return value
    if value.startswith("$"):
        head = value.split("/", 1)[0]
        if head in PATH_TEMPLATES or _ENV_TEMPLATE.match(head):
            return value
        if head.startswith("$env."):
            raise ValueError(f"{head!r} must name an environment variable: "
                             "letters, digits and '_', not starting with a digit")
        raise ValueError(f"unknown path template {head!r}; use one of "
                         f"{', '.join(PATH_TEMPLATES)} or $env.VAR")
    raise ValueError(f"{value!r} is neither an absolute path nor a path starting with "
                     f"one of {', '.join(PATH_TEMPLATES)} or $env.VAR")


def runtime_for(path: str | Path) -> Runtime | None:
    """Return the runtime an entry module's suffix implies, or ``None`` for another suffix.

    Args:
        path: The entry module's path or file name.
    """
    return RUNTIME_BY_SUFFIX.get(Path(path).suffix)


class Entry(NamedTuple):
    """An extension's entry module, found on disk; unpacks as `path, runtime`."""

    path: Path
    """The module's absolute path."""
    runtime: Runtime
    """How it runs."""


def _read_json(path: Path) -> dict[str, Any] | None:
    """The object in a JSON file, or ``None`` when it is missing or not a JSON object
    (the file is the author's; the host never refuses an extension for it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _export_target(value: Any) -> str | None:
    """The module an ``exports`` value names for ``.``: a string, a map of subpaths
    (``{".": …}``), or conditions (``{"import": …, "default": …}``), nested."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return next((found for item in value if (found := _export_target(item))), None)
    if not isinstance(value, dict):
        return None
    if any(key.startswith(".") for key in value):
        return _export_target(value.get("."))
    for condition in EXPORT_CONDITIONS:
        if condition in value and (found := _export_target(value[condition])):
            return found
    return None


def _module_name(value: str) -> str:
    """``./mod.ts`` as a path relative to the folder: ``mod.ts``."""
    while value.startswith("./"):
        value = value[2:]
    return value


def entry_candidates(folder: Path) -> tuple[str, ...]:
    """Where the entry module may be, in the order a Deno or Node author expects.

    First the module ``deno.json`` exports (``"exports": "./mod.ts"`` or its ``"."``),
    then the one ``package.json`` names (``exports`` as a string, a ``"."`` map or
    conditions ``deno``/``import``/``default``, then ``main``, which may omit ``.js``),
    then :data:`ENTRY_CANDIDATES`. Names are relative to ``folder``; one that would leave
    it or has a suffix no runtime runs is left out.

    Args:
        folder: The extension folder.
    """
    names: list[str] = []
    deno = _read_json(folder / "deno.json")
    if deno is not None and (target := _export_target(deno.get("exports"))):
        names.append(_module_name(target))
    package = _read_json(folder / "package.json")
    if package is not None:
        if target := _export_target(package.get("exports")):
            names.append(_module_name(target))
        main = package.get("main")
        if isinstance(main, str) and main.strip():
            main = _module_name(main.strip()).rstrip("/")
            names += [main] if runtime_for(main) else [f"{main}.js", f"{main}/index.js"]
    names += ENTRY_CANDIDATES
    return tuple(dict.fromkeys(name for name in names if _inside(name) and runtime_for(name)))


def _inside(name: str) -> bool:
    try:
        check_relative_path(name)
    except ValueError:
        return False
    return True


def find_entry(folder: Path, entry: str | None) -> Entry | None:
    """Find an extension's entry module.

    Args:
        folder: The extension folder.
        entry: The manifest's ``entry`` field; when ``None`` the first existing file of
            :func:`entry_candidates` is used.

    Returns:
        The entry module, or ``None`` when it does not exist, has an unknown suffix, or
        resolves (through a symlink) outside ``folder``.
    """
    root = folder.resolve()
    names = (entry,) if entry is not None else entry_candidates(folder)
    for name in names:
        runtime = runtime_for(name)
        if runtime is None or "\x00" in name:
            continue
        candidate = (folder / name).resolve()
        if not candidate.is_relative_to(root) or not candidate.is_file():
            continue
        return Entry(path=candidate, runtime=runtime)
    return None
