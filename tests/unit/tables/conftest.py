"""The Tables engine, tested in-process: plain Python over real SQLite files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tables_samples import ADDON, PEOPLE  # noqa: F401  (ADDON puts tablesdb on the path)
from tablesdb import Tables  # noqa: E402


@pytest.fixture
def tables(tmp_path: Path) -> Tables:
    return Tables(tmp_path / "data")


@pytest.fixture
def db(tables: Tables) -> str:
    """A database with the table People (no rows)."""
    resource_id = tables.create("Home")["resourceId"]
    tables.apply(resource_id, "tables-create", {"table": "People", "columns": PEOPLE})
    return resource_id
