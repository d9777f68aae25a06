"""Real processes on one database file: concurrent confirmations of proposals made on
one revision (exactly one wins), kill -9 in the middle of a change (its receipt and
its rows, or nothing), and kill -9 between the steps of a creation and of a deletion
(the next start finds the database whole or gone)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tables_samples import ADDON

pytestmark = pytest.mark.slow

CONFIRM = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tablesdb import Tables, TablesError
tables = Tables(sys.argv[2])
resource_id, proposal_id, digest = sys.argv[3:6]
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
try:
    print(json.dumps({"won": tables.confirm(resource_id, proposal_id, digest)["count"]}))
except TablesError as exc:
    print(json.dumps({"lost": exc.kind}))
"""

HANG = """
import sys
sys.path.insert(0, sys.argv[1])
from tablesdb import Tables
tables = Tables(sys.argv[2])

def hang(conn, receipt):
    sys.stdout.write("in the transaction\\n"); sys.stdout.flush()
    sys.stdin.readline()

tables.apply(sys.argv[3], "rows-insert", {"table": "People", "rows": [{"Name": "lost"}] * 50},
             operation_id="run-killed", before_commit=hang)
"""

LOOP = """
import sys
sys.path.insert(0, sys.argv[1])
from tablesdb import Tables
tables = Tables(sys.argv[2])
for number in range(100000):
    tables.apply(sys.argv[3], "rows-insert", {"table": "People", "rows": [{"Name": str(number)}] * 20},
                 operation_id=f"run-{number}")
"""

CRASH = """
import os, signal, sqlite3, sys
sys.path.insert(0, sys.argv[1])
from tablesdb import Tables
tables = Tables(sys.argv[2])
what, at = sys.argv[3:5]

def step(name):
    if name == at:
        os.kill(os.getpid(), signal.SIGKILL)

if what == "create":
    tables.create("Crash", "crash", step=step)
else:
    # A reader holding the database open keeps this process's last rows in its -wal.
    keep = sqlite3.connect(tables.folder.path("crash"))
    keep.execute("SELECT count(*) FROM sqlite_master").fetchall()
    tables.apply("crash", "rows-insert", {"table": "People", "rows": [{"Name": "in the wal"}] * 5})
    tables.delete("crash", step=step)
sys.exit(3)  # not killed: the step was never reached
"""

START = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tablesdb import Tables, TablesError
tables = Tables(sys.argv[2])
seen = {"ids": [d["resourceId"] for d in tables.list()["databases"]]}
try:
    found = tables.inspect("crash")
    seen["tables"] = [t["label"] for t in found["tables"]]
    seen["name"] = found["name"]
except TablesError as exc:
    seen["inspect"] = exc.kind
print(json.dumps(seen))
"""

PAUSE = """
import sys
sys.path.insert(0, sys.argv[1])
from tablesdb import Tables
tables = Tables(sys.argv[2])

def step(name):
    if name == "built":
        sys.stdout.write("built\\n"); sys.stdout.flush()
        sys.stdin.readline()

