"""The write-behind of tool call records: one writer thread, group commits in order,
reads that wait for it, failures raised at the next flush, a clean close."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest

from workbench.errors import StoreError
from workbench.store import Store
from workbench.store.writer import THREAD_NAME, DeferredWriteError, Write, Writer

LONG = 60.0
"""A gather time no test waits out: only a flush or a close makes the writer commit."""


def _open(path: Path) -> Store:
    store = Store.open(path)
    ticks = count(1_700_000_000_000)
    store.clock = lambda: next(ticks)
    return store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = _open(tmp_path / "workbench.db")
    yield opened
    opened.close()


def _writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


def _audit(store: Store) -> list[tuple]:
    return [(r["actor"], r["action"], r["subject"], r["detail"]) for r in store.list_audit()[::-1]]


def _call(store: Store, call_id: str, status: str = "ok", **extra) -> None:
    store.start_tool_call(call_id, "t", {"id": call_id}, "model", audit=True, defer=True, **extra)
    store.finish_tool_call(call_id, status, result=call_id, audit=True, defer=True)


def test_queued_records_are_exactly_those_written_at_once(tmp_path: Path) -> None:
    at_once, behind = _open(tmp_path / "a.db"), _open(tmp_path / "b.db")
    try:
        for store, defer in ((at_once, False), (behind, True)):
            session = store.create_session()["id"]
            store.start_tool_call("c1", "fs.read", {"path": "é"}, "model", session, audit=True,
                                  defer=defer)
            store.start_tool_call("c2", "fs.write", [1, None], "person", defer=defer)
            store.finish_tool_call("c1", "error", error={"kind": "timeout"}, audit=True, defer=defer)
            store.finish_tool_call("c2", "ok", result={"n": 1}, defer=defer)
        strip = [{k: v for k, v in row.items() if k != "session_id"} for row in
                 at_once.list_tool_calls()]
        assert strip == [{k: v for k, v in row.items() if k != "session_id"}
                         for row in behind.list_tool_calls()]
        assert at_once.list_audit() == behind.list_audit()
        assert behind.get_tool_call("c1")["started_at"] == 1_700_000_000_001
    finally:
        at_once.close()
        behind.close()


def test_writes_commit_in_the_order_they_were_queued_among_direct_writes(store: Store) -> None:
    store.writer.gather_s = LONG
    for n in range(20):
        _call(store, f"c{n}", "ok" if n % 3 else "error")
        if n == 10:
            store.audit("person", "grant.once", "t")  # a transaction: it waits for the queue
    actions = [action for _, action, _, _ in _audit(store)]
    expected = [action for n in range(20)
                for action in (["tool.call", "tool.ok" if n % 3 else "tool.error"]
                               + (["grant.once"] if n == 10 else []))]
    assert actions == expected
    ids = [r["id"] for r in store.list_audit(limit=None)]
    assert ids == sorted(ids, reverse=True)
    assert [r["id"] for r in store.list_tool_calls()] == [f"c{n}" for n in reversed(range(20))]


def test_what_is_queued_meanwhile_commits_as_one_group(store: Store, tmp_path: Path) -> None:
    store.writer.gather_s = 0  # group commit alone, without waiting for more
    other = sqlite3.connect(tmp_path / "workbench.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the writer cannot begin until this ends
    try:
        for n in range(10):
            _call(store, f"c{n}")
    finally:
        other.execute("COMMIT")
        other.close()
    store.flush()
    assert len(store.list_tool_calls()) == 10
    # The first write may have been taken before the rest were queued; never more.
    assert store.writer.groups <= 2


def test_every_read_of_the_records_waits_for_the_queue(store: Store) -> None:
    store.writer.gather_s = LONG
    readers = {
        "get_tool_call": lambda: store.get_tool_call("c0"),
        "list_tool_calls": lambda: store.list_tool_calls()[0],
        "list_audit": lambda: store.list_audit()[0],
        "raw query": lambda: store._one("SELECT count(*) AS n FROM audit_log JOIN tool_calls "
                                        "ON json_extract(detail, '$.call_id') = tool_calls.id"),
    }
    for name, read in readers.items():
        store.writer.flush()
        store.start_tool_call("c0" if name == "get_tool_call" else name, "t", {}, "model",
                              audit=True, defer=True)
        assert store.writer.owes
        assert read(), name
        assert not store.writer.owes, name


def test_reads_of_other_tables_do_not_wait(store: Store) -> None:
    store.writer.gather_s = LONG
    session = store.create_session()["id"]
    store.start_tool_call("c", "t", {}, "model", session, audit=True, defer=True)
    store.list_grants("t")
    store.get_session(session)
    store.list_sessions()
    assert store.writer.owes
    store.flush()
    assert not store.writer.owes and store.get_tool_call("c")["session_id"] == session


def test_a_queued_write_inside_a_transaction_commits_or_rolls_back_with_it(store: Store) -> None:
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.start_tool_call("gone", "t", {}, "model", audit=True, defer=True)
            raise RuntimeError("undo")
    with store.transaction():
        store.start_tool_call("kept", "t", {}, "model", audit=True, defer=True)
        assert not store.writer.owes  # written here, not queued
    assert [r["id"] for r in store.list_tool_calls()] == ["kept"]


def test_a_refused_write_is_logged_raised_once_and_leaves_the_rest_of_its_group(
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    store.start_tool_call("c", "t", {"first": True}, "model", audit=True)
    store.writer.gather_s = LONG
    with caplog.at_level(logging.ERROR, logger="workbench.store"):
        _call(store, "a")
        store.start_tool_call("c", "t", {}, "person", audit=True, defer=True)
        store.finish_tool_call("c", "error", audit=True, defer=True)
        store.start_tool_call("d", "t", {}, "model", session_id="missing", defer=True)
        _call(store, "b")
        with pytest.raises(DeferredWriteError) as raised:
            store.flush()
    assert [str(f) for f in raised.value.failures] == [
        "start of tool call 'c': tool call 'c' was already started",
        "end of tool call 'c': not attempted: the record it completes was not written",
        "start of tool call 'd': no session 'missing'",
    ]
    assert isinstance(raised.value, StoreError)
    assert [r.getMessage() for r in caplog.records] == [
        f"store: {f.label} was not written: {f.error}" for f in raised.value.failures]
    store.flush()  # raised once
    # The earlier call 'c' is untouched; 'a' and 'b' were written once each.
    assert store.get_tool_call("c")["status"] == "running"
    assert store.get_tool_call("c")["arguments"] == {"first": True}
    assert store.get_tool_call("d") is None
    assert [(r["id"], r["status"]) for r in store.list_tool_calls()] == \
        [("b", "ok"), ("a", "ok"), ("c", "running")]
    assert [action for _, action, _, _ in _audit(store)] == \
        ["tool.call", "tool.call", "tool.ok", "tool.call", "tool.ok"]


def test_a_read_raises_what_failed_before_it(store: Store) -> None:
    store.writer.gather_s = LONG
    store.finish_tool_call("nope", "ok", defer=True)
    with pytest.raises(DeferredWriteError, match="end of tool call 'nope': no tool call 'nope'"):
        store.list_tool_calls()
    assert store.list_tool_calls() == []


def test_a_group_that_cannot_commit_is_named_and_the_writer_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "workbench.db"
    Store.open(path).close()
    attempts = []

    def connect() -> sqlite3.Connection:
        attempts.append(len(attempts))
        if len(attempts) == 1:
            raise sqlite3.OperationalError("unable to open database file")
        return sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def insert(value: str):
        return lambda conn: conn.execute(
            "INSERT INTO audit_log (at, actor, action) VALUES (1, 'test', ?)", (value,))

    writer = Writer(connect, gather_s=0)
    try:
        writer.submit(Write("first", insert("first"), key="k"))
        with pytest.raises(DeferredWriteError, match="first: unable to open database file"):
            writer.flush()
        writer.submit(Write("depends", insert("depends"), needs="k"))
        writer.submit(Write("second", insert("second")))
        with pytest.raises(DeferredWriteError, match="depends: not attempted"):
            writer.flush()
    finally:
        writer.close()
    with Store.open(path) as store:
        assert [action for _, action, _, _ in _audit(store)] == ["second"]


def test_close_commits_the_queue_and_stops_the_thread(tmp_path: Path) -> None:
    path = tmp_path / "workbench.db"
    store = _open(path)
    store.writer.gather_s = LONG
    for n in range(5):
        _call(store, f"c{n}")
    assert len(_writer_threads()) == 1
    store.close()
    assert _writer_threads() == []
    with pytest.raises(sqlite3.ProgrammingError):  # as any use of a closed store
        store.start_tool_call("late", "t", {}, "model", defer=True)
    with pytest.raises(StoreError, match="the store is closed"):
        store.writer.submit(Write("late", lambda conn: None))
    with Store.open(path) as again:
        assert [r["status"] for r in again.list_tool_calls()] == ["ok"] * 5
        assert len(again.list_audit()) == 10


def test_close_raises_failures_not_yet_raised_and_closes_all_the_same(tmp_path: Path) -> None:
    store = _open(tmp_path / "workbench.db")
    store.finish_tool_call("nope", "ok", defer=True)
    with pytest.raises(DeferredWriteError, match="no tool call 'nope'"):
        store.close()
    assert _writer_threads() == []
    with pytest.raises(sqlite3.ProgrammingError):
        store.list_sessions()


def test_a_store_that_never_writes_behind_starts_no_thread(tmp_path: Path) -> None:
    with Store.open(tmp_path / "workbench.db") as store:
        store.start_tool_call("c", "t", {}, "model", audit=True)
        store.finish_tool_call("c", "ok", audit=True)
        assert _writer_threads() == []


def test_a_forked_child_does_not_inherit_the_writer(store: Store) -> None:
    store.writer.gather_s = LONG
    _call(store, "parent")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and never return into pytest
        try:
            os.close(read)
            report = {"threads": len(_writer_threads()), "owes": store.writer.owes}
            store.writer.flush()  # nothing of the parent's to wait for
            try:
                store.writer.submit(Write("child", lambda conn: None))
                report["refused"] = ""
            except StoreError as exc:
                report["refused"] = str(exc)
            os.write(write, json.dumps(report).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        report = json.loads(handle.read())
    os.waitpid(pid, 0)
    assert report == {"threads": 0, "owes": False,
                      "refused": "the store was opened before this process was forked; "
                                 "open it again here"}
    assert store.get_tool_call("parent")["status"] == "ok"


def test_a_call_that_ends_before_its_start_is_written_is_written_once(store: Store) -> None:
    store.writer.gather_s = LONG
    statements: list[str] = []
    store.writer.trace = statements.append
    store.start_tool_call("fast", "t", {"n": 1}, "model", audit=True, defer=True)
    store.finish_tool_call("fast", "ok", result={"n": 2}, audit=True, defer=True)
    store.flush()
    assert not [s for s in statements if s.startswith("UPDATE")], statements
    assert [s.split()[2] for s in statements if s.startswith("INSERT")] == \
        ["tool_calls", "audit_log", "audit_log"]
    call = store.get_tool_call("fast")
    assert (call["status"], call["result"], call["arguments"]) == ("ok", {"n": 2}, {"n": 1})
    assert call["started_at"] < call["ended_at"]
    assert [action for _, action, _, _ in _audit(store)] == ["tool.call", "tool.ok"]
    store.finish_tool_call("fast", "error", audit=True, defer=True)  # ended once only
    with pytest.raises(DeferredWriteError, match="already ended"):
        store.flush()


def test_a_call_whose_start_was_written_ends_by_its_own_write(store: Store) -> None:
    store.start_tool_call("slow", "t", {}, "model", audit=True, defer=True)
    store.flush()  # the writer took the start: the end cannot join it
    store.finish_tool_call("slow", "cancelled", audit=True, defer=True)
    store.flush()
    assert store.get_tool_call("slow")["status"] == "cancelled"
    assert [action for _, action, _, _ in _audit(store)] == ["tool.call", "tool.cancelled"]
