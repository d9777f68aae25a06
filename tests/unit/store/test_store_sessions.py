"""Sessions and messages in the store."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest

from workbench.errors import StoreError
from workbench.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh store whose clock ticks one millisecond per reading."""
    opened = Store.open(tmp_path / "workbench.db")
    ticks = count(1_700_000_000_000)
    opened.clock = lambda: next(ticks)
    yield opened
    opened.close()


def test_create_and_get(store: Store) -> None:
    made = store.create_session(title="hello", model="echo")
    assert len(made["id"]) == 32 and int(made["id"], 16) >= 0
    assert made["created_at"] == made["updated_at"]
    assert store.get_session(made["id"]) == made
    assert store.get_session("0" * 32) is None


def test_get_by_unique_prefix(store: Store) -> None:
    made = store.create_session()
    assert store.get_session(made["id"][:6])["id"] == made["id"]
    assert store.get_session(made["id"][:5]) is None
    assert store.get_session(made["id"][:6] + "%") is None


def test_ambiguous_prefix_is_an_error(store: Store) -> None:
    for session_id in ("abcdef0001", "abcdef0002"):
        store._execute("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 1, 1)",
                       (session_id,))
    with pytest.raises(StoreError, match="more than one"):
        store.get_session("abcdef")
    assert store.get_session("abcdef0001")["id"] == "abcdef0001"
    with pytest.raises(StoreError, match="no session"):
        store.require_session("fedcba")


def test_like_wildcards_in_prefix_match_literally(store: Store) -> None:
    store._execute("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 1, 1)",
                   ("abc_ef_long",))
    store._execute("INSERT INTO sessions (id, created_at, updated_at) VALUES (?, 1, 1)",
                   ("abcxefxlong",))
    assert store.get_session("abc_ef")["id"] == "abc_ef_long"


def test_list_newest_first_with_counts(store: Store) -> None:
    first = store.create_session(title="first")
    second = store.create_session(title="second")
    third = store.create_session(title="third")
    store.add_message(first["id"], "user", "bump")
    store.add_message(first["id"], "assistant", "reply")
    rows = store.list_sessions()
    assert [r["title"] for r in rows] == ["first", "third", "second"]
    assert [r["message_count"] for r in rows] == [2, 0, 0]
    assert [r["id"] for r in store.list_sessions(limit=2)] == [first["id"], third["id"]]
    assert second["id"] in {r["id"] for r in rows}


def test_touch_and_rename(store: Store) -> None:
    older = store.create_session(title="older")
    newer = store.create_session(title="newer")
    assert store.touch_session(older["id"]) is True
    assert store.list_sessions()[0]["id"] == older["id"]
    assert store.rename_session(newer["id"], "renamed") is True
    assert store.get_session(newer["id"])["title"] == "renamed"
    assert store.list_sessions()[0]["id"] == newer["id"]
    assert store.touch_session("missing") is False
    assert store.rename_session("missing", "x") is False


def test_messages_numbered_per_session(store: Store) -> None:
    one = store.create_session()
    two = store.create_session()
    ids = [store.add_message(one["id"], "user", "a"), store.add_message(two["id"], "user", "b"),
           store.add_message(one["id"], "assistant", "c")]
    assert len(set(ids)) == 3
    messages = store.list_messages(one["id"])
    assert [(m["seq"], m["content"]) for m in messages] == [(1, "a"), (2, "c")]
    assert [m["seq"] for m in store.list_messages(two["id"])] == [1]


def test_message_fields_and_json(store: Store) -> None:
    session = store.create_session()
    calls = [{"id": "call_1", "name": "fs.read", "arguments": {"path": "a.txt"}}]
    store.add_message(session["id"], "assistant", None, tool_calls=calls)
    store.add_message(session["id"], "tool", '{"ok": true}', tool_call_id="call_1", name="fs.read")
    first, second = store.list_messages(session["id"])
    assert first["tool_calls"] == calls and first["content"] is None
    assert second["tool_calls"] is None
    assert (second["role"], second["tool_call_id"], second["name"]) == ("tool", "call_1", "fs.read")
    assert second["session_id"] == session["id"]
    assert second["created_at"] > first["created_at"]


def test_adding_a_message_touches_the_session(store: Store) -> None:
    session = store.create_session()
    store.create_session()
    store.add_message(session["id"], "user", "hi")
    assert store.get_session(session["id"])["updated_at"] > session["updated_at"]
    assert store.list_sessions()[0]["id"] == session["id"]


def test_bad_role_and_missing_session(store: Store) -> None:
    session = store.create_session()
    with pytest.raises(ValueError, match="role"):
        store.add_message(session["id"], "robot", "x")
    with pytest.raises(StoreError, match="no session"):
        store.add_message("missing", "user", "x")
    assert store.list_messages(session["id"]) == []


def test_delete_cascades(store: Store) -> None:
    session = store.create_session()
    kept = store.create_session()
    store.add_message(session["id"], "user", "bye")
    store.add_message(kept["id"], "user", "stay")
    store.start_tool_call("c1", "fs.read", {}, "model", session_id=session["id"])
    store.start_tool_call("c2", "fs.read", {}, "user")
    store.add_grant("fs.read", "read", "/tmp", "session", session_id=session["id"])
    store.add_grant("fs.read", "read", "/etc", "always")
    assert store.delete_session(session["id"]) is True
    assert store.get_session(session["id"]) is None
    assert store.list_messages(session["id"]) == []
    assert store._all("SELECT count(*) AS n FROM messages") == [{"n": 1}]
    assert [c["id"] for c in store.list_tool_calls()] == ["c2"]
    assert [g["value"] for g in store.list_grants()] == ["/etc"]
    assert store.delete_session(session["id"]) is False
