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
