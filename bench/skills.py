"""What listing the skills costs each turn.

Run with ``.venv/bin/python bench/skills.py``. The memories message lists every skill
by the description in its YAML front matter, at every model step. Printed: the median
time to plan that message for 500 skills (the 24 front-matter forms of
``tests/fixtures/skills``, each made distinct) with their front matter read before
(the steady state of a chat), beside the same plan when every front matter is parsed
anew (the baseline, measured in the same run). Goal: the steady state at most 10 ms.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from _report import report
from workbench.capabilities import memories
from workbench.core.memory_context import MemoryItem, plan_context

ROOT = Path(__file__).resolve().parents[1]
COUNT = 500
RUNS = 9


def items() -> list[MemoryItem]:
    texts = [p.read_bytes().decode() for p in sorted((ROOT / "tests/fixtures/skills").glob("*/SKILL.md"))]
    return [MemoryItem(title=f"skill-{i}", kind="skill", source="user", summary=None,
                       content=texts[i % len(texts)] + f"\nVariant {i}.\n", updated=0)
            for i in range(COUNT)]


def timed(found: list[MemoryItem], fresh: bool) -> float:
    samples = []
    for _ in range(RUNS):
        if fresh:
            memories._READ.clear()
        start = time.perf_counter()
        plan_context(found, 200_000)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    found = items()
    baseline = timed(found, fresh=True)
    plan_context(found, 200_000)
    steady = timed(found, fresh=False)
    report("skills", f"listing {COUNT} skills, front matter read before", steady, baseline,
           "every front matter parsed anew", max_ms=10)


if __name__ == "__main__":
    main()
