"""Real processes: the scheduler lock between two processes, killing a whole process
tree, and a supervised child's states (start, exit, retries, stop)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from workbench.supervisor.lock import SchedulerLock
from workbench.supervisor.process import SupervisedProcess, die_with_parent
from workbench.supervisor.proctree import alive, descendants, kill_tree

HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from workbench.supervisor.lock import SchedulerLock
    lock = SchedulerLock(Path(sys.argv[1]))
    print("held" if lock.acquire() else "busy", flush=True)
    time.sleep(60)
""")


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_one_process_holds_the_lock_and_another_is_told_who(tmp_path):
    path = tmp_path / "scheduler.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        mine = SchedulerLock(path)
        assert not mine.acquire() and not mine.held
        who = mine.holder()
        assert (who.pid, who.host) == (holder.pid, socket.gethostname())
        assert f"pid {holder.pid} on {socket.gethostname()}" in who.describe()
        # A kill -9 cannot leave the lock behind: the kernel drops it with the process.
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        assert mine.acquire() and mine.holder().pid == os.getpid()
        other = SchedulerLock(path)
        assert not other.acquire()
        mine.release()
        assert other.holder() is None and other.acquire()
        other.release()
    finally:
        holder.kill()
        holder.wait()


def test_kill_tree_reaches_children_that_left_the_group(tmp_path):
    script = "sleep 60 & setsid sleep 60 & (sleep 60 & wait) & wait"
    root = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    wait_for(lambda: len(descendants(root.pid)) >= 4)
    tree = [root.pid, *descendants(root.pid)]
    killed = kill_tree(root.pid)
    root.wait()
    assert set(tree) <= set(killed)
    wait_for(lambda: not any(alive(pid) for pid in tree))


async def test_a_child_starts_runs_and_exits_with_one_event_per_transition(tmp_path):
    events = []
    child = SupervisedProcess("run:1", [sys.executable, "-c", "print('hi'); raise SystemExit(3)"],
                              env=dict(os.environ), cwd=tmp_path, output=tmp_path / "out.log",
                              publish=events.append)
    assert await child.start()
    assert await child.wait(10) == 3
    assert [(e.old, e.new) for e in events] == [("stopped", "starting"), ("starting", "running"),
                                               ("running", "exited")]
    assert events[-1].reason == "exit status 3" and events[1].pid == child.pid
    assert (tmp_path / "out.log").read_text() == "hi\n"


async def test_a_start_that_fails_backs_off_then_is_fatal(tmp_path):
    events = []
    child = SupervisedProcess("run:2", ["/no/such/program"], env={}, cwd=tmp_path, publish=events.append)
    child.backoff = (0.01, 0.01)
    assert not await child.start()
    assert [e.new for e in events] == ["starting", "backoff", "starting", "backoff", "starting",
                                      "backoff", "fatal"]
    assert "could not start /no/such/program" in child.error


async def test_stopping_a_child_kills_what_it_started(tmp_path):
    events = []
    child = SupervisedProcess("run:3", ["bash", "-c", "setsid sleep 60 & sleep 60"], env=dict(os.environ),
                              cwd=tmp_path, publish=events.append)
    assert await child.start()
    await asyncio.to_thread(wait_for, lambda: len(descendants(child.pid)) >= 2)
    tree = [child.pid, *descendants(child.pid)]
    assert await child.wait(0.2) is None  # still running
    killed = await child.stop("ran past its time limit")
    assert set(tree) <= set(killed)
    await asyncio.to_thread(wait_for, lambda: not any(alive(pid) for pid in tree))
    assert [e.new for e in events][-2:] == ["stopping", "stopped"]


def test_a_child_whose_parent_is_gone_does_not_start(tmp_path):
    assert die_with_parent({}) is True
    assert die_with_parent({"WORKBENCH_SUPERVISOR_PID": str(os.getppid())}) is True
    assert die_with_parent({"WORKBENCH_SUPERVISOR_PID": "1" if os.getppid() != 1 else "2"}) is False


@pytest.mark.timeout(30)
def test_a_child_dies_with_its_parent(tmp_path):
    """PR_SET_PDEATHSIG: when the parent is killed with -9, the child goes too."""
    pid_file = tmp_path / "child.pid"
    (tmp_path / "child.py").write_text(textwrap.dedent(f"""
        import os, time
        from workbench.supervisor.process import die_with_parent
        assert die_with_parent(os.environ)
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    """))
    parent = textwrap.dedent(f"""
        import os, subprocess, sys, time
        env = {{**os.environ, "WORKBENCH_SUPERVISOR_PID": str(os.getpid())}}
        subprocess.Popen([sys.executable, {str(tmp_path / "child.py")!r}], env=env)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", parent])
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text().strip())
        child = int(pid_file.read_text())
        assert alive(child)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        wait_for(lambda: not alive(child))
    finally:
        proc.kill()


def test_lock_file_lives_in_the_given_folder(tmp_path):
    lock = SchedulerLock(tmp_path / "deep" / "scheduler.lock")
    assert lock.acquire()
    assert Path(tmp_path / "deep" / "scheduler.lock").exists()
    lock.release()
