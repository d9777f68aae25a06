"""One line per figure, the same in every benchmark, and a row of ``make bench``'s table.

A benchmark calls :func:`report` for each figure it has a goal for (or wants in the
table): the figure, the baseline measured in the same run and what that baseline is,
and the goal — a time (``max_ms``), a ratio to the baseline (``max_ratio``) or
what the figure may add to the baseline (``max_over_ms``). It
prints the line; when ``BENCH_TABLE`` names a file (``bench/_all.py`` sets it), the row
is also appended to it as one JSON object, for the table.

Figures are milliseconds, medians (p50) of many runs unless the name says otherwise.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Row:
    """One figure of one benchmark.

    Attributes:
        bench: The benchmark's file name without ``.py`` (``ranking``).
        name: What was measured.
        figure: Milliseconds.
        baseline: Milliseconds of the baseline measured in the same run, or None.
        baseline_name: What the baseline is (the old design, a peer, a floor).
        max_ms: The goal as a time, or None.
        max_ratio: The goal as a ratio ``figure / baseline``, or None.
        max_over_ms: The goal as what the figure may add to the baseline
            (``figure - baseline``, milliseconds), or None.
    """

    bench: str
    name: str
    figure: float
    baseline: float | None
    baseline_name: str
    max_ms: float | None = None
    max_ratio: float | None = None
    max_over_ms: float | None = None

    @property
    def ratio(self) -> float | None:
        return self.figure / self.baseline if self.baseline else None

    @property
    def goal(self) -> str:
        if self.max_ms is not None:
            return f"<= {self.max_ms:g} ms"
        if self.max_ratio is not None:
            return f"<= {self.max_ratio:g}x"
        if self.max_over_ms is not None:
            return f"<= +{self.max_over_ms:g} ms"
        return "-"

    @property
    def met(self) -> bool | None:
        if self.max_ms is not None:
            return self.figure <= self.max_ms
        if self.max_ratio is not None and self.ratio is not None:
            return self.ratio <= self.max_ratio
        if self.max_over_ms is not None and self.baseline is not None:
            return self.figure - self.baseline <= self.max_over_ms
        return None


def verdict(met: bool | None) -> str:
    return "-" if met is None else "ok" if met else "OVER"


def report(bench: str, name: str, figure: float, baseline: float | None = None,
           baseline_name: str = "", *, max_ms: float | None = None,
           max_ratio: float | None = None, max_over_ms: float | None = None) -> Row:
    """Print one figure beside its baseline and goal; add it to the table when one is kept.

    Args:
        bench: The benchmark's name (its file name without ``.py``).
        name: What was measured.
        figure: Milliseconds.
        baseline: Milliseconds of the same run's baseline.
        baseline_name: What the baseline is.
        max_ms: The goal as a time.
        max_ratio: The goal as a ratio to the baseline.
        max_over_ms: The goal as milliseconds added to the baseline.
    """
    row = Row(bench, name, figure, baseline, baseline_name, max_ms, max_ratio, max_over_ms)
    against = (f"   baseline {baseline:9.3f} ms ({baseline_name})   x{row.ratio:.2f}"
               if baseline is not None and row.ratio is not None else "")
    print(f"{name:<52} {figure:9.3f} ms{against}   goal {row.goal} {verdict(row.met)}", flush=True)
    table = os.environ.get("BENCH_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(row)) + "\n")
    return row
