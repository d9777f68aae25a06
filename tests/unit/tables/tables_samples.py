"""What the Tables tests share besides their fixtures: the add-on's folder (put on the
import path, so ``tablesdb`` imports) and a table's columns. A module of its own name,
not ``conftest``, which names another folder's conftest when the suite runs together."""

from __future__ import annotations

import sys
from pathlib import Path

ADDON = Path(__file__).resolve().parents[3] / "extensions" / "tables"
if str(ADDON) not in sys.path:
    sys.path.insert(0, str(ADDON))

PEOPLE = [{"label": "Name", "type": "text", "required": True},
          {"label": "Age", "type": "integer"},
          {"label": "Score", "type": "real"},
          {"label": "Active", "type": "boolean", "default": True},
          {"label": "Seen", "type": "datetime"},
          {"label": "Email", "type": "text", "unique": True}]
