"""Workers started ahead (the pool), attacked: each test tries to reach, through a
worker the pool kept, what a worker started at call time would not have — a grant
given for one call, a grant revoked since, old code, another tool's policy, a moment
of the extension's code before its call, a life past the host, room past the bounds —
and fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from extension_folders import write_extension

from labs import Lab
from processes import alive
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.events import PermissionAnswer
from workbench.sandbox.pool import PoolLimits
from workbench.store import Store

pytestmark = pytest.mark.security

RUNTIMES = ["python", "deno"]

READER_PY = '''
def peek(args, ctx):
    try:
        with open(args["path"]) as handle:
            return handle.read()
    except OSError as exc:
        return f"refused: {exc.strerror}"
'''

READER_TS = '''
export async function peek(args: { path: string }) {
  try {
    return await Deno.readTextFile(args.path);
  } catch (error) {
    return `refused: ${(error as Error).name}`;
  }
}
'''


class Person:
    """Answers every prompt with one scope, leaving out the entries named."""

    def __init__(self, scope: str, declined: tuple[str, ...] = ()) -> None:
        self.scope = scope
        self.declined = declined

    async def answer(self, request):
        return PermissionAnswer(self.scope, declined=self.declined)


async def ready(host: Host) -> list:
    """Wait until every worker the pool started ahead is ready (as a next call would)."""
    return [await task for task in host.sandbox.pool.starting()]


def folders(tmp_path: Path) -> tuple[Path, Path]:
    granted, other = tmp_path / "granted", tmp_path / "other"
    for folder, text in ((granted, "granted note"), (other, "other note")):
        folder.mkdir()
        (folder / "note.txt").write_text(text)
    return granted, other


def reader(lab: Lab, runtime: str, granted: Path, other: Path) -> None:
    """``peek``: reading ``granted`` is required, ``other`` optional."""
    lab.extension("pooled", READER_PY if runtime == "python" else READER_TS, {
        "peek": {"permissions": {"read": [
            {"path": str(granted), "reason": "Read the granted folder."},
            {"path": str(other), "reason": "Read the other folder.", "optional": True}]}}},
        runtime=runtime)


def in_pool(host: Host, path: Path) -> list[str]:
    """The owners of pooled workers whose policy names ``path``."""
    return [owner for owner, policy, count in host.sandbox.pool.lanes()
            if count and str(path) in json.dumps(policy.to_json())]


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_a_once_grant_is_never_in_a_pooled_worker(lab, tmp_path, runtime):
    granted, other = folders(tmp_path)
    reader(lab, runtime, granted, other)
    lab.host.answer_with(Person("session", declined=(f"read:{other}",)))
    session = CallOptions(session_id=lab.host.store.create_session()["id"])
    first = await lab.host.tools.call("peek", {"path": str(granted / "note.txt")}, session)
    assert first.ok and first.result == "granted note", first.error
    assert await ready(lab.host), "a standing grant starts a worker ahead"
    once = CallOptions(session_id=session.session_id, grants=(("read", str(other)),))
    for _ in range(3):  # back to back: the pool grows, and never takes in the once grant
        outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")}, once)
        assert outcome.ok and outcome.result == "other note", outcome.error
        await ready(lab.host)
        assert not in_pool(lab.host, other)
    for _ in range(4):  # every worker kept ahead is used: none reads the other folder
        outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")}, session)
        assert outcome.ok and outcome.result.startswith("refused"), outcome.result


async def test_a_grant_revoked_after_the_pool_filled_is_not_usable(lab, tmp_path):
    granted, other = folders(tmp_path)
    reader(lab, "python", granted, other)
    lab.host.answer_with(Person("always"))
    for _ in range(3):
        outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")})
        assert outcome.ok and outcome.result == "other note", outcome.error
    await ready(lab.host)
    assert in_pool(lab.host, other)
    assert lab.host.grants.revoke("peek", "read", str(other)) == 1
    assert not in_pool(lab.host, other), "the revoked grant's workers are dropped"
    outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")},
                                       CallOptions(prompt=False))
    assert outcome.ok and outcome.result.startswith("refused"), outcome.result


async def test_a_grant_revoked_by_another_process_is_not_usable(lab, tmp_path):
    """A revoke made through the store by another process (``workbench grants revoke``
    beside an open TUI): this host's pool is not told, and still its workers are not
    used, since their policy is not the call's now."""
    granted, other = folders(tmp_path)
    reader(lab, "python", granted, other)
    lab.host.answer_with(Person("always"))
    for _ in range(3):
        outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")})
        assert outcome.ok and outcome.result == "other note", outcome.error
    await ready(lab.host)
    assert in_pool(lab.host, other)
    with Store.open(lab.host.home.db_path) as elsewhere:  # its own connection to the file
        assert elsewhere.revoke_grants("pooled.peek", "read", str(other)) == 1
    for _ in range(4):
        outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")},
                                           CallOptions(prompt=False))
        assert outcome.ok and outcome.result.startswith("refused"), outcome.result
    assert not in_pool(lab.host, other), "the workers of the old policy were dropped"


