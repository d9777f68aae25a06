"""Permission grants in the store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.errors import StoreError
from workbench.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "workbench.db")
    yield opened
    opened.close()


def _pairs(store: Store, tool: str | None = None) -> list[tuple[str, str, str]]:
    return [(g["kind"], g["value"], g["scope"]) for g in store.list_grants(tool)]


def test_add_and_list(store: Store) -> None:
    grant_id = store.add_grant("notes.write", "write", "~/notes", "always")
    store.add_grant("notes.read", "read", "~/notes", "always")
    rows = store.list_grants("notes.write")
    assert [r["id"] for r in rows] == [grant_id]
    assert rows[0]["session_id"] is None and rows[0]["created_at"] > 0
    assert len(store.list_grants()) == 2


def test_lasting_grants_are_not_duplicated(store: Store) -> None:
    first = store.add_grant("t", "net", "example.com:443", "always")
    assert store.add_grant("t", "net", "example.com:443", "always") == first
    assert len(store.list_grants("t")) == 1


def test_always_and_deny_replace_each_other(store: Store) -> None:
    store.add_grant("t", "net", "a:80", "always")
    store.add_grant("t", "net", "a:80", "deny")
    assert _pairs(store, "t") == [("net", "a:80", "deny")]
    store.add_grant("t", "net", "a:80", "always")
    assert _pairs(store, "t") == [("net", "a:80", "always")]


def test_grant_ids_are_never_reused(store: Store) -> None:
    first = store.add_grant("t", "env", "HOME", "always")
    store.revoke_grants("t")
    assert store.add_grant("t", "env", "HOME", "always") != first


def test_session_grants(store: Store) -> None:
    one = store.create_session()["id"]
    two = store.create_session()["id"]
    a = store.add_grant("t", "read", "/x", "session", session_id=one)
    assert store.add_grant("t", "read", "/x", "session", session_id=one) == a
    store.add_grant("t", "read", "/x", "session", session_id=two)
    store.add_grant("t", "read", "/y", "always")
    assert len(store.list_grants("t")) == 3
    visible = store.list_grants("t", session_id=one)
    assert [(g["value"], g["session_id"]) for g in visible] == [("/x", one), ("/y", None)]
    with pytest.raises(ValueError, match="session_id"):
        store.add_grant("t", "read", "/x", "session")
    with pytest.raises(StoreError, match="no session"):
        store.add_grant("t", "read", "/x", "session", session_id="missing")


def test_once_grants_are_used_up(store: Store) -> None:
    once = store.add_grant("t", "run", "git", "once")
    again = store.add_grant("t", "run", "git", "once")
    lasting = store.add_grant("t", "run", "ls", "always")
    assert once != again
    assert store.use_grant(once) is True
    assert store.use_grant(once) is False
    assert store.use_grant(lasting) is False
    assert [g["id"] for g in store.list_grants("t")] == [again, lasting]


def test_unknown_scope(store: Store) -> None:
    with pytest.raises(ValueError, match="scope"):
        store.add_grant("t", "read", "/", "forever")


def test_revoke_all_or_some(store: Store) -> None:
    store.add_grant("t", "read", "/a", "always")
    store.add_grant("t", "read", "/b", "always")
    store.add_grant("t", "write", "/a", "deny")
    store.add_grant("other", "read", "/a", "always")
    assert store.revoke_grants("t", "read", "/a") == 1
    assert _pairs(store, "t") == [("read", "/b", "always"), ("write", "/a", "deny")]
    assert store.revoke_grants("t", kind="write") == 1
    assert store.revoke_grants("t") == 1
    assert store.revoke_grants("t") == 0
    assert _pairs(store) == [("read", "/a", "always")]


def test_grants_are_per_tool(store: Store) -> None:
    store.add_grant("ext.read_file", "read", "/data", "always")
    assert store.list_grants("ext.write_file") == []
