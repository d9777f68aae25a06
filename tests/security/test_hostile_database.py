"""Tools that try to get more of the host through their private database — and fail.

The host runs a tool's SQL itself, in its own process: a statement that grows the file
past its cap, changes a setting that is the host's (``soft_heap_limit``, ``cache_size``,
``max_page_count``…), reads the host's paths, loads an extension or runs for ever must
be refused with a clear error, and the host must go on serving.
"""

from __future__ import annotations

import sqlite3

import pytest

from workbench.capabilities import database

pytestmark = pytest.mark.security

PY_CODE = r'''
def sql(args, ctx):
    if args.get("query"):
        return ctx.db.query(args["sql"])
    return ctx.db.execute(args["sql"])

def grow(args, ctx):
    ctx.db.execute("CREATE TABLE IF NOT EXISTS hoard (blob BLOB)")
    written = 0
    try:
        for _ in range(args["rounds"]):
            ctx.db.execute("INSERT INTO hoard VALUES (randomblob(100000))")
            written += 1
    except Exception as exc:
        return {"written": written, "error": f"{type(exc).__name__}: {exc}"}
    return {"written": written}
'''

TS_CODE = r'''
export async function sql(args: { sql: string; query?: boolean }, ctx: any) {
  return args.query ? await ctx.db.query(args.sql) : await ctx.db.execute(args.sql);
}
export async function grow(args: { rounds: number }, ctx: any) {
  await ctx.db.execute("CREATE TABLE IF NOT EXISTS hoard (blob BLOB)");
  let written = 0;
  try {
    for (let i = 0; i < args.rounds; i++) {
      await ctx.db.execute("INSERT INTO hoard VALUES (randomblob(100000))");
      written++;
    }
  } catch (error) {
    return { written, error: `${(error as Error).name}: ${(error as Error).message}` };
  }
  return { written };
}
'''

REFUSED = [
    "PRAGMA max_page_count = 1000000000",
    "PRAGMA soft_heap_limit = 1",
    "PRAGMA hard_heap_limit = 1",
    "PRAGMA cache_size = -4000000",
    "PRAGMA mmap_size = 1000000000",
    "PRAGMA threads = 8",
    "PRAGMA temp_store_directory = '/tmp'",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA journal_mode = OFF",
    "PRAGMA writable_schema = ON",
    "PRAGMA schema_version = 7",
    "PRAGMA database_list",
    "SELECT * FROM pragma_database_list",
    "SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')",
    "ATTACH DATABASE '/tmp/elsewhere.db' AS other",
]


def declare(lab, runtime: str) -> str:
    name = f"db{runtime}"
    lab.extension(name, PY_CODE if runtime == "python" else TS_CODE, {"sql": {}, "grow": {}},
                  runtime=runtime, database=True)
    return name


def heap_limit() -> int:
    return sqlite3.connect(":memory:").execute("PRAGMA soft_heap_limit").fetchone()[0]


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_a_private_database_stops_at_its_cap(lab, runtime):
    name = declare(lab, runtime)
    lab.host.databases.max_bytes = 1 << 20
    outcome = await lab.call(f"{name}.grow", {"rounds": 60})
    assert outcome.ok, outcome.error
    assert outcome.result["written"] < 11, outcome.result
    assert "is full: it may hold at most 1 MiB" in outcome.result["error"]
    path = lab.host.databases.path(name)
    assert path.stat().st_size <= 1 << 20
    # The cap cannot be lifted from inside, and the database still answers.
    lifted = await lab.call(f"{name}.sql", {"sql": "PRAGMA max_page_count = 100000000"})
    assert lifted.error["kind"] == "permission", lifted.error
    count = await lab.call(f"{name}.sql", {"sql": "SELECT count(*) AS n FROM hoard", "query": True})
    assert count.ok and count.result == [{"n": outcome.result["written"]}]


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_pragmas_of_the_host_and_ways_out_are_refused(lab, runtime, tmp_path):
    name = declare(lab, runtime)
    before = heap_limit()
    for statement in REFUSED:
        outcome = await lab.call(f"{name}.sql", {"sql": statement, "query": True})
        assert not outcome.ok, (statement, outcome.result)
        assert outcome.error["kind"] == "permission", (statement, outcome.error)
        assert "only harmless pragmas" in outcome.error["message"], (statement, outcome.error)
    assert heap_limit() == before
    # Harmless pragmas about its own file still work.
    assert (await lab.call(f"{name}.sql", {"sql": "CREATE TABLE notes (body TEXT)"})).ok
    assert (await lab.call(f"{name}.sql", {"sql": "PRAGMA user_version = 3"})).ok
    version = await lab.call(f"{name}.sql", {"sql": "PRAGMA user_version", "query": True})
    assert version.result == [{"user_version": 3}]
    info = await lab.call(f"{name}.sql", {"sql": "PRAGMA table_info(notes)", "query": True})
    assert [row["name"] for row in info.result] == ["body"]


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_a_statement_that_never_ends_is_stopped(lab, runtime, monkeypatch):
    monkeypatch.setattr(database, "STATEMENT_SECONDS", 0.5)
    name = declare(lab, runtime)
    forever = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
               "SELECT count(*) AS n FROM c")
    outcome = await lab.call(f"{name}.sql", {"sql": forever, "query": True})
    assert outcome.error["kind"] == "timeout", outcome.error
    assert "ran longer than 0.5 s" in outcome.error["message"]
    after = await lab.call(f"{name}.sql", {"sql": "SELECT 1 AS one", "query": True})
    assert after.ok and after.result == [{"one": 1}]
