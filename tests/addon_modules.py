"""The shipped add-ons' own modules, imported in the test's process, and a ``ctx`` whose
``db`` is a real SQLite file with the shape ``ctx.db`` has in a worker (``query`` gives
rows as objects, ``execute`` gives ``{changes, lastInsertRowId}``).

Unit tests call an add-on's functions with it; the integration tests call the same
tools through a host and their sandboxed workers.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

EXTENSIONS = Path(__file__).resolve().parents[1] / "extensions"


def addon_path(name: str) -> Path:
    """Put ``extensions/NAME`` first on the import path (its modules have unique names)."""
    folder = EXTENSIONS / name
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return folder


class Db:
    """``ctx.db`` over a real SQLite file (autocommit, as the host's is)."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.row_factory = sqlite3.Row

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, params or [])]

    def execute(self, sql: str, params: list[Any] | None = None) -> dict[str, int]:
        cursor = self.conn.execute(sql, params or [])
        return {"changes": cursor.rowcount, "lastInsertRowId": cursor.lastrowid or 0}


class Ctx:
    def __init__(self, path: Path) -> None:
        self.db = Db(path)


def tools_module(name: str) -> Any:
    """The add-on's ``main.py`` (its tools), imported under ``NAME_tools``."""
    import importlib.util

    folder = addon_path(name)
    module_name = f"{name}_tools"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, folder / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def card_verbs(card: Any) -> set[str]:
    """Every ``Action.Execute`` verb of a parsed card, wherever it is."""
    from workbench.cards import ActionSet, ExecuteAction

    actions = list(card.actions)
    for element in card.elements():
        if isinstance(element, ActionSet):
            actions.extend(element.actions)
    return {a.verb for a in actions if isinstance(a, ExecuteAction)}
