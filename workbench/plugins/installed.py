"""The installed plugins, one folder each under ``<home>/plugins/<id>/``::

    code/            a copy of the plugin's folder, as installed (never written after)
    install.json     version, where it came from, the capabilities the owner approved
    data/<project>/  each project's instance's own data (kept on remove; ``--purge``)
    run/<project>/   each instance's secret, token and log (the host's, not the plugin's)

Install copies a folder after checking its manifest and its files: regular files and
folders only (a link could lead anywhere), at most ``MAX_BYTES`` and ``MAX_FILES``, and
no name a terminal would show falsely. It is made beside its place and renamed into
it, so a failed install leaves nothing half copied.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from workbench.errors import ExitCode, WorkbenchError
from workbench.plugins.manifest import HIDDEN, PluginManifest, read

MAX_BYTES = 50 * 1024 * 1024
MAX_FILES = 5000


class PluginInstallError(WorkbenchError):
    """An install, upgrade or remove that cannot be made; nothing was changed."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message, where=where, exit_code=ExitCode.USAGE)


@dataclass(frozen=True)
class Installed:
    """One installed plugin."""

    manifest: PluginManifest
    root: Path
    approved: tuple[str, ...]
    installed_at: str
    source: str

    @property
    def code(self) -> Path:
        return self.root / "code"

    def data(self, project: str) -> Path:
        return self.root / "data" / project_slug(project)

    def run(self, project: str) -> Path:
        return self.root / "run" / project_slug(project)


def project_slug(project: str) -> str:
    """A folder name for a project: its base name and a digest of its whole path."""
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in Path(project).name)[:32] or "root"
    return f"{name}-{hashlib.sha256(project.encode()).hexdigest()[:12]}"


def file_key(path: Path) -> tuple[int, ...]:
    """A file's identity and version (device, inode, size, change times); empty when
    it is not there."""
    try:
        info = path.stat()
    except OSError:
        return ()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def check_tree(folder: Path) -> None:
    """Refuse a folder holding links, special files, hidden-character names, or too much.

    Raises:
        PluginInstallError: Naming the first such file.
    """
    total = files = 0
    for base, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = Path(base) / name
            if any(unicodedata.category(c) in HIDDEN for c in name) or len(name) > 255:
                raise PluginInstallError("a file name holds characters a terminal would hide or reorder",
                                         where=ascii(str(path)))
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                raise PluginInstallError("a symbolic link is not installed (it could lead anywhere)",
                                         where=str(path))
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                raise PluginInstallError("not a regular file or folder", where=str(path))
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
                files += 1
            if total > MAX_BYTES:
                raise PluginInstallError(f"the plugin's folder holds more than {MAX_BYTES // (1024 * 1024)} MB",
                                         where=str(folder))
            if files > MAX_FILES:
                raise PluginInstallError(f"the plugin's folder holds more than {MAX_FILES} files",
                                         where=str(folder))


class PluginStore:
    """The plugins installed in one home (``<home>/plugins``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._read: dict[str, tuple[tuple[int, ...], Installed]] = {}
        """What was read of each plugin, by the identity of its two files then."""

    def get(self, plugin: str) -> Installed | None:
        """The installed plugin (its manifest read again only when a file changed)."""
        folder = self.root / plugin
        key = file_key(folder / "install.json") + file_key(folder / "code" / "plugin.json")
        cached = self._read.get(plugin)
        if cached is not None and cached[0] == key:
            return cached[1]
        found = self._get(plugin, folder)
        if found is not None:
            self._read[plugin] = (key, found)
        else:
            self._read.pop(plugin, None)
        return found

    def _get(self, plugin: str, folder: Path) -> Installed | None:
        try:
            record = json.loads((folder / "install.json").read_text(encoding="utf-8"))
            manifest = read(folder / "code")
        except (OSError, ValueError, WorkbenchError):
            return None
        if manifest.id != plugin:
            return None
        return Installed(manifest, folder, tuple(record.get("approved", ())), str(record.get("installed_at", "")),
                         str(record.get("source", "")))

    def all(self) -> list[Installed]:
        if not self.root.is_dir():
            return []
        found = (self.get(entry.name) for entry in sorted(self.root.iterdir()) if entry.is_dir())
        return [plugin for plugin in found if plugin is not None]

    def problems(self) -> list[str]:
        """Installed folders that cannot be read (a damaged manifest, a missing record)."""
        if not self.root.is_dir():
            return []
        return [f"plugin folder {entry} cannot be read; `workbench plugin remove {entry.name}` removes it"
                for entry in sorted(self.root.iterdir())
                if entry.is_dir() and not entry.name.startswith(".") and self.get(entry.name) is None]

    def put(self, source: Path, manifest: PluginManifest, approved: tuple[str, ...], *,
            upgrade: bool) -> Installed:
        """Copy ``source`` in as ``manifest.id`` (in place of the old code on upgrade).

        Raises:
            PluginInstallError: Installed already (install) or not installed (upgrade),
                or its files are refused.
        """
        folder = self.root / manifest.id
        exists = (folder / "install.json").exists()
        if exists and not upgrade:
            raise PluginInstallError(f"plugin {manifest.id} is installed already; "
                                     f"`workbench plugin upgrade {source}` replaces it")
        if upgrade and not exists:
            raise PluginInstallError(f"plugin {manifest.id} is not installed; `workbench plugin install` it")
        check_tree(source)
        folder.mkdir(parents=True, exist_ok=True)
        staged = folder / f".code-{os.getpid()}"
        shutil.rmtree(staged, ignore_errors=True)
        try:
            shutil.copytree(source, staged, symlinks=True)
            read(staged)  # what was copied is what was checked
            old = folder / ".code-old"
            shutil.rmtree(old, ignore_errors=True)
            if (folder / "code").exists():
                (folder / "code").rename(old)
            staged.rename(folder / "code")
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
        record = {"id": manifest.id, "version": manifest.version, "approved": list(approved),
                  "installed_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "source": str(source)}
        temp = folder / ".install.json.tmp"
        temp.write_text(json.dumps(record, indent=2), encoding="utf-8")
        temp.replace(folder / "install.json")
        installed = self.get(manifest.id)
        assert installed is not None
        return installed

    def remove(self, plugin: str, *, purge: bool) -> bool:
        """Remove its code and record (and with ``purge`` its data); whether it was there."""
        folder = self.root / plugin
        if not folder.is_dir() or folder.parent != self.root:
            return False
        if purge:
            shutil.rmtree(folder)
            return True
        shutil.rmtree(folder / "code", ignore_errors=True)
        shutil.rmtree(folder / "run", ignore_errors=True)
        (folder / "install.json").unlink(missing_ok=True)
        return True