def versioned(tmp_path: Path, runtime: str, version: str) -> Path:
    entry = "main.py" if runtime == "python" else "index.ts"
    code = (f"def hello(args, ctx):\n    return '{version}'\n" if runtime == "python"
            else f"export function hello() {{ return '{version}'; }}\n")
    folder = write_extension(tmp_path / "source" / "versioned", "versioned", ["hello"],
                             code=code, entry=entry)
    return folder


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_a_reinstall_with_new_code_runs_the_new_code(tmp_path, runtime):
    async with Host.open(cwd=tmp_path) as host:
        host.answer_with(Person("always"))
        host.extensions.install(str(versioned(tmp_path, runtime, "1.0.0")), lambda plan: True)
        for _ in range(3):
            outcome = await host.tools.call("hello", {})
            assert outcome.ok and outcome.result == "1.0.0", outcome.error
        assert await ready(host)
        host.extensions.update("versioned", lambda plan: True,
                               source=str(versioned(tmp_path, runtime, "2.0.0")))
        for _ in range(3):
            outcome = await host.tools.call("hello", {})
            assert outcome.ok and outcome.result == "2.0.0", outcome.error
        await ready(host)
        host.extensions.remove("versioned")
        assert not [owner for owner, _, count in host.sandbox.pool.lanes() if count
                    and owner.startswith("versioned.")], "a removed extension keeps no worker"


SIBLINGS = '''
def alpha(args, ctx):
    return "{name}.alpha"

def beta(args, ctx):
    return "{name}.beta"
'''


async def test_a_pooled_worker_of_one_tool_serves_no_other(lab):
    for name in ("one", "two"):
        lab.extension(name, SIBLINGS.format(name=name), {"alpha": {}, "beta": {}})
    for _ in range(3):
        outcome = await lab.host.tools.call("one.alpha", {})
        assert outcome.ok and outcome.result == "one.alpha", outcome.error
    await ready(lab.host)
    kept = lab.host.sandbox.pool.sizes()
    assert kept.get("one.alpha"), kept
    for tool in ("one.beta", "two.alpha", "two.beta", "one.beta", "two.alpha"):
        outcome = await lab.host.tools.call(tool, {})
        assert outcome.ok and outcome.result == tool, outcome.error
        assert lab.host.sandbox.pool.sizes()["one.alpha"] == kept["one.alpha"]


MARKER_PY = '''
import os
with open(os.path.join(os.environ["HOME_MARKS"], "imports.txt"), "a") as handle:
    handle.write("imported\\n")

def mark(args, ctx):
    return "ran"
'''

