"""Start-up as a person meets it: ``workbench call``, ``workbench --version`` and the TUI's
first frame, each beside a baseline measured in the same run, without and with bytecode.

Run with ``make bench`` (or ``.venv/bin/python bench/startup.py``). Each figure is the
median of several runs (``BENCH_RUNS``, default 9), wall time from spawning the command
until it has ended (or, for the TUI, until its prompt box is on the screen), and is
reported through ``_report.report`` so ``make bench``'s table shows it:

- ``workbench call word_count`` end to end, against a Python script that imports the
  built-in extension's module and calls the same function (goal: at most 150 ms with
  bytecode; without, the figure and its ratio are shown);
- the CPU time (user and system, all its processes) of that ``workbench call`` beside
  the script's, a figure the machine's load changes far less than wall time (no goal);
- ``workbench --version``, against a bare ``python -c pass`` (goal: at most 150 ms);
- the TUI's first frame in a real pseudo-terminal of 80x24, until the prompt box is
  drawn, against a Textual hello world's first frame in the same terminal (goal: at most
  2.2 times the hello world, without bytecode and with it).

"Without bytecode" runs every interpreter of the measurement with an empty
``PYTHONPYCACHEPREFIX`` that nothing is written to (``PYTHONDONTWRITEBYTECODE``): each
module is compiled from its source, as on a first start of an install that compiled
none. "With bytecode" uses a prefix the first run filled. The sandbox's zygote runs
``python -I``, which ignores both: it uses the bytecode the install compiled.
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

from _report import report

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RUNS = int(os.environ.get("BENCH_RUNS", "9"))
SIZE = (24, 80)
"""Rows and columns of the pseudo-terminal."""
PROMPT = re.compile(r"M(?:\x1b\[[0-9;]*m)*essage the model")
"""What the prompt box shows when it is drawn: its placeholder, whose first letter sits
under the cursor and so comes in a style of its own (the whole word only once the
cursor blinks off, half a second later)."""

HELLO = """
from textual.app import App
from textual.widgets import Static
class Hello(App):
    def compose(self):
        yield Static("hello-first-frame")
Hello().run()
"""

DIRECT = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("builtin_main", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
class Ctx:
    def set_progress(self, *args, **kwargs):
        pass
print(json.dumps(module.word_count(json.loads(sys.argv[2]), Ctx())))
"""
"""The baseline of ``workbench call``: import the tool's module and call it."""

ARGS = json.dumps({"text": "one two three"})


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def time_command(argv: list[str], env: dict[str, str], cwd: Path,
                 cpu: list[float] | None = None) -> float:
    """Seconds from spawning ``argv`` until it has ended; with ``cpu``, the CPU seconds
    (user and system) of its processes, its zygote and workers included, are added to it."""
    before = _children_cpu()
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    took = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_children_cpu() - before)
    return took


def time_first_frame(argv: list[str], marker: str | re.Pattern[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning ``argv`` in a pty until ``marker`` is on screen."""
    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, cwd=str(cwd), dimensions=SIZE,
                          encoding="utf-8", timeout=30)
    try:
        child.expect(marker)
        return time.perf_counter() - start
    finally:
        child.sendcontrol("q")
        child.terminate(force=True)


def bytecode_env(base: dict[str, str], prefix: Path, *, cold: bool) -> dict[str, str]:
    env = {**base, "PYTHONPYCACHEPREFIX": str(prefix)}
    if cold:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(label: str, env: dict[str, str], work: Path, hello: Path) -> None:
    """Every figure in one bytecode state (``label``), each beside its baseline,
    the two alternating run by run so that a change of load weighs on both."""
    workbench = [str(BIN / "workbench")]
    call = workbench + ["call", "word_count", "--args", ARGS]
    direct = [sys.executable, "-c", DIRECT, str(ROOT / "extensions" / "builtin" / "main.py"), ARGS]
    pairs = {
        "call": (call, direct),
        "version": (workbench + ["--version"], [sys.executable, "-c", "pass"]),
    }
    times: dict[str, list[float]] = {f"{name}{side}": [] for name in pairs for side in ("", "-base")}
    times.update({"tui": [], "tui-base": []})
    cpu: dict[str, list[float]] = {"call": [], "call-base": []}
    for _ in range(RUNS):
        for name, (ours, base) in pairs.items():
            times[name].append(time_command(ours, env, work, cpu.get(name)))
            times[f"{name}-base"].append(time_command(base, env, work, cpu.get(f"{name}-base")))
        times["tui"].append(time_first_frame(workbench + ["--model", "echo"], PROMPT, env, work))
        times["tui-base"].append(time_first_frame([sys.executable, str(hello)], "hello-first-frame",
                                                  env, work))
    goal_call = {"max_ms": 150.0} if label == "bytecode" else {}
    report("startup", f"workbench call word_count ({label})", median_ms(times["call"]),
           median_ms(times["call-base"]), "a script importing the tool, calling it", **goal_call)
    # The same call's CPU time, every process of it counted: a figure the load of the
    # machine changes far less than wall time (its zygote runs beside the host, on
    # another core when there is one free).
    report("startup", f"workbench call word_count, CPU of its processes ({label})", median_ms(cpu["call"]),
           median_ms(cpu["call-base"]), "the script's CPU")
    report("startup", f"workbench --version ({label})", median_ms(times["version"]),
           median_ms(times["version-base"]), "python -c pass", **goal_call)
    report("startup", f"TUI first frame 80x24, prompt drawn ({label})", median_ms(times["tui"]),
           median_ms(times["tui-base"]), "Textual hello world, first frame", max_ratio=2.2)


def main() -> None:
    base_dir = Path(tempfile.mkdtemp(prefix="workbench-bench-startup-"))
    work = base_dir / "work"
    work.mkdir()
    env = {**os.environ, "WORKBENCH_HOME": str(base_dir / "home"), "TERM": "xterm-256color",
           "TEXTUAL_ANIMATIONS": "none", "HOME": str(base_dir / "person")}
    hello = base_dir / "hello.py"
    hello.write_text(HELLO)
    warm = bytecode_env(env, base_dir / "pycache-warm", cold=False)
    # The first start makes the home and installs the built-in; it also fills the
    # bytecode prefix of the runs with bytecode.
    subprocess.run([str(BIN / "workbench"), "call", "word_count", "--args", ARGS], env=warm, cwd=work,
                   check=True, stdout=subprocess.DEVNULL)
    time_first_frame([str(BIN / "workbench"), "--model", "echo"], PROMPT, warm, work)
    time_first_frame([sys.executable, str(hello)], "hello-first-frame", warm, work)
    print(f"median of {RUNS} runs; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    measure("no bytecode", bytecode_env(env, base_dir / "pycache-cold", cold=True), work, hello)
    measure("bytecode", warm, work, hello)


if __name__ == "__main__":
    main()
