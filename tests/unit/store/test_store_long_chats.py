"""What a turn reads of a long chat does not grow with it: settling reads only the
messages after the last point at which every call was answered (``settled_seq``),
``Histories`` reads only what was added, and a session's count comes from its last
``seq``. Each is checked against reading the whole session, on a real store, with
other connections (another process, as far as SQLite can tell) writing between."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from workbench.agent.history import Histories, with_head
from workbench.agent.messages import ChatMessage
from workbench.agent.loop import history
from workbench.store import Store


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "workbench.db"


def whole_scan(store: Store, session_id: str) -> list[dict]:
    """The calls without an answer, found by reading every message from the start."""
    pending: list[dict] = []
    for row in store.list_messages(session_id):
        if row["role"] == "assistant":
            for call in row["tool_calls"] or ():
                pending.append({"message_id": row["id"], "model_call_id": str(call.get("id") or ""),
                                "call_id": call.get("call_id"), "name": str(call.get("name") or "")})
        elif row["role"] == "tool":
            ours, theirs = row["call_id"], row["tool_call_id"]
            found = next((p for p in pending if ours and p["call_id"] == ours), None)
            if found is None:
                found = next((p for p in pending if p["model_call_id"] == (theirs or "")
                              and not (ours and p["call_id"])), None)
            if found is not None:
                pending.remove(found)
    return pending


def test_settling_a_session_twice_reads_only_what_came_after(path: Path) -> None:
    with Store.open(path) as store:
        session = store.create_session(title="long")["id"]
        for n in range(50):
            store.add_message(session, "user", content=f"q{n}")
            store.add_message(session, "assistant", tool_calls=[{"id": "c1", "name": "t", "call_id": f"o{n}"}])
            store.add_message(session, "tool", content="{}", tool_call_id="c1", name="t", call_id=f"o{n}")
        assert store.settle_session(session) == []
        settled = store._one("SELECT settled_seq FROM sessions WHERE id = ?", (session,))["settled_seq"]
        assert settled == 150  # the last answer
        # A call left open after it (a turn that died), then settled: answered once.
        store.add_message(session, "assistant", tool_calls=[{"id": "c1", "name": "t", "call_id": "late"}])
        added = store.settle_session(session)
        assert [(a["call_id"], a["model_call_id"]) for a in added] == [("late", "c1")]
        assert store.settle_session(session) == [] and whole_scan(store, session) == []
        assert store._one("SELECT settled_seq FROM sessions WHERE id = ?",
                          (session,))["settled_seq"] == 152


def test_what_is_unanswered_is_what_a_whole_read_finds_whatever_the_order(path: Path) -> None:
    """Random sessions of calls, answers by either id, answers out of order, repeated and
    stray answers, settled at random moments (the writes coming from another
    connection): the calls still open are the same as reading every message finds."""
    chance = random.Random(20261202)
    for trial in range(40):
        with Store.open(path) as store, Store.open(path) as other:
            session = store.create_session(title=f"t{trial}")["id"]
            issued: list[tuple[str, str]] = []
            for step in range(chance.randint(5, 60)):
                writer = chance.choice([store, other])
                kind = chance.random()
                if kind < 0.35:
                    calls = [{"id": chance.choice(["c1", "c2", "call_0", ""]), "name": "t",
                              **({"call_id": f"o{trial}-{step}-{k}"} if chance.random() < 0.7 else {})}
                             for k in range(chance.randint(1, 3))]
                    writer.add_message(session, "assistant", tool_calls=calls)
                    issued += [(c["id"], c.get("call_id")) for c in calls]
                elif kind < 0.75 and issued:
                    model_id, ours = chance.choice(issued)
                    writer.add_message(session, "tool", content="{}", tool_call_id=model_id or None,
                                       name="t", call_id=ours if chance.random() < 0.6 else None)
                elif kind < 0.85:
                    writer.add_message(session, "tool", content="{}", tool_call_id="stray", name="t")
                elif kind < 0.93:
                    writer.add_message(session, "user", content="more")
                else:
                    writer.settle_session(session)
                assert store.unanswered_calls(session) == whole_scan(store, session), (trial, step)
            store.settle_session(session)
            assert whole_scan(store, session) == []


def test_a_kept_history_is_what_a_whole_read_gives_after_others_write(path: Path) -> None:
    with Store.open(path) as store, Store.open(path) as other:
        histories = Histories(store, keep=2)
        first = store.create_session(title="a")["id"]
        assert histories.of(first) == []
        store.add_message(first, "user", content="hello")
        store.add_message(first, "assistant", content="", tool_calls=[
            {"id": "c1", "name": "word_count", "arguments": {"text": "a b"}, "call_id": "o1"}])
        assert histories.of(first) == history(store, first)
        other.add_message(first, "tool", content=json.dumps({"ok": True}), tool_call_id="c1",
                          name="word_count", call_id="o1")  # another process's turn
        other.add_message(first, "assistant", content="two words")
        assert histories.of(first) == history(store, first)
        assert [m.role for m in histories.of(first)] == ["user", "assistant", "tool", "assistant"]
        # What is returned is a view no caller can change (nothing kept changes with it).
        assert not hasattr(histories.of(first), "clear")
        assert not hasattr(histories.of(first), "append")
        assert len(histories.of(first)) == 4
        # A deleted session is read again (as nothing), not served from what was kept.
        other.delete_session(first)
        assert histories.of(first) == []
        # Only the last two sessions used are kept; the others are read again whole.
        sessions = [store.create_session(title=f"s{n}")["id"] for n in range(3)]
        for n, session in enumerate(sessions):
            store.add_message(session, "user", content=f"in {n}")
            assert histories.of(session) == history(store, session)
        assert len(histories._kept) == 2 and sessions[0] not in histories._kept
        other.add_message(sessions[0], "assistant", content="answer")
        assert histories.of(sessions[0]) == history(store, sessions[0])


def test_a_sessions_count_is_its_messages(path: Path) -> None:
    with Store.open(path) as store:
        session = store.create_session(title="c")["id"]
        assert store.get_session(session)["message_count"] == 0
        for n in range(7):
            store.add_message(session, "user", content=str(n))
        assert store.get_session(session)["message_count"] == 7 == len(store.list_messages(session))
        assert [row["content"] for row in store.recent_messages(session, 3)] == ["4", "5", "6"]
        assert [row["message_count"] for row in store.list_sessions() if row["id"] == session] == [7]


def test_a_history_read_stays_what_it_was_when_more_is_added(path: Path) -> None:
    """What a step was handed is the conversation when it was read: messages added
    after it (by this turn or another process) are in the next read only, and the
    memories put before it are seen first, in order, by every way of reading it."""
    with Store.open(path) as store, Store.open(path) as other:
        histories = Histories(store)
        session = store.create_session(title="a")["id"]
        for n in range(5):
            store.add_message(session, "user", content=f"q{n}")
        read = histories.of(session)
        other.add_message(session, "assistant", content="later")
        store.add_message(session, "user", content="later still")
        assert [m.content for m in read] == ["q0", "q1", "q2", "q3", "q4"]
        assert len(histories.of(session)) == 7 and len(read) == 5
        memory = ChatMessage("system", "remember this")
        shown = with_head([memory], read)
        contents = ["remember this", "q0", "q1", "q2", "q3", "q4"]
        assert [m.content for m in shown] == contents
        assert [m.content for m in reversed(shown)] == contents[::-1]
        assert [shown[i].content for i in range(len(shown))] == contents
        assert [shown[i].content for i in range(-1, -len(shown) - 1, -1)] == contents[::-1]
        assert [m.content for m in shown[1:3]] == ["q0", "q1"]
        assert shown == [memory, *history(store, session)[:5]]
        assert [m.content for m in read] == contents[1:]  # the head is the new view's alone
        with pytest.raises(IndexError):
            shown[6]
        with pytest.raises(IndexError):
            shown[-7]
        assert with_head([memory], list(read)) == shown  # a plain list is joined too
