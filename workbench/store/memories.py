"""The user's own memories: knowledge and skills kept by title.

Memories that extensions ship are read from their folders, read-only, and never
stored here. This module must not import anything above the store.
"""

from __future__ import annotations

from typing import Any

from workbench.store.db import StoreBase


class MemoriesMixin(StoreBase):
    """Queries on ``memories``."""

    def list_memories(self) -> list[dict[str, Any]]:
        """Every memory without its content, most recently changed first."""
        return self._all("SELECT title, kind, summary, updated_at FROM memories "
                         "ORDER BY updated_at DESC, title")

    def get_memory(self, title: str) -> dict[str, Any] | None:
        return self._one("SELECT title, kind, summary, content, created_at, updated_at "
                         "FROM memories WHERE title = ?", (title,))

    def put_memory(self, title: str, content: str, *, kind: str = "knowledge",
                   summary: str | None = None) -> tuple[str | None, bool]:
        """Create or replace a memory; returns ``(content before, created)``."""
        now = self.clock()
        with self.transaction():
            before = self._one("SELECT content FROM memories WHERE title = ?", (title,))
            if before is None:
                self._execute("INSERT INTO memories (title, kind, summary, content, created_at, "
                              "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                              (title, kind, summary, content, now, now))
                return None, True
            self._execute("UPDATE memories SET content = ?, summary = COALESCE(?, summary), "
                          "updated_at = ? WHERE title = ?", (content, summary, now, title))
            return before["content"], False

    def delete_memory(self, title: str) -> bool:
        with self.transaction():
            return self._execute("DELETE FROM memories WHERE title = ?", (title,)).rowcount > 0
