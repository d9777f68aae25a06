"""Ranking 500 tools for a message: the first message after the tool list changes
(cold) and the ones after it (warm), beside a full rebuild in the same run.

Run with ``.venv/bin/python bench/ranking.py``. Each round (``BENCH_RUNS``, 31) times,
in turn, what a model step asks of the tools for one message — ``disclose``: the
catalog of the list (its index and schema tokens, made on first use) and the choice of
what to offer — for:

- the list changed by a chat's switch (one extension's 20 tools switched off): the
  same tool objects in a new list;
- one extension reloaded with changed descriptions (20 new tools, the other 480 kept);
- every tool reloaded (500 new tool objects, the same words: a restart of the sources);
- a first start: 500 tools never seen.

In those three the loader has prepared the tools as it does when it loads them
(``disclosure.prepare_soon``: their words read and schema tokens counted, on a thread
of its own; waited for here, and its time at the first start printed apart). Then:

- a first start with nothing prepared (the loader's thread not done yet): the worst case;
- warm: the next message on an unchanged list (its ranking, and the whole choice).

The baseline, timed in the same round on fresh tool objects, is the design this
replaced: every tool's words read, every term's BM25F contribution worked out and
every schema's tokens counted when a list is first ranked (``Bm25`` over
``tool_fields``, as the index was), then the ranking. Goal: at most 5 ms, cold and warm.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _report import report  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "31"))
COUNT = 500
BUDGET = 6000
MESSAGES = [
    "Email Sam the quarterly report and add dinner at 8 to my calendar",
    "How many words are in this paragraph?",
    "what files are in my Downloads folder?",
    "convert 250 dollars to euros at today's rate",
    "hello there",
]


def make_tools(count: int, *, edition: int = 0) -> list:
    """``count`` tools with realistic descriptions, triggers and schemas (new string
    objects each time, as a reload reading manifests makes)."""
    from workbench.tools.registry import Tool

    verbs = ["export", "import", "archive", "validate", "render", "sync", "audit", "tag", "merge",
             "rotate", "encrypt", "compress", "preview", "index", "restore", "send", "list", "read"]
    nouns = ["email signature", "calendar event", "file checksum", "folder permission",
             "image metadata", "currency rate", "weather forecast", "git commit", "timer",
             "contact", "word count", "invoice", "playlist", "spreadsheet", "backup",
             "database table", "shopping list", "photo album", "translation"]
    tools = []
    for n, (verb, noun) in enumerate(itertools.islice(itertools.cycle(
            itertools.product(verbs, nouns)), count)):
        name = f"{verb}_{noun.replace(' ', '_')}_{n}"
        tools.append(Tool(
            name=name, description=f"{verb.capitalize()} the {noun} of a project or a person. "
                                   f"Use when the user asks to {verb} a {noun}."
                                   + (f" Edition {edition}." if edition else ""),
            parameters={"type": "object", "properties": {
                "target": {"type": "string", "description": f"Which {noun}."},
                "dry_run": {"type": "boolean", "description": "Only say what would change."}}},
            extension=f"ext-{n % 25}", source="extension", function=name, folder=Path("."),
            entry=None, runtime="python", always_available=(n % 100 == 0),
            triggers=(f"{verb} my {noun}", f"please {verb} the {noun}")))
    return tools


def timed(work, *args) -> float:
    """Milliseconds ``work`` takes, the garbage of what ran before collected first (so
    that it is not collected on this one's clock)."""
    gc.collect()
    start = time.perf_counter()
    work(*args)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    from workbench.tools import ranking
    from workbench.tools.disclosure import disclose, prepare_soon, schema_tokens
    from workbench.tools.ranking import TOOL_FIELDS, Bm25, index_for, query_terms, tool_fields

    def full_rebuild(tools: list, message: str) -> None:
        index = Bm25([tool_fields(tool) for tool in tools], TOOL_FIELDS)
        [schema_tokens(tool) for tool in tools]
        index.ranked(query_terms(message))

    def old_rank(index: Bm25, message: str) -> None:
        index.ranked(query_terms(message))

    def load(tools: list) -> None:
        """What the loader does when tools are loaded (on its own thread, waited for here)."""
        thread = prepare_soon(tools)
        if thread is not None:
            thread.join()

    samples: dict[str, list[float]] = {key: [] for key in (
        "baseline", "switch", "extension", "reload", "first", "load", "unprepared", "warm",
        "warm baseline", "warm choice")}
    tools = make_tools(COUNT)
    disclose(tools, MESSAGES[0], BUDGET)
    for run, message in zip(range(RUNS), itertools.cycle(MESSAGES)):
        fresh = make_tools(COUNT, edition=run + 1)
        samples["baseline"].append(timed(full_rebuild, fresh, message))
        switched = [tool for tool in tools if tool.extension != f"ext-{run % 25}"]
        samples["switch"].append(timed(disclose, switched, message, BUDGET))
        edited = f"ext-{run % 25}"
        changed = [dataclasses.replace(tool, description=tool.description + f" Now {run}.")
                   if tool.extension == edited else tool for tool in tools]
        load(changed)
        samples["extension"].append(timed(disclose, changed, message, BUDGET))
        tools = make_tools(COUNT)
        load(tools)
        samples["reload"].append(timed(disclose, tools, message, BUDGET))
        following = MESSAGES[(run + 1) % len(MESSAGES)]
        samples["warm"].append(timed(index_for(tools).rank, following))
        reference = Bm25([tool_fields(tool) for tool in fresh], TOOL_FIELDS)
        samples["warm baseline"].append(timed(old_rank, reference, following))
        samples["warm choice"].append(timed(disclose, tools, following, BUDGET))
        ranking._documents.start_over()
        unseen = make_tools(COUNT, edition=1000 + run)
        samples["load"].append(timed(load, unseen))
        samples["first"].append(timed(disclose, unseen, message, BUDGET))
        never = make_tools(COUNT, edition=2000 + run)
        samples["unprepared"].append(timed(disclose, never, message, BUDGET))
        ranking._documents.start_over()
        load(tools)

    p50 = {key: statistics.median(found) for key, found in samples.items()}
    base = p50["baseline"]
    print(f"ranking {COUNT} tools, p50 of {RUNS} rounds (the whole disclosure choice for a message)")
    report("ranking", "cold: a chat's switch changed the list", p50["switch"], base, "full rebuild",
           max_ms=5)
    report("ranking", "cold: one extension reloaded (20 changed)", p50["extension"], base,
           "full rebuild", max_ms=5)
    report("ranking", "cold: every tool reloaded (same words)", p50["reload"], base, "full rebuild",
           max_ms=5)
    report("ranking", "cold: first start (500 never seen)", p50["first"], base, "full rebuild",
           max_ms=5)
    report("ranking", "  the loader's thread at that start (off the turn)", p50["load"], base,
           "full rebuild")
    report("ranking", "cold: first start, nothing read at load (worst)", p50["unprepared"], base,
           "full rebuild")
    report("ranking", "warm: rank for the next message", p50["warm"], p50["warm baseline"],
           "rank on a built index (old)", max_ms=5)
    report("ranking", "warm: the whole choice for it", p50["warm choice"], p50["warm baseline"],
           "rank on a built index (old)", max_ms=5)


if __name__ == "__main__":
    main()
