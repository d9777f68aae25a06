"""Start-up speed: ``workbench --version`` and the TUI's first frame, beside baselines.

Run with ``make bench`` (or ``.venv/bin/python bench/startup.py``). Each figure is the
median of several runs, printed with a baseline measured in the same run on the same
machine, and their ratio:

- ``workbench --version`` against a bare ``python -I -S -c pass`` (goal: at most 150 ms);
- the TUI's first frame, in a real pseudo-terminal, against a Textual hello-world app
  (goal: at most 450 ms; the hello world takes about 250 ms here).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RUNS = int(os.environ.get("BENCH_RUNS", "9"))

HELLO = """
from textual.app import App
from textual.widgets import Static
class Hello(App):
    def compose(self):
        yield Static("hello-first-frame")
Hello().run()
"""


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def time_command(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_first_frame(argv: list[str], marker: str, env: dict[str, str]) -> float:
    """Seconds from spawning ``argv`` in a pty until ``marker`` is on screen."""
    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(30, 100), encoding="utf-8",
                          timeout=20)
    try:
        child.expect(marker)
        return time.perf_counter() - start
    finally:
        child.sendcontrol("q")
        child.terminate(force=True)


def main() -> None:
    home = tempfile.mkdtemp(prefix="workbench-bench-")
    env = {**os.environ, "WORKBENCH_HOME": home, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    workbench = [str(BIN / "workbench")]
    subprocess.run(workbench + ["--version"], env=env, check=True, stdout=subprocess.DEVNULL)

    bare = median_ms([time_command([sys.executable, "-I", "-S", "-c", "pass"], env) for _ in range(RUNS)])
    version = median_ms([time_command(workbench + ["--version"], env) for _ in range(RUNS)])
    print(f"bare interpreter start      {bare:7.1f} ms")
    print(f"workbench --version         {version:7.1f} ms   ratio {version / bare:5.1f}x   goal <= 150 ms"
          f"   {'ok' if version <= 150 else 'OVER'}")

    hello_file = Path(home) / "hello.py"
    hello_file.write_text(HELLO)
    hello = median_ms([time_first_frame([sys.executable, str(hello_file)], "hello-first-frame", env)
                       for _ in range(RUNS)])
    tui = median_ms([time_first_frame(workbench + ["--model", "echo"], "Quit", env)
                     for _ in range(RUNS)])
    print(f"textual hello first frame   {hello:7.1f} ms")
    print(f"workbench TUI first frame   {tui:7.1f} ms   ratio {tui / hello:5.2f}x   goal <= 450 ms"
          f"   {'ok' if tui <= 450 else 'OVER'}")


if __name__ == "__main__":
    main()
