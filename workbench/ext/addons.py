"""The first-party add-ons shipped with workbench, and the tool namespace kept for them.

An add-on is an ordinary Loca extension in ``extensions/<id>/`` of the package, whose
``loca.json`` names it ``<id>``; ``builtin`` (the signed built-in) and ``samples`` (the
development showcase) are shipped there too but are not add-ons. It installs and loads
exactly as any extension does; what the catalog adds is:

- a source: ``workbench ext install calendar`` (a bare id of the catalog, or
  ``addon:calendar``, or the shipped folder's path) installs the shipped folder, and
  the store records the source ``addon:<id>``;
- a namespace: the tools of an extension installed from that source are offered as
  ``addon__<id>__<tool>`` (``workbench.precedence``), a name no other
  extension, MCP server or plugin can take.

This module imports nothing of ours but the leaf that keeps the namespace (``precedence``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from workbench.precedence import ADDON_ID_PATTERN as ID_PATTERN

ADDONS_DIR = Path(__file__).resolve().parents[2] / "extensions"
"""Where the package ships its extensions: the add-ons, ``builtin`` and ``samples``."""

NOT_ADDONS = frozenset({"builtin", "samples"})
"""Shipped folders that are not add-ons (the signed built-in and the samples)."""

SOURCE_PREFIX = "addon:"
"""How a source string names a shipped add-on, and how the store records one."""



@dataclass(frozen=True)
class ShippedAddon:
    """One add-on of the catalog.

    Attributes:
        id: Its id, the ``name`` of its manifest and of its folder.
        display_name: The name shown to people.
        description: What it gives, from its manifest.
        folder: The shipped folder it installs from.
    """

    id: str
    display_name: str
    description: str
    folder: Path

    @property
    def source(self) -> str:
        """The source string the store records for it."""
        return f"{SOURCE_PREFIX}{self.id}"


def catalog(root: Path | None = None) -> list[ShippedAddon]:
    """The shipped add-ons, by id: every ``root/<id>/loca.json`` that names itself
    ``<id>`` (a folder whose manifest cannot be read, or names another, is left out:
    installing it names the problem)."""
    root = ADDONS_DIR if root is None else root
    found: list[ShippedAddon] = []
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []
    for folder in folders:
        if folder.name in NOT_ADDONS or not ID_PATTERN.fullmatch(folder.name):
            continue
        try:
            data = json.loads((folder / "loca.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("name") != folder.name:
            continue
        found.append(ShippedAddon(
            id=folder.name, display_name=str(data.get("displayName") or folder.name),
            description=str(data.get("description") or ""), folder=folder))
    return found


def find(addon_id: str, root: Path | None = None) -> ShippedAddon | None:
    """The shipped add-on ``addon_id``, or None."""
    if not ID_PATTERN.fullmatch(addon_id):
        return None
    return next((a for a in catalog(root) if a.id == addon_id), None)


def shipped_folder_of(path: Path, root: Path | None = None) -> ShippedAddon | None:
    """The add-on whose shipped folder ``path`` is (resolved), or None."""
    try:
        resolved = path.resolve()
    except OSError:
        return None
    if resolved.parent != (ADDONS_DIR if root is None else root).resolve():
        return None
    return find(resolved.name, root)


def addon_of(source: str, name: str) -> bool:
    """Whether an installed extension ``name`` recorded with ``source`` is the
    first-party add-on of that id (its tools then take the namespace)."""
    return source == f"{SOURCE_PREFIX}{name}" and bool(ID_PATTERN.fullmatch(name))


@dataclass(frozen=True)
class AddonRow:
    """A shipped add-on as both faces list it (``workbench ext addons``, the
    Extensions screen's Marketplace).

    Attributes:
        id: Its id (what ``workbench ext install`` takes).
        display_name: The name shown to people.
        description: What it gives.
        installed: Whether it is installed in this home (from its shipped folder).
        version: The installed version, or empty.
    """

    id: str
    display_name: str
    description: str
    installed: bool
    version: str = ""

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "display_name": self.display_name,
                "description": self.description, "installed": self.installed,
                "version": self.version, "install": f"workbench ext install {self.id}"}