print(tables.create("Paused", "crash", step=step)["resourceId"])
"""


def child(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, str(ADDON), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_two_proposals_on_one_revision_exactly_one_wins(tables, db):
    tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "a"}, {"Name": "b"}]})
    made = [tables.propose(db, "rows-update", {"table": "People", "set": {"Age": age}, "ids": [1]}, consumer="mcp")
            for age in (1, 2)]
    assert made[0]["preview"]["revision"] == made[1]["preview"]["revision"]
    racers = [child(CONFIRM, str(tables.folder.root), db, m["proposalId"],
                    tables.proposal(db, m["proposalId"])["digest"]) for m in made]
    for racer in racers:
        assert racer.stdout.readline() == "ready\n"
    for racer in racers:
        racer.stdin.write("go\n")
        racer.stdin.flush()
    outcomes = [json.loads(racer.communicate(timeout=60)[0]) for racer in racers]
    assert sorted(outcomes, key=str) == [{"lost": "stale"}, {"won": 1}]
    states = sorted(tables.proposal(db, m["proposalId"])["state"] for m in made)
    assert states == ["applied", "stale"]
    assert tables.inspect(db)["revision"]["data"] == 2


def receipt_rows(tables, db) -> tuple[list[str], int, dict]:
    with sqlite3.connect(tables.folder.path(db)) as conn:
        receipts = [r[0] for r in conn.execute("SELECT operation_id FROM tables_receipts WHERE operation_id LIKE 'run-%'")]
    count = len(tables.query(db, {"table": "People", "limit": 1, "columns": ["Name"]})["rows"]) and \
        tables.aggregate(db, {"table": "People", "aggregates": [{"fn": "count"}]})["values"][0]
    return receipts, count, tables.inspect(db)["revision"]


def test_kill_in_the_middle_of_a_change_leaves_its_receipt_or_nothing(tables, db):
    before = tables.inspect(db)["revision"]
    victim = child(HANG, str(tables.folder.root), db)
    assert victim.stdout.readline() == "in the transaction\n"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    receipts, count, revision = receipt_rows(tables, db)
    assert (receipts, count, revision) == ([], 0, before)
    assert not any(c["action"] == "rows-insert" for c in tables.changes(db))
    # The operation did not happen, so its id is free and applies once now.
    done = tables.apply(db, "rows-insert", {"table": "People", "rows": [{"Name": "lost"}] * 50},
                        operation_id="run-killed")
    assert done["count"] == 50 and not done.get("replayed")
    # Killed at any moment of a run of changes: every receipt has its rows, no row lacks one.
    runner = child(LOOP, str(tables.folder.root), db)
    deadline = time.monotonic() + 60
    while len(receipt_rows(tables, db)[0]) < 6 and time.monotonic() < deadline and runner.poll() is None:
        time.sleep(0.02)  # a poll interval, not a wait for something to happen
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait(timeout=30)
    receipts, count, revision = receipt_rows(tables, db)
    assert len(receipts) >= 6
    assert count == 50 + 20 * (len(receipts) - 1)
    assert revision["data"] == before["data"] + len(receipts)


def next_start(root) -> dict:
    """What a new process finds when it opens the data folder (every tool call does)."""
    done = subprocess.run([sys.executable, "-c", START, str(ADDON), str(root)], capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def crash(root, what: str, at: str) -> None:
    victim = subprocess.run([sys.executable, "-c", CRASH, str(ADDON), str(root), what, at], timeout=60)
    assert victim.returncode == -signal.SIGKILL, f"{what} never reached the step {at}"


def leftovers(tables) -> list[str]:
    return sorted(p.name for p in tables.folder.databases.iterdir() if p.name != ".steps.lock")


def test_a_kill_between_the_steps_of_a_creation_or_a_deletion_leaves_it_whole_or_gone(tables):
    from tablesdb.files import CREATE_STEPS, DELETE_STEPS
    root = tables.folder.root
    for at in CREATE_STEPS:
        crash(root, "create", at)
        seen = next_start(root)
        if CREATE_STEPS.index(at) < CREATE_STEPS.index("linked"):
            assert seen == {"ids": [], "inspect": "unknown"}, at
            assert leftovers(tables) == [], at
        else:
            assert seen == {"ids": ["crash"], "tables": [], "name": "Crash"}, at
            assert leftovers(tables) == ["crash.db"], at
            assert tables.create("Crash", "crash")["replayed"]  # the one creation, whole
            tables.delete("crash")
    for at in DELETE_STEPS:
        tables.create("Crash", "crash")
        tables.apply("crash", "tables-create", {"table": "People", "columns": [{"label": "Name", "type": "text"}]})
        crash(root, "delete", at)
        assert next_start(root) == {"ids": [], "inspect": "unknown"}, at
        # Nothing of it is left, its -wal least of all: a new database of the same id
        # starts empty instead of replaying the deleted one's last pages.
        assert leftovers(tables) == [], at
        tables.create("Again", "crash")
        assert tables.inspect("crash")["tables"] == [], at
        tables.delete("crash")


def test_settling_never_takes_a_file_another_process_is_building(tables):
    """A creation paused between its steps keeps its temporary file while other calls
    open the folder; once it finishes, the database is whole."""
    paused = child(PAUSE, str(tables.folder.root))
    assert paused.stdout.readline() == "built\n"
    from tablesdb import Tables
    Tables(tables.folder.root)  # another call opens the folder meanwhile
    assert any(".partial" in name for name in leftovers(tables))
    paused.stdin.write("go\n")
    paused.stdin.flush()
    assert paused.communicate(timeout=60)[0].strip() == "crash"
    assert tables.inspect("crash")["name"] == "Paused"
