"""The SQLite store: schema, numbered migrations, and every query as a ``Store`` method.

Owns ``workbench.db`` (WAL, foreign keys on) and its tables, and the writer thread
that commits tool call records behind the call (``writer.py``). Must not import the
config package, the core or any front-end; callers pass the file's path.
"""

from __future__ import annotations

from workbench.store.migrations import LATEST_VERSION, MIGRATIONS, Migration
from workbench.store.store import Store
from workbench.store.writer import DeferredWriteError

__all__ = ["LATEST_VERSION", "MIGRATIONS", "DeferredWriteError", "Migration", "Store"]
