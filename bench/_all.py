"""``make bench``: run every benchmark in ``bench/`` and print one table of their figures.

Each ``bench/NAME.py`` (files starting with ``_`` are helpers) runs in its own process,
one after another, so that none weighs on another's figures. What each prints goes to
a log (its path is printed at the end); the figures it reports (``_report.report``)
make the table: name, figure, baseline, ratio, goal, met. A benchmark that reported no
figure, or failed, has a row saying so.

Run with ``.venv/bin/python bench/_all.py [NAME ...]`` (all of them when no name is given).
The load average is printed with the table: the figures are only comparable on a quiet
machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import Row, verdict

HERE = Path(__file__).resolve().parent


def benchmarks(names: list[str]) -> list[Path]:
    found = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_"))
    if not names:
        return found
    wanted = {name.removesuffix(".py") for name in names}
    unknown = wanted - {p.stem for p in found}
    if unknown:
        raise SystemExit(f"no benchmark {', '.join(sorted(unknown))} in {HERE} "
                         f"(there are: {', '.join(p.stem for p in found)})")
    return [p for p in found if p.stem in wanted]


def cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}" if value < 10 else f"{value:.1f}"


def table(rows: list[Row], failed: dict[str, str]) -> str:
    header = ("benchmark", "figure ms", "baseline ms", "baseline", "ratio", "goal", "met")
    lines = [(f"{row.bench}: {row.name}", cell(row.figure), cell(row.baseline), row.baseline_name or "-",
              "-" if row.ratio is None else f"{row.ratio:.2f}x", row.goal, verdict(row.met))
             for row in rows]
    lines += [(f"{bench}: {why}", "-", "-", "-", "-", "-", "-") for bench, why in failed.items()]
    widths = [max(len(str(line[i])) for line in [header, *lines]) for i in range(len(header))]
    widths[3] = min(widths[3], 34)

    def show(line: tuple) -> str:
        parts = [str(v)[:widths[i]].ljust(widths[i]) if i in (0, 3) else str(v).rjust(widths[i])
                 for i, v in enumerate(line)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([show(header), rule, *map(show, lines)])


def main(names: list[str]) -> int:
    logs = Path(tempfile.mkdtemp(prefix="workbench-bench-"))
    rows: list[Row] = []
    failed: dict[str, str] = {}
    for script in benchmarks(names):
        rows_file = logs / f"{script.stem}.rows.jsonl"
        log = logs / f"{script.stem}.log"
        print(f"running {script.name} ...", flush=True)
        started = time.monotonic()
        with open(log, "w", encoding="utf-8") as out:
            code = subprocess.call([sys.executable, str(script)], stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, "BENCH_TABLE": str(rows_file)})
        took = time.monotonic() - started
        found = [Row(**json.loads(line)) for line in rows_file.read_text().splitlines()] \
            if rows_file.exists() else []
        rows += found
        if code not in (0, 1):  # 1: a benchmark's own "some goal not met"
            failed[script.stem] = f"failed (exit {code}, see {log})"
        elif not found:
            failed[script.stem] = f"no figure in the table (its output: {log})"
        print(f"  {len(found)} figures in {took:.0f} s", flush=True)
    print()
    print(table(rows, failed))
    print(f"\nload average {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores; "
          f"each benchmark's own output is in {logs}")
    return 0 if all(row.met is not False for row in rows) and not failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
