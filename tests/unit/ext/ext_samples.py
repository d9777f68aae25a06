"""Sample extensions and archives for the extension tests, and snapshots of the home and
of the store's extension tables."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import extension_folders

from workbench.store import Store

DEFAULT_PERMISSIONS: dict[str, Any] = {
    "read": [{"path": "$home/Documents", "reason": "Read the notes you point at."}],
    "net": [{"host": "example.com", "ports": [443], "reason": "Fetch the page you ask for."}],
}


def tool(name: str, permissions: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool entry for ``loca.json`` whose function has the tool's name."""
    entry: dict[str, Any] = {
        "name": name, "description": f"Do {name}. Use when asked to {name}.",
        "parameters": {"type": "object", "properties": {}}, "function": name}
    if permissions:
        entry["permissions"] = permissions
    return entry


def write_extension(folder: Path, *, name: str = "loca-extension-foo",
                    version: str | None = "1.0.0", tools: list[dict[str, Any]] | None = None,
                    files: dict[str, str] | None = None, manifest: dict[str, Any] | None = None,
                    ) -> Path:
    """Write a valid Python extension into ``folder`` and return the folder; its
    ``package.json`` (unless ``version`` is None) names it a ``loca-extension``."""
    tools = [tool("foo", DEFAULT_PERMISSIONS)] if tools is None else tools
    package = {} if version is None else {"package.json": json.dumps(
        {"name": name, "version": version, "keywords": ["loca-extension"]})}
    code = "".join(f"def {entry['function']}(args, ctx):\n    return {{'tool': "
                   f"{entry['name']!r}}}\n\n\n" for entry in tools) or "VALUE = 1\n"
    return extension_folders.write_extension(
        folder, name, tools, code=code,
        files={**package, **(files or {})},
        manifest={"displayName": name.replace("-", " ").title(), **(manifest or {})})


def folder_members(folder: Path, prefix: str) -> Iterator[tuple[str, Path]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield prefix + path.relative_to(folder).as_posix(), path


def make_tgz(folder: Path, archive: Path, *, prefix: str = "package/") -> Path:
    """Pack ``folder`` as ``npm pack`` does: every file under ``package/``."""
    with tarfile.open(archive, "w:gz") as tar:
        for name, path in folder_members(folder, prefix):
            tar.add(path, arcname=name)
    return archive


def make_zip(folder: Path, archive: Path, *, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for name, path in folder_members(folder, prefix):
            zf.write(path, name)
    return archive


def tar_with(archive: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    """A .tgz holding exactly the given members (data for regular files)."""
    with tarfile.open(archive, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return archive


def file_info(name: str, mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (except the store's own files) with its kind and content."""
    found: dict[str, str] = {}
    if not root.exists():
        return found
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            if relative.startswith("workbench.db"):
                continue
            if path.is_symlink():
                found[relative] = "link:" + os.readlink(path)
            elif path.is_dir():
                found[relative] = "dir"
            else:
                found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def extension_rows(store: Store) -> dict[str, list[dict[str, Any]]]:
    """The extension tables of the store (the audit log keeps its history by design)."""
    return {
        "extensions": store._all("SELECT * FROM extensions ORDER BY name"),
        "extension_files": store._all("SELECT * FROM extension_files ORDER BY extension, path"),
        "extension_consents": store._all("SELECT * FROM extension_consents ORDER BY extension"),
    }


def yes(_plan: object) -> bool:
    return True


def no(_plan: object) -> bool:
    return False
