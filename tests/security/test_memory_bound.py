"""Memory per worker, or no processes: where this machine cannot make a memory cgroup
per worker, a tool that may start processes is refused — its children could each hold
the whole memory limit — unless the person accepted per-process bounds
(``sandbox.per_process_memory``). The host is made to have no writable cgroup by
pointing ``WORKBENCH_CGROUP_ROOT`` at an empty folder; the real ``workbench`` command
runs every call, and the call's record in the store says what happened."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.security

PY_ENTRY = '''
import subprocess

def spawn(args, ctx):
    return {"code": subprocess.run(["/bin/true"]).returncode}

def plain(args, ctx):
    return {"alone": True}
'''

TS_ENTRY = '''
export async function spawn() {
  const out = await new Deno.Command("/bin/true").output();
  return { code: out.code };
}
'''

RUN = {"run": [{"binary": "/bin/true", "reason": "Starts a process."}]}


def workbench(tmp_path: Path, *args: str, cgroup: bool) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if not cgroup:
        empty = tmp_path / "no-cgroup"
        empty.mkdir(exist_ok=True)
        env["WORKBENCH_CGROUP_ROOT"] = str(empty)
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120, env=env)


def install(tmp_path: Path, runtime: str) -> str:
    name = f"spawner-{runtime}"
    folder = tmp_path / name
    folder.mkdir()
    entry = "main.py" if runtime == "python" else "main.ts"
    (folder / entry).write_text(PY_ENTRY if runtime == "python" else TS_ENTRY)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    tools = [{"name": "spawn", "description": "Start a process.", "function": "spawn",
              "parameters": {"type": "object"}, "permissions": RUN}]
    if runtime == "python":
        tools.append({"name": "plain", "description": "Start nothing.", "function": "plain",
                      "parameters": {"type": "object"}})
    (folder / "loca.json").write_text(json.dumps({
        "name": name, "displayName": name, "description": "Starts processes.", "entry": entry,
        "tools": tools}))
    installed = workbench(tmp_path, "ext", "install", str(folder), "--yes", cgroup=True)
    assert installed.returncode == 0, installed.stderr
    return name


def recorded(tmp_path: Path, tool: str) -> list[tuple[str, str | None]]:
    with sqlite3.connect(f"file:{tmp_path / 'home' / 'workbench.db'}?mode=ro", uri=True) as db:
        return db.execute("SELECT status, error FROM tool_calls WHERE tool = ? ORDER BY started_at",
                          (tool,)).fetchall()


@pytest.mark.parametrize("runtime", ["python", "deno"])
def test_a_tool_that_may_start_processes_is_refused_without_a_memory_cgroup(tmp_path, runtime):
    name = install(tmp_path, runtime)
    refused = workbench(tmp_path, "call", f"{name}.spawn", "--grant-all", "--json", cgroup=False)
    assert refused.returncode != 0, refused.stdout
    outcome = json.loads(refused.stdout)
    assert not outcome["ok"] and outcome["error"]["kind"] == "unavailable", outcome
    message = outcome["error"]["message"]
    assert "memory-cgroup" in message and "no writable memory cgroup" in message, message
    assert "sandbox.per_process_memory" in message and "workbench doctor" in message, message
    [(status, error)] = recorded(tmp_path, f"{name}.spawn")
    assert status == "error" and "no writable memory cgroup" in error, (status, error)

    # Where the machine has its cgroup, the same call runs.
    ran = workbench(tmp_path, "call", f"{name}.spawn", "--grant-all", "--json", cgroup=True)
    assert ran.returncode == 0 and json.loads(ran.stdout) == {"ok": True, "result": {"code": 0}}, \
        ran.stdout + ran.stderr


def test_per_process_bounds_are_accepted_only_when_the_person_says_so(tmp_path):
    name = install(tmp_path, "python")
    # A tool that starts nothing is bounded per process anyway: it runs.
    plain = workbench(tmp_path, "call", f"{name}.plain", "--json", cgroup=False)
    assert plain.returncode == 0 and json.loads(plain.stdout)["result"] == {"alone": True}, plain.stderr
    setting = workbench(tmp_path, "config", "set", "sandbox.per_process_memory", "true", cgroup=True)
    assert setting.returncode == 0, setting.stderr
    for runtime in ("python", "deno"):
        tool = f"{install(tmp_path, runtime) if runtime == 'deno' else name}.spawn"
        accepted = workbench(tmp_path, "call", tool, "--grant-all", "--json", cgroup=False)
        assert accepted.returncode == 0 and json.loads(accepted.stdout)["result"] == {"code": 0}, \
            accepted.stdout + accepted.stderr
        assert recorded(tmp_path, tool)[-1][0] == "ok"


def test_doctor_names_the_missing_memory_cgroup_and_its_consequence(tmp_path):
    done = workbench(tmp_path, "doctor", cgroup=False)
    [line] = [line for line in done.stdout.splitlines() if "memory-cgroup" in line]
    assert "no writable memory cgroup" in line and "refused" in line, line
    assert "sandbox.per_process_memory" in done.stdout, done.stdout
    # Tools that start no process still run: doctor does not fail for it.
    assert done.returncode == 0, done.stdout
    here = workbench(tmp_path, "doctor", cgroup=True)
    [line] = [line for line in here.stdout.splitlines() if "memory-cgroup" in line]
    assert "a memory cgroup per worker" in line, line


async def test_the_zygote_fails_closed_when_the_cgroup_cannot_be_made(tmp_path, monkeypatch):
    """The host asks only after doctor's probe said a cgroup can be made; should the
    zygote then fail to make one, it starts nothing either."""
    from workbench.errors import ToolError
    from workbench.sandbox.client import ZygoteClient
    from workbench.sandbox.policy import Limits, Policy, python_runtime_paths
    from workbench.sandbox.worker_host import Worker

    (tmp_path / "no-cgroup").mkdir()
    monkeypatch.setenv("WORKBENCH_CGROUP_ROOT", str(tmp_path / "no-cgroup"))
    folder = tmp_path / "tool"
    folder.mkdir()
    (folder / "main.py").write_text(PY_ENTRY)
    client = ZygoteClient()
    try:
        for accepted in (False, True):
            policy = Policy(runtime="python", entry=str(folder / "main.py"), function="spawn",
                            extension_dir=str(folder), execute=["/bin/true"],
                            runtime_read=python_runtime_paths(), limits=Limits(per_process_memory=accepted))
            if not accepted:
                with pytest.raises(ToolError) as caught:
                    await Worker.start(client, policy)
                assert "no writable memory cgroup" in caught.value.message, caught.value.message
            else:
                worker = await Worker.start(client, policy)
                worker.kill()
    finally:
        client.close()
