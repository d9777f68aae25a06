"""Start-up with 50 installed extensions against start-up with none.

Run with ``.venv/bin/python bench/extensions.py``. Two temporary homes are made in the
same run: one with only the built-in extension, one with 50 small generated
extensions installed through ``ExtensionManager`` as a person would (each approved,
so each is fingerprinted at every start). ``Host.open()`` followed by ``close()`` is
then timed in a fresh interpreter per sample, alternating between the homes, and the
medians are compared. Goal: the 50 extensions cost at most 100 ms more.

Only ``Host.open()`` and ``close()`` are inside the timed span: the interpreter
start and the imports are the same for both homes, and leaving them out keeps their
noise out of the difference.

Set ``BENCH_RUNS`` for more samples (default 9), ``BENCH_EXTENSIONS`` for another
count (default 50) and ``BENCH_PROFILE=1`` to print where the time of one
start with the extensions goes (cProfile, top entries by cumulative time).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import report  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "9"))
COUNT = int(os.environ.get("BENCH_EXTENSIONS", "50"))
GOAL_MS = 100.0

TIMED = """
import sys, time
from workbench.core.host import Host
start = time.perf_counter()
host = Host.open()
host.close()
print(time.perf_counter() - start)
"""

PROFILED = """
import cProfile, pstats
from workbench.core.host import Host
profile = cProfile.Profile()
profile.enable()
Host.open().close()
profile.disable()
pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
"""


def write_extension(folder: Path, index: int) -> Path:
    """A small valid Python extension with two tools, one of them with a permission."""
    name = f"bench-ext-{index:02d}"
    folder.mkdir(parents=True)
    tools = [
        {"name": f"bench_{index:02d}_count", "description": "Count words. Use when asked to count.",
         "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
         "function": "count"},
        {"name": f"bench_{index:02d}_read", "description": "Read a note. Use when asked to read.",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
         "function": "read",
         "permissions": {"read": [{"path": "$home/notes", "reason": "Read the notes you name."}]}},
    ]
    (folder / "loca.json").write_text(json.dumps({
        "name": name, "displayName": f"Bench {index}", "description": "A benchmark extension.",
        "entry": "main.py", "tools": tools}, indent=2))
    (folder / "main.py").write_text(
        "def count(args, ctx):\n    return len(args.get('text', '').split())\n\n\n"
        "def read(args, ctx):\n    return open(args['path']).read()\n")
    (folder / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    (folder / "README.md").write_text(f"# {name}\n\nA benchmark extension.\n")
    return folder


def env_for(home: Path, work: Path) -> dict[str, str]:
    return {**os.environ, "WORKBENCH_HOME": str(home), "HOME": str(work),
            "PYTHONDONTWRITEBYTECODE": "1"}


def prepare(home: Path, work: Path, count: int, sources: Path) -> None:
    """Start once (installing the built-in), then install ``count`` extensions."""
    env = env_for(home, work)
    subprocess.run([sys.executable, "-c", TIMED], env=env, cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    if not count:
        return
    script = f"""
import sys
from pathlib import Path
from workbench.config.home import Home
from workbench.ext.manager import ExtensionManager
from workbench.store import Store
home = Home.resolve().ensure()
with Store.open(home.db_path) as store:
    manager = ExtensionManager(home, store, registry_url="http://127.0.0.1:9")
    for folder in sorted(Path({str(sources)!r}).iterdir()):
        manager.install(str(folder), approve=lambda plan: True)
    states = {{e.name: e.state for e in manager.list()}}
bad = {{name: state for name, state in states.items() if state != "ok"}}
if bad or len(states) != {count} + 1:
    sys.exit(f"unexpected states: {{states}}")
"""
    subprocess.run([sys.executable, "-c", script], env=env, cwd=work, check=True)


def sample(home: Path, work: Path) -> float:
    done = subprocess.run([sys.executable, "-c", TIMED], env=env_for(home, work), cwd=work,
                          check=True, capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1]) * 1000


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="workbench-bench-ext-"))
    try:
        sources = base / "sources"
        for index in range(COUNT):
            write_extension(sources / f"ext{index:02d}", index)
        empty, full, work = base / "home-none", base / "home-many", base / "work"
        work.mkdir()
        prepare(empty, work, 0, sources)
        prepare(full, work, COUNT, sources)

        none_ms: list[float] = []
        many_ms: list[float] = []
        for _ in range(RUNS):
            none_ms.append(sample(empty, work))
            many_ms.append(sample(full, work))
        none, many = statistics.median(none_ms), statistics.median(many_ms)
        print(f"start, no extensions        {none:7.1f} ms   (median of {RUNS})")
        print(f"start, {COUNT} extensions        {many:7.1f} ms   (median of {RUNS})")
        report("extensions", f"Host.open + close, {COUNT} extensions installed", many, none,
               "the same with none installed", max_over_ms=GOAL_MS)
        if os.environ.get("BENCH_PROFILE"):
            subprocess.run([sys.executable, "-c", PROFILED], env=env_for(full, work), cwd=work,
                           check=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
