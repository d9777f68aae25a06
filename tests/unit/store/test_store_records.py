"""Tool calls, extensions and the audit log in the store."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest

from workbench.errors import StoreError
from workbench.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "workbench.db")
    ticks = count(1_700_000_000_000)
    opened.clock = lambda: next(ticks)
    yield opened
    opened.close()


def test_tool_call_lifecycle(store: Store) -> None:
    session = store.create_session()["id"]
    store.start_tool_call("call_1", "fs.read", {"path": "a"}, "model", session_id=session)
    running = store.get_tool_call("call_1")
    assert running["status"] == "running" and running["ended_at"] is None
    assert running["arguments"] == {"path": "a"}
    store.finish_tool_call("call_1", "ok", result={"text": "hi"})
    done = store.get_tool_call("call_1")
    assert (done["status"], done["result"], done["error"]) == ("ok", {"text": "hi"}, None)
    assert done["ended_at"] > done["started_at"]


def test_tool_call_errors_are_json(store: Store) -> None:
    store.start_tool_call("c", "web.get", ["x"], "user")
    store.finish_tool_call("c", "error", error={"kind": "timeout", "message": "slow"})
    assert store.get_tool_call("c")["error"] == {"kind": "timeout", "message": "slow"}


def test_tool_call_mistakes(store: Store) -> None:
    store.start_tool_call("c", "t", {}, "model")
    with pytest.raises(StoreError, match="already started"):
        store.start_tool_call("c", "t", {}, "model")
    with pytest.raises(ValueError, match="status"):
        store.finish_tool_call("c", "running")
    store.finish_tool_call("c", "denied")
    with pytest.raises(StoreError, match="already ended"):
        store.finish_tool_call("c", "ok")
    with pytest.raises(StoreError, match="no tool call"):
        store.finish_tool_call("nope", "ok")
    with pytest.raises(StoreError, match="no session"):
        store.start_tool_call("d", "t", {}, "model", session_id="missing")
    assert store.get_tool_call("nope") is None


def test_list_tool_calls(store: Store) -> None:
    session = store.create_session()["id"]
    for n in range(3):
        store.start_tool_call(f"s{n}", "t", {"n": n}, "model", session_id=session)
    store.start_tool_call("free", "t", {}, "user")
    assert [c["id"] for c in store.list_tool_calls()] == ["free", "s2", "s1", "s0"]
    assert [c["id"] for c in store.list_tool_calls(session_id=session)] == ["s2", "s1", "s0"]
    assert [c["id"] for c in store.list_tool_calls(limit=2)] == ["free", "s2"]


def test_extension_upsert_keeps_install_time_and_enabled(store: Store) -> None:
    first = store.upsert_extension("notes", version="1.0", source="builtin",
                                   path="/x/notes", digest="sha256:aa",
                                   manifest={"name": "notes", "tools": []})
    assert first["enabled"] is True and first["manifest"]["name"] == "notes"
    assert store.set_extension_enabled("notes", False) is True
    second = store.upsert_extension("notes", version="1.1", source="builtin",
                                    path="/x/notes", digest="sha256:bb", manifest={})
    assert second["installed_at"] == first["installed_at"]
    assert second["updated_at"] > first["updated_at"]
    assert (second["version"], second["digest"], second["enabled"]) == ("1.1", "sha256:bb", False)
    third = store.upsert_extension("notes", version="1.2", enabled=True)
    assert third["enabled"] is True and third["manifest"] is None


def test_extension_list_get_remove(store: Store) -> None:
    store.upsert_extension("zeta")
    store.upsert_extension("alpha", enabled=False)
    assert [(e["name"], e["enabled"]) for e in store.list_extensions()] == [
        ("alpha", False), ("zeta", True)]
    assert store.get_extension("missing") is None
    assert store.remove_extension("zeta") is True
    assert store.remove_extension("zeta") is False
    assert store.set_extension_enabled("zeta", True) is False
    assert [e["name"] for e in store.list_extensions()] == ["alpha"]


def test_audit_log(store: Store) -> None:
    first = store.audit("user", "extension.install", "notes", {"version": "1.0"})
    store.audit("model", "tool.call", "notes.add")
    store.audit("cli", "config.set")
    entries = store.list_audit()
    assert [e["action"] for e in entries] == ["config.set", "tool.call", "extension.install"]
    assert entries[-1]["id"] == first and entries[-1]["detail"] == {"version": "1.0"}
    assert entries[0]["subject"] is None and entries[0]["detail"] is None
    assert len(store.list_audit(limit=2)) == 2
    assert len(store.list_audit(limit=None)) == 3


def test_audit_outlives_sessions(store: Store) -> None:
    session = store.create_session()["id"]
    store.audit("user", "session.delete", session)
    store.delete_session(session)
    assert store.list_audit()[0]["subject"] == session
