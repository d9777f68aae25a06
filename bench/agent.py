"""The agent's own costs: resuming a long session, the turn loop per call.

Run with ``.venv/bin/python bench/agent.py [resume] [loop] [long]`` (all by default).
Each figure is a median of many runs in a fresh temporary home, printed with its goal
(ranking the tools for a message, cold and warm, is ``bench/ranking.py``):

b. resuming a session of 10,000 messages: ``Host.open`` plus what a resumed turn
   does before it calls the model — find the session, build the provider's view of
   its history (the memories message first, then every stored message as a
   ``ChatMessage``) and the tools on offer: goal at most 300 ms;
c. the turn loop's own overhead per tool call: a scripted model calls the built-in
   ``word_count`` (sandboxed) once per step, against the same call made directly
   through the gateway in the same run; the difference is the loop's share (model
   step, messages stored, history rebuilt, memories and tools prepared, events).
   The sandboxed call dwarfs it and varies by a few ms, so the time from one call's
   end to the next call's start inside a turn is printed too: the loop's work
   between calls, measured directly;
d. a turn in a long chat: prompt to reply with the echo model in a chat of 10,000
   messages, beside the same turn in a chat of 10 messages measured in the same run
   (turns alternate between the two): goal at most 1.1x. Beside it, the longest the
   event loop the turn runs on (the TUI's) was blocked during a turn: a ticker task
   on that loop records the largest gap between its ticks, and the same ticker with
   no turn running is the baseline.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNS = int(os.environ.get("BENCH_RUNS", "9"))
SESSION_MESSAGES = 10_000
CALLS_PER_TURN = 20
TURNS = int(os.environ.get("BENCH_TURNS", "4"))


def verdict(value_ms: float, goal_ms: float) -> str:
    return f"goal <= {goal_ms:g} ms  {'ok' if value_ms <= goal_ms else 'OVER'}"


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def make_session(home_root: Path) -> str:
    """A session of ``SESSION_MESSAGES`` messages: prompts, tool calls, results, answers."""
    from workbench.config.home import Home
    from workbench.store import Store

    home = Home.resolve({"WORKBENCH_HOME": str(home_root)}).ensure()
    with Store.open(home.db_path) as store:
        session = store.create_session(title="a long chat", model="echo")["id"]
        with store.transaction():
            for n in range(SESSION_MESSAGES // 4):
                store.add_message(session, "user", content=f"Question {n}: " + "some words " * 20)
                store.add_message(session, "assistant", content="Let me count.", tool_calls=[
                    {"id": f"c{n}", "name": "word_count", "arguments": {"text": "one two three"}}])
                store.add_message(session, "tool", content=json.dumps(
                    {"ok": True, "result": {"words": 3, "lines": 1, "characters": 13}}),
                    tool_call_id=f"c{n}", name="word_count")
                store.add_message(session, "assistant", content="Three words. " * 10)
    return session


def bench_resume(root: Path) -> None:
    from workbench.agent.loop import history
    from workbench.core.host import Host

    session = make_session(root / "home")
    opens, views, totals = [], [], []
    for _ in range(RUNS):
        start = time.perf_counter()
        host = Host.open(cwd=root, model="echo")
        opened = time.perf_counter()
        found = host.chats.get(session)["id"]
        messages = host.memories.context_messages(found) + history(host.store, found)
        host.chats.tool_specs(found)
        done = time.perf_counter()
        host.close()
        assert len(messages) == SESSION_MESSAGES
        opens.append(opened - start)
        views.append(done - opened)
        totals.append(done - start)
    total = median_ms(totals)
    print(f"b. resume a 10,000-message session   median {total:6.1f} ms   {verdict(total, 300)}")
    print(f"   (Host.open {median_ms(opens):.1f} ms; session, history, memories and tools "
          f"{median_ms(views):.1f} ms)")


async def _loop_and_bare(root: Path) -> tuple[list[float], list[float], list[float]]:
    from workbench.core.host import Host
    from workbench.events import ToolCallEnded, ToolCallStarted

    script = root / "calls.json"
    script.write_text(json.dumps(
        [{"tool_calls": [{"name": "word_count", "arguments": {"text": f"call {n}"}}]}
         for n in range(CALLS_PER_TURN)] + [{"text": "done"}]))
    loop, bare, gaps = [], [], []
    marks: list[tuple[str, float]] = []

    def mark(event: object) -> None:
        if isinstance(event, (ToolCallStarted, ToolCallEnded)) and getattr(event, "session_id", None):
            marks.append((type(event).__name__, time.perf_counter()))

    async with Host.open(cwd=root, model=f"scripted:{script}") as host:
        host.bus.subscribe(mark)
        await host.tools.call("word_count", {"text": "warm up"})
        for turn in range(TURNS):
            start = time.perf_counter()
            for n in range(CALLS_PER_TURN):
                outcome = await host.tools.call("word_count", {"text": f"call {n}"})
                assert outcome.ok, outcome.error
            bare.append((time.perf_counter() - start) / CALLS_PER_TURN)
            marks.clear()
            start = time.perf_counter()
            result = await host.chats.send_prompt(f"count, turn {turn}")
            loop.append((time.perf_counter() - start) / CALLS_PER_TURN)
            gaps += [b[1] - a[1] for a, b in zip(marks, marks[1:])
                     if (a[0], b[0]) == ("ToolCallEnded", "ToolCallStarted")]
            assert result.status == "done", result.error
            rows = host.chats.messages(result.session_id)
            assert sum(1 for row in rows if row["role"] == "tool") == CALLS_PER_TURN
    return loop, bare, gaps


def bench_loop(root: Path) -> None:
    loop, bare, gaps = asyncio.run(_loop_and_bare(root))
    per_loop, per_bare = median_ms(loop), median_ms(bare)
    print(f"c. a tool call through the turn loop median {per_loop:6.2f} ms per call "
          f"({CALLS_PER_TURN} calls a turn, {TURNS} turns)")
    print(f"   the same call made directly      median {per_bare:6.2f} ms per call")
    print(f"   the loop's own overhead per call        {per_loop - per_bare:6.2f} ms")
    print(f"   from one call's end to the next's start  median {median_ms(gaps):6.2f} ms "
          f"({len(gaps)} gaps)")


SHORT_MESSAGES = 10
LONG_TURNS = int(os.environ.get("BENCH_LONG_TURNS", "40"))


def make_short_session(home_root: Path) -> str:
    from workbench.config.home import Home
    from workbench.store import Store

    home = Home.resolve({"WORKBENCH_HOME": str(home_root)}).ensure()
    with Store.open(home.db_path) as store:
        session = store.create_session(title="a short chat", model="echo")["id"]
        for n in range(SHORT_MESSAGES // 2):
            store.add_message(session, "user", content=f"Question {n}: " + "some words " * 20)
            store.add_message(session, "assistant", content="Three words. " * 10)
    return session


TICK_S = 0.0005


class Ticker:
    """The largest gap between the ticks of a task on the running loop: how long the
    loop was blocked at most while it ran."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task | None = None

    async def _tick(self) -> None:
        while True:  # a tick due in 0.5 ms that comes later waited for the blocked loop
            before = time.perf_counter()
            await asyncio.sleep(TICK_S)
            self.longest = max(self.longest, time.perf_counter() - before - TICK_S)

    def __enter__(self) -> Ticker:
        self.longest = 0.0
        self._task = asyncio.ensure_future(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def _long_and_short(root: Path, long_id: str, short_id: str) -> dict[str, list[float]]:
    from workbench.core.host import Host

    figures: dict[str, list[float]] = {"long": [], "short": [], "long_block": [],
                                       "short_block": [], "idle_block": []}
    async with Host.open(cwd=root, model="echo") as host:
        for session in (long_id, short_id):  # the first turn of each warms the host
            await host.chats.send_prompt("warm up", session)
        for turn in range(LONG_TURNS):
            pair = [("long", long_id), ("short", short_id)]
            for name, session in pair if turn % 2 else pair[::-1]:  # neither always first
                with Ticker() as ticker:
                    start = time.perf_counter()
                    result = await host.chats.send_prompt(f"hello, turn {turn}", session)
                    figures[name].append(time.perf_counter() - start)
                figures[f"{name}_block"].append(ticker.longest)
                assert result.status == "done", result.error
            with Ticker() as ticker:
                await asyncio.sleep(0.05)
            figures["idle_block"].append(ticker.longest)
    return figures


def bench_long_turn(root: Path) -> None:
    long_id = make_session(root / "home")
    short_id = make_short_session(root / "home")
    figures = asyncio.run(_long_and_short(root, long_id, short_id))
    long, short = median_ms(figures["long"]), median_ms(figures["short"])
    from _report import report

    report("agent", "d. a turn in a 10,000-message chat", long, short, "a 10-message chat",
           max_ratio=1.1)
    print(f"   the loop blocked at most, per turn: long chat median "
          f"{median_ms(figures['long_block']):.1f} ms, short chat "
          f"{median_ms(figures['short_block']):.1f} ms, no turn {median_ms(figures['idle_block']):.1f} ms "
          f"({LONG_TURNS} turns each)")


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="workbench-bench-agent-"))
    os.environ["WORKBENCH_HOME"] = str(root / "home")
    parts = {"resume": lambda: bench_resume(root), "loop": lambda: bench_loop(root),
             "long": lambda: bench_long_turn(root)}
    chosen = sys.argv[1:] or list(parts)
    unknown = [name for name in chosen if name not in parts]
    if unknown:
        sys.exit(f"unknown part {', '.join(unknown)}; the parts are {', '.join(parts)}")
    for name in chosen:
        parts[name]()


if __name__ == "__main__":
    main()