MARKER_TS = '''
const marks = Deno.env.get("HOME_MARKS")!;
await Deno.writeTextFile(`${marks}/imports.txt`, "imported\\n", { append: true });
export function mark() {
  return "ran";
}
'''


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_no_module_code_runs_in_a_pooled_worker_before_its_call(lab, tmp_path, runtime,
                                                                      monkeypatch):
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("HOME_MARKS", str(marks))
    lab.extension("importer", MARKER_PY if runtime == "python" else MARKER_TS, {
        "mark": {"permissions": {"write": [{"path": str(marks), "reason": "Leave marks."}],
                                 "env": [{"key": "HOME_MARKS", "reason": "Where."}]}}},
        runtime=runtime)
    lab.host.answer_with(Person("always"))
    calls = 0
    for _ in range(4):  # back to back: the pool grows past one worker
        assert (await lab.host.tools.call("mark", {})).result == "ran"
        calls += 1
    waiting = await ready(lab.host)
    assert len(waiting) > 1 and all(not worker.finished for worker in waiting)
    assert (marks / "imports.txt").read_text() == "imported\n" * calls
    assert (await lab.host.tools.call("mark", {})).result == "ran"
    assert (marks / "imports.txt").read_text() == "imported\n" * (calls + 1)


HOLDER = '''
import asyncio, json, sys
from pathlib import Path
from workbench.core.host import Host
from workbench.tools.loader import load_extension

async def main():
    folder = Path(sys.argv[1])
    with Host.open(cwd=folder.parent) as host:
        load_extension(host.registry, folder)
        for _ in range(4):
            outcome = await host.tools.call("hold", {})
            assert outcome.ok, outcome.error
        workers = [await task for task in host.sandbox.pool.starting()]
        print(json.dumps({"zygote": host.sandbox.zygote.process.pid,
                          "pooled": [worker.pid for worker in workers]}), flush=True)
        await asyncio.sleep(3600)

asyncio.run(main())
'''


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    todo.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


def test_killing_the_host_leaves_no_pooled_worker_alive(tmp_path):
    folder = write_extension(tmp_path / "holder", "holder", ["hold"],
                             code="def hold(args, ctx):\n    return 'held'\n")
    script = tmp_path / "holder.py"
    script.write_text(textwrap.dedent(HOLDER))
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}
    host = subprocess.Popen([sys.executable, str(script), str(folder)], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        started = json.loads(host.stdout.readline())
        assert started["pooled"], "the pool kept workers for the next calls"
        processes = [pid for supervisor in started["pooled"] for pid in descendants(supervisor)]
        processes.append(started["zygote"])
        assert all(alive(pid) for pid in processes)
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in processes) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in processes if alive(pid)], "a pooled worker outlived its host"


def supervisors(zygote: int) -> list[int]:
    """The live workers (their supervisors) the zygote forked."""
    return [pid for pid in descendants(zygote) if pid != zygote
            and os.getppid() != pid and _parent(pid) == zygote and alive(pid)]


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


async def test_the_pool_keeps_its_bounds_under_twenty_parallel_calls(lab):
    for name in ("left", "right"):
        lab.extension(name, f"def work(args, ctx):\n    return '{name}'\n", {"work": {}})
    bounds = PoolLimits(per_tool=3, total=4, memory_mb=200)
    lab.host.sandbox.pool.limits = bounds
    seen: list[tuple[int, float]] = []
    done = asyncio.Event()

    async def watch() -> None:
        while not done.is_set():
            seen.append(lab.host.sandbox.pool.held())
            await asyncio.sleep(0)

    watcher = asyncio.ensure_future(watch())
    for _ in range(3):  # three turns of twenty calls at once, ten of each tool
        outcomes = await asyncio.gather(*(lab.host.tools.call(f"{name}.work", {})
                                          for name in ("left", "right") * 10))
        assert all(o.ok and o.result in ("left", "right") for o in outcomes)
        seen.append(lab.host.sandbox.pool.held())
    await ready(lab.host)
    done.set()
    await watcher
    assert max(count for count, _ in seen) <= bounds.total
    assert max(memory for _, memory in seen) <= bounds.memory_mb
    assert all(count <= bounds.per_tool for count in lab.host.sandbox.pool.sizes().values())
    # What runs on the machine agrees: once the calls' workers are gone, only the
    # pooled ones are left.
    zygote = lab.host.sandbox.zygote.process.pid
    pooled = len(lab.host.sandbox.pool.starting())
    deadline = time.monotonic() + 30
    while len(supervisors(zygote)) > pooled and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert len(supervisors(zygote)) <= bounds.total


