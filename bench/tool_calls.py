"""The cost of a sandboxed tool call, beside its baselines, in one run.

Run with ``.venv/bin/python bench/tool_calls.py``. For a trivial tool in Python and in
TypeScript (Deno) it prints p50 and p95 of:

- the same function called in-process (the floor: no isolation at all);
- a bare interpreter start (``python -I -S -c pass``), what any fresh process costs;
- the first call through the gateway and the sandbox (no worker waiting yet);
- later calls, each finding a worker started ahead with the tool's grants.

Overhead is a call's time minus the in-process time. Goals: later calls at most 4 ms
(Python) and 5 ms (Deno) at p50; a first call at most 60 ms for either.

For the ``shell`` tool: a trivial command (``true``) through the gateway, first and later
calls (each finding its worker started ahead), beside a bare ``bash -c true`` measured in
the same run (goal: later calls at most 15 ms over it at p50); and applying a change set
of 1,000 files (half new, half replacing files whose earlier contents are kept for undo)
beside a plain copy of the same files (goal: at most 1 s). ``BENCH_ONLY=shell`` runs this
part alone.

Then the cost of each kernel layer of a worker's start, measured alone in forked
children in the same run (``BENCH_LAYERS=0`` skips them; they need root or user
namespaces): the user namespace and its id map, the extra fork for the PID namespace,
the private root (mount namespace, binds, ``/proc``, ``pivot_root``) beside the same
root with the library folders executable and nothing bound again (the cost of the
library closure's file binds), the closure found from the ELF files (in a fresh process,
and cached, as each later worker finds it), a memory cgroup made, joined and removed,
and one metadata call made by the supervisor against the same call made directly.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = int(os.environ.get("BENCH_RUNS", "40"))
FIRSTS = int(os.environ.get("BENCH_FIRSTS", "8"))
GAP_S = 0.05
"""Pause between later calls, as a model's turn would leave: time for the next worker."""

PY = "def trivial(args, ctx):\n    return {'n': args.get('n', 0) + 1}\n"
TS = "export function trivial(args: { n?: number }) { return { n: (args.n ?? 0) + 1 }; }\n"


def make_extension(root: Path, runtime: str) -> Path:
    folder = root / f"bench-{runtime}"
    folder.mkdir(parents=True)
    entry = "main.py" if runtime == "python" else "index.ts"
    (folder / entry).write_text(PY if runtime == "python" else TS)
    (folder / "loca.json").write_text(json.dumps({
        "name": f"bench-{runtime}", "displayName": "Bench", "description": "A trivial tool.",
        "entry": entry, "tools": [{"name": f"trivial_{runtime}", "description": "Add one.",
                                   "parameters": {"type": "object"}, "function": "trivial"}]}))
    return folder


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000


def line(label: str, samples: list[float], floor_ms: float = 0.0, goal: float | None = None) -> str:
    p50, p95 = pct(samples, 0.5), pct(samples, 0.95)
    text = f"{label:<34} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms"
    if floor_ms or goal is not None:
        text += f"   overhead p50 {p50 - floor_ms:6.2f} ms"
    if goal is not None:
        text += f"   goal <= {goal:g} ms  {'ok' if p50 - floor_ms <= goal else 'OVER'}"
    return text


def in_process_floor() -> list[float]:
    namespace: dict = {}
    exec(PY, namespace)
    samples = []
    for _ in range(RUNS * 10):
        start = time.perf_counter()
        namespace["trivial"]({"n": 1}, None)
        samples.append(time.perf_counter() - start)
    return samples


