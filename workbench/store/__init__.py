"""The SQLite store: schema, numbered migrations, and every query as a ``Store`` method.

Owns ``workbench.db`` (WAL, foreign keys on) and its tables. Must not import the
config package, the core or any front-end; callers pass the file's path.
"""

from __future__ import annotations

from workbench.store.migrations import LATEST_VERSION, MIGRATIONS, Migration
from workbench.store.store import Store

__all__ = ["LATEST_VERSION", "MIGRATIONS", "Migration", "Store"]
