"""Project trust: a project's config applies only in the exact version its owner trusted.

Trusting records, per project (keyed by the project folder's resolved path), the
sha256 of the config file's bytes, the time, and a copy of the content. When the
file later changes, the copy lets the last trusted version keep applying until the
owner trusts the change; a project never trusted applies nothing.

The record lives in ``Home.trust_file`` (JSON), written atomically. This module
must not import ``Config``; it reads files only through ``workbench.config.document``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from workbench.config.document import atomic_write, decode, values_from_text
from workbench.config.home import Home, project_config_path
from workbench.errors import ConfigError

TRUST_FORMAT = 1
"""The version of the trust file's layout."""

TrustState = Literal["untrusted", "trusted", "changed"]


@dataclass(frozen=True)
class TrustRecord:
    """What was trusted for one project.

    Attributes:
        project: The project folder's resolved path.
        file: The config file that was trusted.
        sha256: The hex digest of the file's bytes when trusted.
        trusted_at: When, as an ISO 8601 UTC time (``2025-01-02T03:04:05Z``).
        content: The trusted text, so its values apply after the file changes.
    """

    project: str
    file: str
    sha256: str
    trusted_at: str
    content: str


@dataclass(frozen=True)
class TrustCheck:
    """How a project config's current bytes compare with its trust record.

    Attributes:
        state: ``trusted`` (same bytes), ``changed`` (trusted before, differs now)
            or ``untrusted`` (never trusted).
        sha256: The digest of the current bytes.
        record: The trust record, when there is one.
    """

    state: TrustState
    sha256: str
    record: TrustRecord | None


def sha256_of(data: bytes) -> str:
    """The hex sha256 digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def project_key(project_dir: Path) -> str:
    """The key a project is recorded under: its folder's resolved path."""
    return str(Path(os.path.abspath(project_dir)).resolve())


def load_records(home: Home) -> dict[str, TrustRecord]:
    """Read every trust record.

    Args:
        home: The workbench home holding the trust file.

    Returns:
        Records by project key; empty when nothing was ever trusted.

    Raises:
        ConfigError: When the trust file is unreadable or not in the expected layout.
    """
    path = home.trust_file
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"cannot read the trust record: {exc.strerror or exc}",
                          where=str(path)) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"the trust record is not valid JSON ({exc})", where=str(path)) from None
    projects = raw.get("projects") if isinstance(raw, dict) else None
    if not isinstance(projects, dict):
        raise ConfigError("the trust record has no 'projects' table", where=str(path))
    records: dict[str, TrustRecord] = {}
    for key, entry in projects.items():
        try:
            records[key] = TrustRecord(project=key, file=str(entry["file"]),
                                       sha256=str(entry["sha256"]),
                                       trusted_at=str(entry["trusted_at"]),
                                       content=str(entry["content"]))
        except (KeyError, TypeError):
            raise ConfigError(f"the trust record for {key} is incomplete",
                              where=str(path)) from None
    return records


def _save_records(home: Home, records: dict[str, TrustRecord]) -> None:
    projects = {}
    for key, record in sorted(records.items()):
        entry = asdict(record)
        del entry["project"]
        projects[key] = entry
    data = json.dumps({"format": TRUST_FORMAT, "projects": projects}, indent=2) + "\n"
    atomic_write(home.trust_file, data.encode("utf-8"), mode=0o600)


def trust_project(home: Home, project_dir: Path, *, now: datetime | None = None) -> TrustRecord:
    """Trust the current content of a project's ``.workbench/config.toml``.

    The content is checked first; a file with invalid TOML, unknown keys or wrong
    types is not trusted.

    Args:
        home: The workbench home holding the trust file.
        project_dir: The project folder (the one holding ``.workbench``).
        now: The time to record; the current time when omitted.

    Returns:
        The new trust record.

    Raises:
        ConfigError: When there is no project config there, or it is not valid.
    """
    path = project_config_path(Path(os.path.abspath(project_dir)))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("there is no project config to trust", where=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", where=str(path)) from None
    text = decode(data, str(path))
    values_from_text(text, str(path))
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    key = project_key(project_dir)
    record = TrustRecord(project=key, file=str(path), sha256=sha256_of(data),
                         trusted_at=moment.strftime("%Y-%m-%dT%H:%M:%SZ"), content=text)
    records = load_records(home)
    records[key] = record
    _save_records(home, records)
    return record


def forget_project(home: Home, project_dir: Path) -> bool:
    """Withdraw trust from a project, so its config applies nothing.

    Returns:
        True when the project had been trusted.
    """
    records = load_records(home)
    if records.pop(project_key(project_dir), None) is None:
        return False
    _save_records(home, records)
    return True


def check_trust(home: Home, project_dir: Path, data: bytes) -> TrustCheck:
    """Compare a project config's current bytes with its trust record.

    Args:
        home: The workbench home holding the trust file.
        project_dir: The project folder (the one holding ``.workbench``).
        data: The config file's current bytes.

    Returns:
        The trust state, the current digest and the record, if any.

    Raises:
        ConfigError: When the trust file cannot be read.
    """
    digest = sha256_of(data)
    record = load_records(home).get(project_key(project_dir))
    if record is None:
        return TrustCheck("untrusted", digest, None)
    return TrustCheck("trusted" if record.sha256 == digest else "changed", digest, record)
