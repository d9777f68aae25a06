"""The manifest texts already checked, kept in the store and sealed with the home's key.

Checking each tool's ``parameters`` against the JSON Schema meta-schema is the part
of validating a manifest that costs most (it imports ``jsonschema``), and it depends
on the manifest's text alone. So a text that passed it, with nothing to say, is
recorded in ``manifest_checks`` by its sha256 with a seal: the HMAC-SHA256, under a
key kept in the home (``manifest-checks.key``, made on first need, readable by the
person alone), of that sha256 and of this version of the checks. At the next start,
the text read is hashed again; only a row whose seal matches it lets the check be
skipped. A row edited, damaged or copied from another home, a manifest changed on disk
(another sha256), a missing or unreadable key, a newer workbench: the text is checked
again, as at install. Everything else a validation does — the folder's files, the
models, the entry module's exports, the shipped memories — runs every time.

This module imports nothing of ours but the store and the leaves.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from importlib import metadata
import os
import secrets
import sqlite3
from pathlib import Path

from workbench import __version__
from workbench.errors import WorkbenchError
from workbench.store import Store

log = logging.getLogger(__name__)

KEY_NAME = "manifest-checks.key"
"""The key's file in the home."""

KEY_BYTES = 32

def _checks_version() -> str:
    try:
        checker = metadata.version("jsonschema")
    except metadata.PackageNotFoundError:  # run from a tree without its metadata
        checker = "unknown"
    return f"parameters-1 workbench-{__version__} jsonschema-{checker}"


CHECKS_VERSION = _checks_version()
"""What the seal binds besides the text: a seal made by other checks (another
workbench, another jsonschema and so its meta-schemas) is not trusted."""


def _read_key(path: Path) -> bytes | None:
    """The key in ``path`` (never through a link), or None when there is none fit."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        key = os.read(fd, KEY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return key if len(key) == KEY_BYTES else None


def home_key(root: Path) -> bytes | None:
    """The home's key, made now when there is none (written whole under another name,
    then linked into place, so a process never reads half a key); None when it cannot be
    read or made (nothing is then cached)."""
    path = root / KEY_NAME
    key = _read_key(path)
    if key is not None or path.is_symlink():
        return key
    temporary = root / f".{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)
        except FileExistsError:  # another process made it first: its key is the one
            pass
    except OSError as exc:
        log.warning("the manifest checks' key could not be made (%s); manifests are checked "
                    "in full at each start", exc)
        return None
    finally:
        try:
            os.unlink(temporary)
        except OSError:
            pass
    return _read_key(path)


class ManifestChecks:
    """``CheckedTexts`` (``workbench.manifest.validate``) kept in ``store``, sealed with
    the key of the home at ``root``."""

    def __init__(self, store: Store, root: Path) -> None:
        self.store = store
        self._key = home_key(root)  # read (or made) with the home, not at the first install

    def _seal(self, text_sha256: str) -> str | None:
        if self._key is None:
            return None
        message = f"{CHECKS_VERSION}\0{text_sha256}".encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def recording(self) -> _Recording:
        """These checks for an install: every text checked in full, the ones that pass
        recorded."""
        return _Recording(self)

    def known(self, text: bytes) -> bool:
        """Whether ``text`` has a row whose seal is the one this home's key makes."""
        text_sha256 = hashlib.sha256(text).hexdigest()
        try:
            recorded = self.store.manifest_check_seal(text_sha256)
        except (WorkbenchError, sqlite3.Error) as exc:
            log.warning("the manifest checks could not be read: %s", exc)
            return False
        if recorded is None:
            return False
        expected = self._seal(text_sha256)
        return expected is not None and hmac.compare_digest(recorded, expected)

    def remember(self, text: bytes) -> None:
        """Record ``text``'s seal; a store that cannot take it now just keeps none."""
        text_sha256 = hashlib.sha256(text).hexdigest()
        seal = self._seal(text_sha256)
        if seal is None:
            return
        try:
            self.store.record_manifest_check(text_sha256, seal)
        except (WorkbenchError, sqlite3.Error) as exc:
            log.warning("the manifest check could not be recorded: %s", exc)


class _Recording:
    """``ManifestChecks.recording``: knows no text, remembers through ``checks``."""

    def __init__(self, checks: ManifestChecks) -> None:
        self.checks = checks

    def known(self, text: bytes) -> bool:
        return False

    def remember(self, text: bytes) -> None:
        self.checks.remember(text)
