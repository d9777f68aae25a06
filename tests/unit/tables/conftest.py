"""The Tables engine, tested in-process: plain Python over real SQLite files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ADDON = Path(__file__).resolve().parents[3] / "extensions" / "tables"
if str(ADDON) not in sys.path:
    sys.path.insert(0, str(ADDON))

from tablesdb import Tables  # noqa: E402

PEOPLE = [{"label": "Name", "type": "text", "required": True},
          {"label": "Age", "type": "integer"},
          {"label": "Score", "type": "real"},
          {"label": "Active", "type": "boolean", "default": True},
          {"label": "Seen", "type": "datetime"},
          {"label": "Email", "type": "text", "unique": True}]


@pytest.fixture
def tables(tmp_path: Path) -> Tables:
    return Tables(tmp_path / "data")


@pytest.fixture
def db(tables: Tables) -> str:
    """A database with the table People (no rows)."""
    resource_id = tables.create("Home")["resourceId"]
    tables.apply(resource_id, "tables-create", {"table": "People", "columns": PEOPLE})
    return resource_id
