"""Bundle revisions on disk: ``<project>/.workbench/bundles/<id>/<sha256>/``.

A revision folder holds ``manifest.json`` (the manifest in the canonical encoding) and
``files/`` (each file at its path). It is written whole into a hidden folder beside its
place and renamed there, so a revision is either absent or complete; its files are
made read-only. Every path is opened beneath the project's folder with no link
followed (``sandbox/paths.py``): a link swapped in anywhere on the way is refused, never
written or read through.

Reading a revision (``snapshot``) takes its files into memory, refusing a link, a
device, a FIFO or anything not a regular file or a folder, and bounded as creation is;
then it recomputes the digest. A revision whose files no longer give the digest its
folder is named by is refused. What runs is staged from that snapshot alone, never
from the folder, so nothing swapped after the check is ever run.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from workbench.bundles.digest import canonical
from workbench.bundles.manifest import (
    MAX_DEPTH, MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, Bundle, BundleError, check_bundle,
    check_digest, check_id)
from workbench.sandbox.paths import open_at_beneath, open_nofollow

STORE = (".workbench", "bundles")
"""Where the revisions live, beneath the project's folder."""
MANIFEST = "manifest.json"
FILES = "files"
MAX_MANIFEST_BYTES = 256 * 1024

_DIR = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_dir(parent: int, name: str, *, create: bool = False) -> int:
    """The folder ``name`` in ``parent`` (no link followed), made when ``create``."""
    try:
        return os.open(name, _DIR, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
        try:
            os.mkdir(name, 0o755, dir_fd=parent)
        except FileExistsError:
            pass
        return os.open(name, _DIR, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise BundleError("", f"{name} is a link or not a folder; links are never followed "
                              "in the bundle store", kind="permission") from None
        raise


class BundleStore:
    """The revisions of one project folder (resolved, checked by the caller as a
    ``$project`` is)."""

    def __init__(self, project: str | Path) -> None:
        self.project = os.path.realpath(project)

    @property
    def folder(self) -> str:
        return os.path.join(self.project, *STORE)

    def _root(self, *, create: bool = False) -> int | None:
        try:
            top = open_nofollow(self.project, _DIR)
        except OSError as exc:
            raise BundleError("", f"the project folder {self.project} cannot be opened with no "
                              f"link followed: {exc.strerror}", kind="permission") from None
        try:
            fd = top
            for name in STORE:
                fd = _open_dir(top, name, create=create)
                os.close(top)
                top = fd
            return fd
        except FileNotFoundError:
            os.close(top)
            return None

    # --- writing ---------------------------------------------------------------------

    def create(self, bundle: Bundle) -> dict[str, Any]:
        """Store ``bundle`` as a revision; an existing one of that digest is checked and kept.

        Returns:
            ``{"id", "digest", "path", "created"}``.
        """
        root = self._root(create=True)
        assert root is not None
        try:
            folder = _open_dir(root, bundle.id, create=True)
            try:
                try:
                    os.stat(bundle.digest, dir_fd=folder, follow_symlinks=False)
                except FileNotFoundError:
                    pass
                else:
                    self.snapshot(bundle.id, bundle.digest)
                    return self._answer(bundle, created=False)
                hidden = f".new-{secrets.token_hex(8)}"
                os.mkdir(hidden, 0o700, dir_fd=folder)
                try:
                    self._write(folder, hidden, bundle)
                    os.chmod(hidden, 0o755, dir_fd=folder)
                    os.rename(hidden, bundle.digest, src_dir_fd=folder, dst_dir_fd=folder)
                except BaseException:
                    _remove_tree(folder, hidden)
                    raise
            finally:
                os.close(folder)
        finally:
            os.close(root)
        return self._answer(bundle, created=True)

    def _answer(self, bundle: Bundle, *, created: bool) -> dict[str, Any]:
        return {"id": bundle.id, "digest": bundle.digest, "kind": bundle.kind, "created": created,
                "path": os.path.join(self.folder, bundle.id, bundle.digest)}

    @staticmethod
    def _write(folder: int, hidden: str, bundle: Bundle) -> None:
        revision = os.open(hidden, _DIR, dir_fd=folder)
        try:
            _write_file(revision, MANIFEST, canonical(bundle.manifest))
            os.mkdir(FILES, 0o755, dir_fd=revision)
            files = os.open(FILES, _DIR, dir_fd=revision)
            try:
                for name in sorted(bundle.files):
                    parent = files
                    opened = []
                    for part in name.split("/")[:-1]:
                        parent = _open_dir(parent, part, create=True)
                        opened.append(parent)
                    try:
                        _write_file(parent, name.rsplit("/", 1)[-1], bundle.files[name].encode())
                    finally:
                        for fd in opened:
                            os.close(fd)
            finally:
                os.close(files)
        finally:
            os.close(revision)

    # --- reading ---------------------------------------------------------------------

    def snapshot(self, bundle_id: str, digest: str) -> Bundle:
        """The revision ``bundle_id``/``digest`` read into memory and checked against its
        digest (see the module docstring).

        Raises:
            BundleError: ``not_found`` when there is no such revision; ``permission``
                when it holds a link or another kind of file, or no longer matches its digest.
        """
        check_id(bundle_id)
        check_digest(digest)
        root = self._root()
        if root is None:
            raise BundleError("id", f"there is no bundle {bundle_id!r} in {self.project}", kind="not_found")
        try:
            try:
                revision = open_at_beneath(root, f"{bundle_id}/{digest}", _DIR)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    raise BundleError("digest", f"bundle {bundle_id!r} has no revision {digest}",
                                      kind="not_found") from None
                raise BundleError("digest", f"the revision {bundle_id}/{digest} cannot be opened "
                                  f"with no link followed: {exc.strerror}", kind="permission") from None
        finally:
            os.close(root)
        try:
            manifest = _parse(_read(revision, MANIFEST, MAX_MANIFEST_BYTES), MANIFEST)
            files = _read_tree(revision)
        finally:
            os.close(revision)
        try:
            found = check_bundle({"manifest": manifest, "files": files})
        except BundleError as exc:
            raise BundleError("digest", f"the revision {bundle_id}/{digest} is no longer a valid "
                              f"bundle ({exc}); it is refused", kind="permission") from None
        if found.digest != digest or found.id != bundle_id:
            raise BundleError("digest", f"the files of {bundle_id}/{digest} no longer match its "
                              f"digest (they give {found.digest}): the revision was changed after "
                              "it was created, and it is refused", kind="permission")
        return found

    def revisions(self) -> list[tuple[str, str, float]]:
        """``(id, digest, created time)`` of every revision folder, by id then time."""
        root = self._root()
        if root is None:
            return []
        found = []
        listing = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        listed = os.open(".", listing, dir_fd=root)
        try:
            with os.scandir(listed) as ids:
                for entry in ids:
                    if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                        continue
                    try:
                        folder = os.open(entry.name, listing, dir_fd=root)
                    except OSError:
                        continue
                    try:
                        with os.scandir(folder) as revisions:
                            for revision in revisions:
                                if revision.name.startswith("."):
                                    continue
                                found.append((entry.name, revision.name,
                                              revision.stat(follow_symlinks=False).st_mtime))
                    finally:
                        os.close(folder)
        finally:
            os.close(listed)
            os.close(root)
        return sorted(found, key=lambda row: (row[0], row[2], row[1]))


def _write_file(folder: int, name: str, data: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o444, dir_fd=folder)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _read(folder: int, name: str, limit: int) -> bytes:
    try:
        fd = open_at_beneath(folder, name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        raise BundleError("digest", f"{name} of the revision cannot be read with no link "
                          f"followed: {exc.strerror}", kind="permission") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BundleError("digest", f"{name} in the revision is not a regular file; refused",
                              kind="permission")
        if info.st_size > limit:
            raise BundleError("digest", f"{name} in the revision is larger than {limit} bytes; refused",
                              kind="permission")
        data = os.read(fd, limit + 1)
        if len(data) > limit:
            raise BundleError("digest", f"{name} grew past {limit} bytes; refused", kind="permission")
        return data
    finally:
        os.close(fd)


def _parse(data: bytes, name: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError("digest", f"{name} of the revision is not JSON ({exc}); refused",
                          kind="permission") from None


def _read_tree(revision: int) -> dict[str, str]:
    """Every file under ``files/``, by its path; a link or special file refused."""
    try:
        top = os.open(FILES, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=revision)
    except OSError as exc:
        raise BundleError("digest", f"the revision's files/ cannot be opened with no link followed: "
                          f"{exc.strerror}; refused", kind="permission") from None
    files: dict[str, str] = {}
    total = 0
    try:
        for folder, dirs, names, dir_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            depth = 0 if folder == "." else folder.count("/")
            if depth >= MAX_DEPTH:
                raise BundleError("digest", f"{folder} is nested too deep; refused", kind="permission")
            for name in list(dirs) + list(names):
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                relative = os.path.normpath(os.path.join(folder, name))
                if stat.S_ISLNK(info.st_mode):
                    raise BundleError("digest", f"{relative} in the revision is a symbolic link; "
                                      "links are never followed: refused", kind="permission")
                if name in dirs:
                    if not stat.S_ISDIR(info.st_mode):
                        raise BundleError("digest", f"{relative} is not a folder; refused", kind="permission")
                    continue
                if not stat.S_ISREG(info.st_mode):
                    raise BundleError("digest", f"{relative} in the revision is not a regular file; "
                                      "refused", kind="permission")
                if len(files) >= MAX_FILES:
                    raise BundleError("digest", f"the revision holds more than {MAX_FILES} files; "
                                      "refused", kind="permission")
                data = _read(dir_fd, name, MAX_FILE_BYTES)
                total += len(data)
                if total > MAX_TOTAL_BYTES:
                    raise BundleError("digest", f"the revision's files pass {MAX_TOTAL_BYTES} bytes; "
                                      "refused", kind="permission")
                try:
                    files[relative] = data.decode("utf-8")
                except UnicodeDecodeError:
                    raise BundleError("digest", f"{relative} is not UTF-8 text; refused",
                                      kind="permission") from None
    finally:
        os.close(top)
    return files


def _remove_tree(parent: int, name: str) -> None:
    """Remove the folder ``name`` of ``parent`` (one of our own, half written)."""
    try:
        top = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return
    try:
        for _folder, dirs, names, dir_fd in os.fwalk(".", dir_fd=top, topdown=False, follow_symlinks=False):
            for entry in names:
                os.unlink(entry, dir_fd=dir_fd)
            for entry in dirs:
                os.rmdir(entry, dir_fd=dir_fd)
    finally:
        os.close(top)
    os.rmdir(name, dir_fd=parent)
