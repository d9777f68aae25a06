"""A tool call's start and end, each written at once with its audit entry in one transaction
(written behind the caller, with `defer=True`: see test_store_writer.py)."""

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


def _audit(store: Store) -> list[tuple]:
    return [(r["actor"], r["action"], r["subject"], r["detail"]) for r in store.list_audit()[::-1]]


def test_start_and_finish_write_their_audit_entries_when_asked(store: Store) -> None:
    session = store.create_session()["id"]
    store.start_tool_call("c1", "fs.read", {"path": "a"}, "model", session, audit=True)
    assert store.get_tool_call("c1")["status"] == "running"
    store.finish_tool_call("c1", "error", error={"kind": "timeout"}, audit=True)
    store.start_tool_call("c2", "fs.write", {}, "person")
    store.finish_tool_call("c2", "ok")
    assert _audit(store) == [("model", "tool.call", "fs.read", {"call_id": "c1"}),
                             ("model", "tool.error", "fs.read", {"call_id": "c1"})]
    done = store.get_tool_call("c1")
    assert (done["status"], done["error"], done["caller"]) == ("error", {"kind": "timeout"}, "model")


def test_a_start_that_is_refused_leaves_no_audit_entry(store: Store) -> None:
    store.start_tool_call("c", "t", {}, "model", audit=True)
    with pytest.raises(StoreError, match="tool call 'c' was already started"):
        store.start_tool_call("c", "t", {}, "person", audit=True)
    with pytest.raises(StoreError, match="no session 'missing'"):
        store.start_tool_call("d", "t", {}, "model", session_id="missing", audit=True)
    assert [action for _, action, _, _ in _audit(store)] == ["tool.call"]
    assert store.get_tool_call("c")["caller"] == "model" and store.get_tool_call("d") is None


def test_a_finish_that_is_refused_leaves_no_audit_entry(store: Store) -> None:
    store.start_tool_call("c", "t", {}, "model")
    store.finish_tool_call("c", "ok", result=1, audit=True)
    with pytest.raises(StoreError, match="already ended"):
        store.finish_tool_call("c", "error", audit=True)
    with pytest.raises(StoreError, match="no tool call 'nope'"):
        store.finish_tool_call("nope", "ok", audit=True)
    assert [action for _, action, _, _ in _audit(store)] == ["tool.ok"]
    assert store.get_tool_call("c")["result"] == 1


def test_a_record_and_its_audit_entry_are_written_together_or_not_at_all(store: Store) -> None:
    # The audit log needs an actor: without one the entry fails, and the record with it.
    with pytest.raises(Exception, match="NOT NULL"):
        store.start_tool_call("c", "t", {}, None, audit=True)  # type: ignore[arg-type]
    assert store.get_tool_call("c") is None
    store.start_tool_call("c", "t", {}, None)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="NOT NULL"):
        store.finish_tool_call("c", "ok", result="done", audit=True)
    assert store.get_tool_call("c")["status"] == "running"
    assert store.list_audit() == []
