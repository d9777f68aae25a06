"""A turn the disk cuts short (``store/turns.py``, ``store/reserve.py``): the disk-full
errors recognised as such, the reserve kept beside the store, and ``fail_turn``
saving what a turn leaves open. A real store on a real file; SQLite's
``max_page_count`` makes its writes fail with SQLITE_FULL at a chosen moment."""

from __future__ import annotations

import errno
import json
import sqlite3
from pathlib import Path

import pytest

from workbench.agent.loop import TurnLoop
from workbench.agent.messages import ToolCall, ToolCallChunk, TextChunk
from workbench.store import DeferredWriteError, Store
from workbench.store.reserve import RESERVE_BYTES
from workbench.store.turns import FAILED_NAME, disk_full_words, is_disk_full
from workbench.store.writer import Failure


@pytest.fixture
def store(tmp_path: Path):
    opened = Store.open(tmp_path / "workbench.db")
    yield opened
    opened.close()


def cap(store: Store) -> None:
    """Let the store's file grow no further: its next page-adding write is SQLITE_FULL."""
    conn = store._db.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def uncap(store: Store) -> None:
    store._db.conn.execute("PRAGMA max_page_count = 1073741823")


def real_full_error(tmp_path: Path) -> sqlite3.Error:
    conn = sqlite3.connect(tmp_path / "tiny.db")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.Error) as caught:
        conn.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
        conn.commit()
    conn.close()
    return caught.value


def test_what_says_the_disk_is_full_is_told_apart(tmp_path: Path) -> None:
    full = real_full_error(tmp_path)
    assert is_disk_full(full) and disk_full_words(full) == "database or disk is full"
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    queued = DeferredWriteError([Failure("end of tool call 'c1'", full)])
    assert is_disk_full(queued) and disk_full_words(queued) == "database or disk is full"
    try:
        try:
            raise full
        except sqlite3.Error as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as wrapped:
        assert is_disk_full(wrapped)
    assert not is_disk_full(sqlite3.OperationalError("database is locked"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))


def test_the_reserve_is_kept_beside_the_store_and_made_again(tmp_path: Path) -> None:
    path = tmp_path / "workbench.db"
    with Store.open(path) as store:
        reserve = store.reserve.path
        assert reserve == tmp_path / "workbench.db.reserve"
        assert reserve.stat().st_size == RESERVE_BYTES and reserve.stat().st_blocks > 0
        assert store.reserve.release() and not reserve.exists()
    Store.open(path).close()
    assert reserve.stat().st_size == RESERVE_BYTES


def test_fail_turn_answers_the_calls_and_marks_the_turn(store: Store) -> None:
    session = store.create_session(title="t")["id"]
    store.add_message(session, "user", content="count these")
    store.add_message(session, "assistant", content="Counting.",
                      tool_calls=[{"id": "m1", "name": "word_count", "arguments": {}, "call_id": "c1"}])
    assert store.fail_turn(session, "the disk holding the store was full")
    assert not store.reserve.path.exists()
    rows = store.list_messages(session)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "system"]
    assert json.loads(rows[2]["content"])["ok"] is False
    assert rows[3]["name"] == FAILED_NAME
    assert rows[3]["content"] == "[turn failed] the disk holding the store was full"
    assert store.unanswered_calls(session) == []


class Provider:
    """A model that calls one tool, then answers at length."""

    name = "two-steps"

    def __init__(self) -> None:
        self.steps = 0

    async def stream(self, messages, tools):
        self.steps += 1
        if self.steps == 1:
            yield TextChunk("Counting.")
            yield ToolCallChunk(ToolCall("m1", "word_count", {"text": "a b"}))
        else:
            yield TextChunk("x" * 200_000)


class Outcome:
    def to_json(self):
        return {"ok": True, "result": {"words": 2}}


async def test_a_turn_whose_writes_fill_the_store_is_kept_and_marked_failed(store: Store, monkeypatch) -> None:
    session = store.create_session(title="t")["id"]
    released: list[bool] = []

    def release() -> bool:
        # The room the reserve held is free again: here, the cap is lifted.
        released.append(True)
        uncap(store)
        return True

    monkeypatch.setattr(type(store.reserve), "release", lambda self: release())

    async def call_tool(call, user_message):
        cap(store)  # the disk fills while the tool runs: its answer and the reply cannot be written
        return Outcome()

    events: list = []
    loop = TurnLoop(store=store, provider=Provider(), publish=events.append, call_tool=call_tool,
                    tools=lambda: [])
    result = await loop.run(session, "count these")
    assert released == [True]
    assert result.status == "error"
    assert f"{store.path}: the disk is full (database or disk is full)" in result.error
    assert "marked failed" in result.error
    assert events[-1].kind == "turn_ended" and events[-1].status == "error"
    rows = store.list_messages(session)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "system"]
    assert rows[0]["content"] == "count these" and rows[-1]["name"] == FAILED_NAME
    assert store.unanswered_calls(session) == []


async def test_what_was_typed_is_kept_when_its_own_write_fails(store: Store, monkeypatch) -> None:
    session = store.create_session(title="t")["id"]
    monkeypatch.setattr(type(store.reserve), "release", lambda self: uncap(store) or True)
    cap(store)

    async def call_tool(call, user_message):
        raise AssertionError("nothing runs: the turn ended at its first write")

    typed = "y" * 50_000  # more than the page the cap leaves room for
    loop = TurnLoop(store=store, provider=Provider(), publish=lambda e: None, call_tool=call_tool,
                    tools=lambda: [])
    result = await loop.run(session, typed)
    assert result.status == "error"
    rows = store.list_messages(session)
    assert [(r["role"], r["content"]) for r in rows][0] == ("user", typed)
    assert rows[-1]["name"] == FAILED_NAME


async def test_with_no_room_at_all_the_turn_says_it_could_not_be_marked(store: Store) -> None:
    session = store.create_session(title="t")["id"]
    store.reserve.release()  # no reserve: nothing frees room

    other = store.create_session(title="filler")["id"]

    async def call_tool(call, user_message):
        cap(store)
        for size in (4000, 500, 50, 5):  # every page the file has, filled to the brim
            try:
                while True:
                    store.add_message(other, "user", content="z" * size)
            except sqlite3.Error:
                pass
        return Outcome()

    loop = TurnLoop(store=store, provider=Provider(), publish=lambda e: None, call_tool=call_tool,
                    tools=lambda: [])
    result = await loop.run(session, "count these")
    assert result.status == "error" and "could not be marked failed" in result.error
    assert store.list_messages(session)[-1]["role"] == "assistant"
    uncap(store)
    # The next turn settles it, as after a crash: every call answered.
    store.settle_session(session)
    assert store.unanswered_calls(session) == []
