"""``recent_audit``: the newest entries of one action about one subject, in a bounded read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "store.db") as opened:
        yield opened


def test_recent_entries_of_one_action_and_subject_newest_first(store: Store):
    assert store.recent_audit("net.refused", "a.fetch") == []
    for index in range(5):
        store.audit("sandbox", "net.refused", "a.fetch", {"n": index})
        store.audit("sandbox", "net.refused", "b.fetch", {"n": index})
        store.audit("model", "tool.call", "a.fetch", {"n": index})
    found = store.recent_audit("net.refused", "a.fetch", limit=3)
    assert [row["detail"]["n"] for row in found] == [4, 3, 2]
    assert {(row["action"], row["subject"]) for row in found} == {("net.refused", "a.fetch")}


def test_only_the_window_of_newest_entries_is_looked_at(store: Store):
    store.audit("sandbox", "net.refused", "a.fetch", {"n": "old"})
    for index in range(10):
        store.audit("model", "tool.call", "a.fetch", {"n": index})
    assert store.recent_audit("net.refused", "a.fetch", window=5) == []
    assert [r["detail"]["n"] for r in store.recent_audit("net.refused", "a.fetch", window=11)] == ["old"]
