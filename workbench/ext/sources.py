"""Where an extension is installed from: a folder, an archive, or a package on npm.

A source is given as one string: the id of a shipped add-on (``calendar``, or
``addon:calendar``; see ``workbench.ext.addons``), a folder path, a path to a ``.tgz``,
``.tar.gz`` or ``.zip`` file, or ``npm:NAME`` / ``npm:NAME@VERSION`` (``VERSION`` may be an exact
version, a dist-tag such as ``next``, or a semver range such as ``^1.2``). The
parsed :class:`Source` prints back as the string recorded in the store, with paths
made absolute, so ``ext update`` can fetch from the same place again.

This module imports nothing of ours but ``workbench.ext.errors`` and the add-ons' catalog.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from workbench.ext import addons
from workbench.ext.errors import SourceError

NPM_PREFIX = "npm:"
"""How a source string names a package on the npm registry."""

ARCHIVE_SUFFIXES: tuple[str, ...] = (".tgz", ".tar.gz", ".zip")
"""The archive files an extension can be installed from."""

NPM_NAME_PATTERN = re.compile(
    r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
"""A valid npm package name: lowercase, URL-safe, optionally under a ``@scope/``."""

MAX_NPM_NAME = 214
"""The longest package name npm accepts."""

SourceKind = Literal["folder", "archive", "npm", "addon"]


@dataclass(frozen=True)
class Source:
    """A parsed source string.

    Attributes:
        kind: ``folder``, ``archive``, ``npm`` or ``addon`` (a shipped add-on's folder).
        path: The absolute folder or archive path (``folder``, ``archive``, ``addon``).
        package: The npm package name (``npm``).
        spec: The requested version, dist-tag or range (``npm``); None means the
            ``latest`` dist-tag.
    """

    kind: SourceKind
    path: Path | None = None
    package: str | None = None
    spec: str | None = None

    def __str__(self) -> str:
        if self.kind == "npm":
            return f"{NPM_PREFIX}{self.package}" + (f"@{self.spec}" if self.spec else "")
        if self.kind == "addon":
            return f"{addons.SOURCE_PREFIX}{self.package}"
        return str(self.path)

    def unpinned(self) -> Source:
        """The same source without an exact version, to update from (npm only)."""
        return Source(self.kind, self.path, self.package, None) if self.kind == "npm" else self


def is_archive_name(name: str) -> bool:
    """Whether a file name ends in one of :data:`ARCHIVE_SUFFIXES` (any case)."""
    lowered = name.lower()
    return any(lowered.endswith(suffix) for suffix in ARCHIVE_SUFFIXES)


def parse_npm(text: str) -> Source:
    """Parse ``NAME`` or ``NAME@SPEC`` (the part after ``npm:``).

    Raises:
        SourceError: The name is not a valid npm package name or the spec is empty.
    """
    body = text.strip()
    at = body.find("@", 1)  # a leading "@" starts a scope, not a version
    name, spec = (body, None) if at < 0 else (body[:at], body[at + 1:].strip())
    if at >= 0 and not spec:
        raise SourceError(f"{NPM_PREFIX}{body}: nothing follows '@'; give a version, "
                          "a tag or a range, or leave out the '@'")
    if not name or len(name) > MAX_NPM_NAME or not NPM_NAME_PATTERN.match(name):
        raise SourceError(f"{NPM_PREFIX}{body}: {name!r} is not a valid npm package name "
                          "(lowercase letters, digits, '-', '.', '_' or '~', "
                          "optionally under @scope/)")
    return Source("npm", package=name, spec=spec)


def parse_source(text: str, *, cwd: Path | None = None) -> Source:
    """Parse a source string.

    Args:
        text: A folder, an archive path, or ``npm:NAME[@VERSION]``.
        cwd: The folder a relative path is taken from; the current folder when omitted.

    Returns:
        The source, with its path absolute.

    Raises:
        SourceError: The string names nothing that exists, or a file that is not an
            archive, or an invalid npm name (exit code 2).
    """
    raw = text.strip()
    if not raw:
        raise SourceError("no source given: pass a folder, a .tgz or .zip file, or npm:NAME")
    if raw.startswith(NPM_PREFIX):
        return parse_npm(raw[len(NPM_PREFIX):])
    if raw.startswith(addons.SOURCE_PREFIX):
        wanted = raw[len(addons.SOURCE_PREFIX):]
        shipped = addons.find(wanted)
        if shipped is None:
            known = ", ".join(a.id for a in addons.catalog()) or "none"
            raise SourceError(f"no shipped add-on has the id {wanted!r} (shipped: {known})")
        return Source("addon", path=shipped.folder, package=shipped.id)
    shipped = addons.find(raw)
    if shipped is not None:  # a bare id names the add-on; a folder of that name is ./ID
        return Source("addon", path=shipped.folder, package=shipped.id)
    base = cwd if cwd is not None else Path.cwd()
    path = Path(os.path.abspath(base / Path(raw).expanduser()))
    if path.is_dir():
        shipped = addons.shipped_folder_of(path)
        if shipped is not None:
            return Source("addon", path=shipped.folder, package=shipped.id)
        return Source("folder", path=path)
    if path.is_file():
        if not is_archive_name(path.name):
            raise SourceError(f"not an extension folder or a {', '.join(ARCHIVE_SUFFIXES)} "
                              "archive", where=str(path))
        return Source("archive", path=path)
    if path.exists():
        raise SourceError("neither a folder nor a regular file", where=str(path))
    raise SourceError("does not exist (for a package on the npm registry, write "
                      f"{NPM_PREFIX}{raw})", where=str(path))
