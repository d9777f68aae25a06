"""Extension files and consents: recorded, replaced, and gone with the extension's row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from workbench.store import Store


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "w.db") as opened:
        yield opened


def test_files_are_replaced_as_a_whole(store: Store) -> None:
    store.upsert_extension("foo", version="1.0.0")
    assert store.set_extension_files("foo", [("b.py", "bb", 2), ("a.py", "aa", 1)]) == 2
    assert store.extension_files("foo") == {"a.py": "aa", "b.py": "bb"}
    store.set_extension_files("foo", [("c.py", "cc", 3)])
    assert store.extension_file_rows("foo") == [{"path": "c.py", "sha256": "cc", "size": 3}]


def test_consent_is_bound_to_a_digest_and_replaced(store: Store) -> None:
    store.clock = lambda: 1000
    store.upsert_extension("foo")
    assert store.get_consent("foo") is None
    first = store.record_consent("foo", "sha256:1", {"tools": {"t": {}}})
    assert first == {"extension": "foo", "digest": "sha256:1",
                     "approved": {"tools": {"t": {}}}, "approved_at": 1000}
    store.clock = lambda: 2000
    store.record_consent("foo", "sha256:2", {"tools": {}})
    assert store.get_consent("foo")["digest"] == "sha256:2"
    assert store.list_consents()["foo"]["approved_at"] == 2000
    assert store.remove_consent("foo") and not store.remove_consent("foo")


def test_removing_the_extension_removes_its_files_and_consent(store: Store) -> None:
    store.upsert_extension("foo")
    store.set_extension_files("foo", [("a.py", "aa", 1)])
    store.record_consent("foo", "sha256:1", {})
    store.remove_extension("foo")
    assert store.extension_files("foo") == {} and store.get_consent("foo") is None


def test_rows_need_an_installed_extension(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.record_consent("ghost", "sha256:1", {})
    with pytest.raises(sqlite3.IntegrityError):
        store.set_extension_files("ghost", [("a.py", "aa", 1)])
    assert store.extension_files("ghost") == {}


def test_a_failed_group_leaves_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.upsert_extension("foo")
        store.set_extension_files("foo", [("a.py", "aa", 1)])
        raise RuntimeError("killed midway")
    assert store.get_extension("foo") is None and store.extension_files("foo") == {}
