"""The chat's speed with a long conversation: appending, jumping to the top, memory.

Run with ``.venv/bin/python bench/tui.py``. A session of 10,000 stored messages (the
person's prompts and the model's Markdown replies) is resumed in the real app, headless
at 80x24, and each figure is the median of many runs, timed from the action until the
next frame has been drawn (so it counts the layout and the drawing, not just the call).
Beside each, the same action in a chat of 10 messages, measured in the same run on the
same machine, and their ratio: the long chat should cost about what a short one does.

a. resuming the chat: its history read (in a worker) and the latest messages shown;
b. appending one message to the chat, as a prompt or a finished reply does
   (goal: at most 50 ms);
c. jumping to the top (Ctrl+Home) from the latest messages, until the first message is
   on screen (goal: at most 50 ms); then one page up from the latest messages, which
   mounts older ones above the view (the short chat has none to mount: no ratio);
d. the process's resident memory with the long chat shown, and before the app was
   opened (goal: at most 300 MB).

CPU time is printed beside the wall time: on a busy machine the wall time waits for
other processes, the CPU time does not.
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

from _report import report  # noqa: E402  (bench/ is the script's folder on sys.path)

LONG = 10_000
SHORT = 10
RUNS = int(os.environ.get("BENCH_RUNS", "25"))
RESUMES = 5
SIZE = (80, 24)

REPLY = ("Here is what I found:\n\n- the **first** point, with `code`\n- the second one\n\n"
         "And a closing sentence that is long enough to wrap at eighty columns, or nearly.")


def rss_mb() -> float:
    """This process's resident memory, from ``/proc`` (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_session(store, count: int) -> str:
    session = store.create_session(title=f"a chat of {count} messages", model="echo")["id"]
    with store.transaction():
        for n in range(count):
            if n % 2 == 0:
                store.add_message(session, "user", content=f"Question {n}: how about this?")
            else:
                store.add_message(session, "assistant", content=f"Answer {n}. {REPLY}")
    return session


async def drawn(app) -> None:
    """Wait until the screen has been refreshed (laid out and drawn) once more."""
    done = asyncio.Event()
    app.screen.call_after_refresh(done.set)
    await done.wait()


class Timer:
    """Wall and CPU time of one measured step."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    async def measure(self, step) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        await step()
        self.wall.append(time.perf_counter() - wall)
        self.cpu.append(time.process_time() - cpu)

    @property
    def ms(self) -> float:
        return statistics.median(self.wall) * 1000

    @property
    def cpu_ms(self) -> float:
        return statistics.median(self.cpu) * 1000


async def measure_chat(app, session: str, count: int) -> dict[str, Timer]:
    """Resume ``session`` in ``app`` and time appending and jumping to the top."""
    from workbench.tui.widgets.message_list import MessageList

    chat = app.chat
    messages = chat.query_one(MessageList)
    timers = {name: Timer() for name in ("resume", "append", "top", "page")}

    async def resume() -> None:
        chat.resume(session)
        await app.workers.wait_for_complete()
        await drawn(app)

    for _ in range(RESUMES):
        await timers["resume"].measure(resume)
    assert messages.entry_count == count, messages.entry_count

    for n in range(RUNS):
        async def append(n: int = n) -> None:
            await messages.add_message("user", f"One more message, number {n}.")
            await drawn(app)

        await timers["append"].measure(append)
        assert messages.following

        async def top() -> None:
            await app.run_action("first_message", chat)
            await drawn(app)

        await timers["top"].measure(top)
        first = messages.views[0]
        assert messages.window[0] == 0 and messages.scroll_y == 0 and first.region.y >= 0
        await app.run_action("latest_message", chat)
        await drawn(app)

        async def page() -> None:
            messages.scroll_page_up(animate=False)
            await drawn(app)
            while messages._loading:
                await drawn(app)

        await timers["page"].measure(page)
        await app.run_action("latest_message", chat)
        await drawn(app)
    return timers


async def run(root: Path) -> None:
    from workbench.tui.app import open_app

    (root / "replies.json").write_text(json.dumps([]), encoding="utf-8")
    before = rss_mb()
    app = open_app(model="scripted:replies.json", cwd=root)
    try:
        long = make_session(app.host.store, LONG)
        short = make_session(app.host.store, SHORT)
        async with app.run_test(size=SIZE, headless=True) as pilot:
            await pilot.pause()
            await measure_chat(app, short, SHORT)  # warms up: imports, styles, caches
            small = await measure_chat(app, short, SHORT)
            large = await measure_chat(app, long, LONG)
            await drawn(app)
            shown = rss_mb()
    finally:
        app.host.close()

    print(f"a chat of {LONG:,} messages against one of {SHORT}, {SIZE[0]}x{SIZE[1]}, "
          f"median of {RUNS} runs")

    def line(label: str, name: str, goal: float | None = None) -> None:
        big, base = large[name], small[name]
        print(f"  cpu {big.cpu_ms:6.1f} ms, {SHORT} messages' cpu {base.cpu_ms:6.1f} ms")
        report("tui", label, big.ms, base.ms, f"the same in a chat of {SHORT} messages", max_ms=goal)

    line("a. resume the chat", "resume")
    line("b. append one message", "append", 50)
    line("c. jump to the top", "top", 50)
    page = large["page"]
    print(f"  cpu {page.cpu_ms:6.1f} ms (nothing to mount in a short chat: no baseline)")
    report("tui", "c. one page up, older mounted", page.ms, max_ms=50)
    print(f"d. resident memory {shown:7.1f} MB with the long chat shown "
          f"({before:.1f} MB before the app)   goal <= 300 MB  {'ok' if shown <= 300 else 'OVER'}")


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="workbench-bench-tui-"))
    os.environ["WORKBENCH_HOME"] = str(root / "home")
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    asyncio.run(run(root))


if __name__ == "__main__":
    main()