def bare_interpreter() -> list[float]:
    samples = []
    for _ in range(max(5, RUNS // 4)):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        samples.append(time.perf_counter() - start)
    return samples


def frame_checks() -> tuple[list[float], list[float]]:
    """A trivial call's messages from its worker (ready, result) parsed as bare JSON, and
    checked as the host checks them (``protocol.decode``: bounds, depth, UTF-8, NaN,
    lone surrogates): the cost of the check is the difference."""
    from workbench.sandbox import protocol

    lines = [protocol.encode(protocol.notification("worker/ready", {})),
             protocol.encode(protocol.result(1, {"n": 2}))]
    bare, checked = [], []
    for _ in range(RUNS * 10):
        start = time.perf_counter()
        for raw in lines:
            json.loads(raw)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        for raw in lines:
            protocol.decode(raw)
        checked.append(time.perf_counter() - start)
    return bare, checked


async def measure(root: Path, runtime: str) -> tuple[list[float], list[float]]:
    from workbench.core.host import Host
    from workbench.tools.loader import load_extension

    folder = make_extension(root, runtime)
    name = f"trivial_{runtime}"
    firsts, laters = [], []
    with Host.open(cwd=root) as host:
        load_extension(host.registry, folder)
        await host.sandbox.report()
        for index in range(FIRSTS):
            host.sandbox.forget()
            await asyncio.sleep(0.05)
            start = time.perf_counter()
            outcome = await host.tools.call(name, {"n": index})
            firsts.append(time.perf_counter() - start)
            assert outcome.ok, outcome.error
        for index in range(RUNS):
            await asyncio.sleep(GAP_S)
            start = time.perf_counter()
            outcome = await host.tools.call(name, {"n": index})
            laters.append(time.perf_counter() - start)
            assert outcome.ok and outcome.result == {"n": index + 1}, outcome.error
    return firsts, laters


def bare_bash() -> list[float]:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], check=True)
        samples.append(time.perf_counter() - start)
    return samples


async def measure_shell(root: Path) -> tuple[list[float], list[float]]:
    """First and later ``shell`` calls of ``true``; each later one waits (polling, bounded)
    until the worker started ahead for it is ready, as a model's turn leaves it time to."""
    from workbench.core.gateway import CallOptions
    from workbench.core.host import Host

    project = root / "shell-project"
    project.mkdir()
    options = CallOptions(grants=(("run", "bash"),))
    firsts, laters = [], []
    with Host.open(cwd=project) as host:
        await host.sandbox.report()
        source = host.sources.get("shell")
        runner = source.runner  # type: ignore[union-attr]
        for _ in range(FIRSTS):
            runner.forget()
            await asyncio.sleep(0.05)
            start = time.perf_counter()
            outcome = await host.tools.call("shell", {"command": "true"}, options)
            firsts.append(time.perf_counter() - start)
            assert outcome.ok and outcome.result["exit_code"] == 0, outcome.error
        for _ in range(RUNS):
            await asyncio.sleep(GAP_S)
            deadline = time.monotonic() + 10
            while any(not task.done() for task in runner._warm.values()) and time.monotonic() < deadline:
                await asyncio.sleep(0.005)
            start = time.perf_counter()
            outcome = await host.tools.call("shell", {"command": "true"}, options)
            laters.append(time.perf_counter() - start)
            assert outcome.ok and outcome.result["exit_code"] == 0, outcome.error
        await host.aclose()
    return firsts, laters


def apply_thousand(root: Path, runs: int = 5) -> tuple[list[float], list[float]]:
    """Applying an upper layer of 1,000 files (``Changes.apply``) beside copying the same
    files with ``shutil.copy2``; each run on a fresh project holding half of them."""
    from workbench.sandbox.paths import pin_path
    from workbench.store import Store
    from workbench.shell.changes import Changes
    from workbench.config.settings import DEFAULTS

    layers = root / "bench-layers"
    upper = layers / "upper"
    for index in range(1000):
        path = upper / f"d{index % 10}" / f"file{index}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"line {index}\n".encode() * 64)
    applied, copied = [], []
    with Store.open(root / "bench-changes.db") as store:
        changes = Changes(store=store, settings=lambda: DEFAULTS.shell)
        for run in range(runs):
            project = root / f"bench-project-{run}"
            for index in range(0, 1000, 2):
                path = project / f"d{index % 10}" / f"file{index}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"earlier\n")
            since = time.time_ns() + 10**9
            fd = os.open(layers, os.O_PATH | os.O_DIRECTORY)
            start = time.perf_counter()
            answer = changes.apply(fd, project=pin_path(str(project)), session_id=None,
                                   command="bench", since_ns=since)
            applied.append(time.perf_counter() - start)
            os.close(fd)
            assert len(answer["files"]) + answer["more"] == 1005, answer["more"]
            target = root / f"bench-copy-{run}"
            start = time.perf_counter()
            for source in upper.rglob("*.txt"):
                destination = target / source.relative_to(upper)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, destination)
            copied.append(time.perf_counter() - start)
    return applied, copied


