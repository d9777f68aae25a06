"""Room kept on the store's disk for saying that a turn failed when that disk fills.

A turn writes its messages as they complete. When the disk fills part-way, the rest
of the turn cannot be written, and neither could a record saying so: the session
would hold half a turn that looks like a whole one. So a store keeps a small file
beside itself (``workbench.db.reserve``, ``RESERVE_BYTES`` allocated); on a full disk
it is deleted, and the room it held is what the failure is written in
(``Store.fail_turn``). It is made again when the store is next opened with room
for it; without room, the store opens without one.

This module must not import anything above the store.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

RESERVE_BYTES = 256 * 1024
"""Enough for a failure record and the answers of a turn's calls (a few WAL pages
each), far less than any disk a store lives on."""


class Reserve:
    """The reserve file of the store at ``db_path``."""

    def __init__(self, db_path: Path, size: int = RESERVE_BYTES) -> None:
        self.path = db_path.with_name(db_path.name + ".reserve")
        self.size = size

    def ensure(self) -> bool:
        """Make the file (its blocks allocated) unless it is there; whether it is there.
        Without room for it, nothing is left behind."""
        try:
            if self.path.stat().st_size >= self.size:
                return True
        except OSError:
            pass
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError as exc:
            log.debug("cannot make the store's reserve %s: %s", self.path, exc)
            return False
        try:
            os.posix_fallocate(fd, 0, self.size)
        except OSError as exc:
            os.close(fd)
            self.path.unlink(missing_ok=True)
            log.debug("no room for the store's reserve %s: %s", self.path, exc)
            return False
        os.close(fd)
        return True

    def release(self) -> bool:
        """Delete the file, freeing its room; whether there was one."""
        try:
            self.path.unlink()
        except OSError:
            return False
        return True
