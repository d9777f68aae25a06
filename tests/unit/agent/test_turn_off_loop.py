"""A turn does its store work off the event loop the TUI draws on, and a cancelled
turn still leaves every call answered: the loop of ``agent/loop.py`` on a real store,
with a scripted model and a tool that waits to be let go."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from workbench.agent.history import Histories
from workbench.agent.loop import TurnLoop
from workbench.agent.messages import TextChunk, ToolCall, ToolCallChunk
from workbench.store import Store

STORE_WORK = ("add_message", "history_rows", "history_rows_after", "message_id_at", "touch_session")


class Watched:
    """The store, noting the thread each of its turn methods runs on."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.threads: list[tuple[str, int]] = []

    def __getattr__(self, name: str):
        found = getattr(self._store, name)
        if name not in STORE_WORK:
            return found

        def noted(*args, **kwargs):
            self.threads.append((name, threading.get_ident()))
            return found(*args, **kwargs)

        return noted


class Provider:
    """Calls ``word_count`` twice in one message, then answers."""

    async def stream(self, messages, tools):
        if messages[-1].role == "user":
            yield TextChunk("Counting.")
            yield ToolCallChunk(ToolCall("c1", "word_count", {"text": "a b"}))
            yield ToolCallChunk(ToolCall("c1", "word_count", {"text": "c"}))
        else:
            yield TextChunk("Done.")


class Outcome:
    def to_json(self):
        return {"ok": True, "result": {"words": 2}}


@pytest.fixture
def store(tmp_path: Path):
    opened = Store.open(tmp_path / "workbench.db")
    yield opened
    opened.close()


async def test_a_turns_store_work_runs_beside_the_loop(store: Store) -> None:
    session = store.create_session(title="t")["id"]
    watched = Watched(store)

    async def call_tool(call, user_message):
        return Outcome()

    loop = TurnLoop(store=watched, provider=Provider(), publish=lambda event: None,
                    call_tool=call_tool, tools=lambda: [], read_history=Histories(watched).of)
    result = await loop.run(session, "count these")
    assert result.status == "done" and result.text == "Done."
    names = {name for name, _ in watched.threads}
    assert {"add_message", "history_rows_after", "touch_session"} <= names
    assert threading.get_ident() not in {thread for _, thread in watched.threads}, watched.threads
    rows = store.list_messages(session)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "tool", "assistant"]
    assert store.unanswered_calls(session) == []


async def test_a_turn_cancelled_during_a_call_answers_every_call_first(store: Store) -> None:
    session = store.create_session(title="t")["id"]
    started = asyncio.Event()

    async def call_tool(call, user_message):
        started.set()
        await asyncio.Event().wait()  # runs until the turn is cancelled

    loop = TurnLoop(store=store, provider=Provider(), publish=lambda event: None,
                    call_tool=call_tool, tools=lambda: [], read_history=Histories(store).of)
    turn = asyncio.ensure_future(loop.run(session, "count these"))
    await started.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    # Written before the cancellation went on: nothing waits for a thread to finish.
    rows = store.list_messages(session)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "tool"]
    assert all('"cancelled"' in r["content"] for r in rows[2:])
    assert store.unanswered_calls(session) == []


async def test_a_turn_cancelled_while_its_calls_are_being_stored_answers_them(store: Store) -> None:
    """The cancellation lands while the model's message (with its two calls) is being
    written in the worker thread: the write ends, then both calls are answered."""
    session = store.create_session(title="t")["id"]
    loop = asyncio.get_running_loop()
    entered, gate = asyncio.Event(), threading.Event()

    class Slow(Watched):
        def __getattr__(self, name: str):
            found = getattr(self._store, name)
            if name != "add_message":
                return found

            def held(session_id, role, *args, **kwargs):
                if role == "assistant":
                    loop.call_soon_threadsafe(entered.set)
                    assert gate.wait(60), "never let go"
                return found(session_id, role, *args, **kwargs)

            return held

    async def call_tool(call, user_message):
        raise AssertionError("no call runs: the turn was cancelled first")

    turn_loop = TurnLoop(store=Slow(store), provider=Provider(), publish=lambda event: None,
                         call_tool=call_tool, tools=lambda: [], read_history=Histories(store).of)
    turn = asyncio.ensure_future(turn_loop.run(session, "count these"))
    await entered.wait()
    turn.cancel()
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await turn
    rows = store.list_messages(session)
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "tool"]
    assert [r["call_id"] for r in rows[2:]] == [c["call_id"] for c in rows[1]["tool_calls"]]
    assert all('"cancelled"' in r["content"] for r in rows[2:])
    assert store.unanswered_calls(session) == []