def shell_part(root: Path) -> None:
    bash = bare_bash()
    bash_ms = pct(bash, 0.5)
    print(line("bare bash -c true", bash))
    firsts, laters = asyncio.run(measure_shell(root))
    print(line("shell: first call (cold worker)", firsts, bash_ms))
    print(line("shell: later calls (warm worker)", laters, bash_ms, 15))
    applied, copied = apply_thousand(root)
    print(line("a plain copy of 1,000 files", copied))
    print(line("shell: apply a 1,000-file change set", applied, 0.0, 1000))


CPU: dict[str, list[float]] = {}
"""CPU time of each layer's samples (what it costs on an idle machine, near enough)."""


def _cpu() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed_child(work, label: str = "") -> float:
    """Run ``work()`` in a forked child; its duration in seconds, measured there (its
    CPU time, children included, goes to ``CPU[label]``)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            start, cpu = time.perf_counter(), _cpu()
            work()
            spent = _cpu() - cpu
            os.write(write, f"{time.perf_counter() - start} {spent}".encode())
        finally:
            os._exit(0)
    os.close(write)
    data = os.read(read, 64)
    os.close(read)
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the measured layer failed")
    wall, cpu = (float(x) for x in data.split())
    CPU.setdefault(label, []).append(cpu)
    return wall


def _mapped_child(inner) -> None:
    """A child in a user namespace mapped as a worker's is, running ``inner()``."""
    import socket

    from workbench.sandbox._libc import CLONE_NEWUSER, unshare
    from workbench.sandbox.zygote import _map_user

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            unshare(CLONE_NEWUSER)
            theirs.send(b"u")
            theirs.recv(1)
            os.setresgid(0, 0, 0)
            os.setresuid(0, 0, 0)
            inner()
        finally:
            os._exit(0)
    ours.recv(1)
    _map_user(pid, os.getuid(), os.getgid())
    ours.send(b"m")
    os.waitpid(pid, 0)