WAITER = '''
import os, time

def peek(args, ctx):
    ctx.log("info", "waiting")
    go = args["go"]
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.005)
    try:
        with open(args["path"]) as handle:
            return handle.read()
    except OSError as exc:
        return f"refused: {exc.strerror}"
'''


async def test_a_grant_revoked_while_its_call_runs_starts_no_worker_for_it(lab, tmp_path):
    """The call that runs as the grant is revoked was given it when it began; the
    workers started after it must not be."""
    from workbench.events import ToolCallLog

    granted, other = folders(tmp_path)
    lab.extension("pooled", WAITER, {"peek": {"permissions": {"read": [
        {"path": str(granted), "reason": "Read the granted folder."},
        {"path": str(other), "reason": "Read the other folder.", "optional": True}]}}})
    lab.host.answer_with(Person("always"))
    go = granted / "go"
    go.write_text("")
    first = await lab.host.tools.call("peek", {"path": str(other / "note.txt"), "go": str(go)})
    assert first.ok and first.result == "other note", first.error
    await ready(lab.host)
    go.unlink()
    waiting = asyncio.Event()
    unsubscribe = lab.host.bus.subscribe(
        lambda event: waiting.set() if isinstance(event, ToolCallLog) else None)
    try:
        call = asyncio.ensure_future(lab.host.tools.call(
            "peek", {"path": str(other / "note.txt"), "go": str(go)}))
        await asyncio.wait_for(waiting.wait(), 60)
        lab.host.grants.revoke("peek", "read", str(other))
        go.write_text("")
        outcome = await call
    finally:
        unsubscribe()
    assert outcome.ok and outcome.result == "other note", outcome.error  # granted as it began
    await ready(lab.host)
    assert not in_pool(lab.host, other), "a worker was started with the revoked grant"
    after = await lab.host.tools.call("peek", {"path": str(other / "note.txt"), "go": str(go)},
                                     CallOptions(prompt=False))
    assert after.ok and after.result.startswith("refused"), after.result


async def test_a_grant_revoked_while_a_refill_is_put_off_starts_no_worker_for_it(lab, tmp_path):
    """After a call that leaves a ready worker, the lane's next workers start only once
    its burst of calls ends; a grant revoked before then is in none of them."""
    granted, other = folders(tmp_path)
    reader(lab, "python", granted, other)
    lab.host.answer_with(Person("always"))
    pool = lab.host.sandbox.pool
    for _ in range(3):  # back to back: the lane keeps more than one worker
        outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")})
        assert outcome.ok and outcome.result == "other note", outcome.error
    await ready(lab.host)
    outcome = await lab.host.tools.call("peek", {"path": str(other / "note.txt")})
    assert outcome.ok and outcome.result == "other note", outcome.error
    assert pool.put_off() == ["pooled.peek"], "a ready worker was left: the refill waits"
    assert lab.host.grants.revoke("peek", "read", str(other)) == 1
    assert not pool.put_off() and not in_pool(lab.host, other)
    await ready(lab.host)  # what was put off would start now
    assert not in_pool(lab.host, other), "a worker was started with the revoked grant"
    after = await lab.host.tools.call("peek", {"path": str(other / "note.txt")},
                                     CallOptions(prompt=False))
    assert after.ok and after.result.startswith("refused"), after.result