def layer_costs(root: Path) -> None:
    from workbench.sandbox import cgroup, metadata, mounts, process, seccomp  # noqa: F401
    from workbench.sandbox._libc import CLONE_NEWNS, CLONE_NEWPID, unshare
    from workbench.sandbox.policy import Policy, python_runtime_paths

    folder = root / "layer-bench"
    folder.mkdir()
    policy = Policy(runtime="python", entry="", function="", extension_dir=str(folder),
                    runtime_read=python_runtime_paths(), write=[str(folder)])
    runs = max(10, RUNS // 2)

    def fork_only():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    def private_root(binds=None):
        unshare(CLONE_NEWNS | CLONE_NEWPID)
        pid = os.fork()
        if pid == 0:
            mounts.enter_private_root(mounts.prepare(binds or process.binds(policy)), "/")
            os._exit(0)
        os.waitpid(pid, 0)

    rebound = set(process.executable_libraries(policy))
    library_folders = {"/usr/lib", "/lib", "/lib64", "/usr/lib64"}
    unclosed = [mounts.Bind(b.path, b.writable, b.executable or b.path in library_folders, b.device)
                for b in process.binds(policy) if b.path not in rebound]
    git = shutil.which("git")

    def closure_cold(roots=None):
        from workbench.sandbox import libraries

        for cache in (libraries._ELVES, libraries._CLOSURES, libraries._DIRECT, libraries._LISTINGS,
                      libraries._BASE, libraries._GCONV, libraries._UNIONS):
            cache.clear()
        if roots is None:
            process.executable_libraries(policy)
        else:
            libraries.closure(roots)

    def memory_group():
        group = cgroup.limit_memory(f"bench-{os.getpid()}", 1024)
        if group is None:
            raise RuntimeError("no memory cgroup here")
        cgroup.join(group)
        (group.parent.parent / "cgroup.procs").write_text("0")
        cgroup.remove(group)

    process.loaders()  # as the zygote does once
    jobs = {"fork (the extra process)": fork_only,
            "user namespace + id map": lambda: _mapped_child(lambda: None),
            "user namespace + private root": lambda: _mapped_child(private_root),
            f"… library folders exec, {len(rebound)} not rebound": lambda: _mapped_child(
                lambda: private_root(unclosed)),
            "library closure found, fresh process": closure_cold,
            "library closure found, cached": lambda: process.executable_libraries(policy)}
    if git:
        jobs["closure of a granted git, fresh"] = lambda: closure_cold(git)
    if cgroup.memory_root() is not None:
        jobs["memory cgroup make+join+remove"] = memory_group
    target = folder / "chmod-me"
    target.write_text("x")
    jobs["chmod, direct"] = lambda: os.chmod(target, 0o644)
    rows = {label: [_timed_child(job, label) for _ in range(runs)] for label, job in jobs.items()}
    rows["chmod through the supervisor"] = _supervised_chmod(policy, target, runs)
    for label, samples in rows.items():
        cpu = f"   cpu p50 {statistics.median(CPU[label]) * 1000:6.2f} ms" if label in CPU else ""
        print(line(f"layer: {label}", samples) + cpu)


def _supervised_chmod(policy, target: Path, runs: int) -> list[float]:
    """One chmod made by the supervisor for a filtered child, timed in the child."""
    import select
    import socket

    from workbench.sandbox import metadata, seccomp
    from workbench.sandbox.zygote import recv_fds_raw, send_fds

    samples = []
    for _ in range(runs):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            listener = seccomp.load(seccomp.build_filter(allow_processes=False, notify_metadata=True),
                                    listener=True)
            send_fds(theirs, {"listener": True}, [listener])
            os.close(listener)
            start = time.perf_counter()
            os.chmod(target, 0o640)
            os.write(write, str(time.perf_counter() - start).encode())
            os._exit(0)
        os.close(write)
        _, fds = recv_fds_raw(ours)
        broker = metadata.Broker(fds[0], policy.write, (os.getuid(), os.getgid()))
        while not select.select([read], [], [], 0)[0]:
            if select.select([fds[0]], [], [], 0.05)[0]:
                broker.handle()
        samples.append(float(os.read(read, 64)))
        os.close(read)
        os.close(fds[0])
        os.waitpid(pid, 0)
    return samples


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="workbench-bench-"))
    os.environ["WORKBENCH_HOME"] = str(root / "home")
    if os.environ.get("BENCH_ONLY") == "shell":
        shell_part(root)
        return
    floor = in_process_floor()
    floor_ms = pct(floor, 0.5)
    print(line("in-process call (floor)", floor))
    print(line("bare interpreter start", bare_interpreter()))
    bare, checked = frame_checks()
    print(line("a call's messages, json.loads", bare))
    print(line("a call's messages, protocol.decode", checked, pct(bare, 0.5)))
    goals = {"python": (60, 4), "deno": (60, 5)}
    for runtime in ("python", "deno"):
        firsts, laters = asyncio.run(measure(root, runtime))
        first_goal, later_goal = goals[runtime]
        print(line(f"{runtime}: first call (cold worker)", firsts, floor_ms, first_goal))
        print(line(f"{runtime}: later calls (warm worker)", laters, floor_ms, later_goal))
    shell_part(root)
    if os.environ.get("BENCH_LAYERS", "1") != "0":
        # In a small process of its own, as the zygote is (forking this one costs more).
        subprocess.run([sys.executable, "-I", __file__, "--layers", str(root)], check=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--layers"]:
        layer_costs(Path(sys.argv[2]))
    else:
        main()
