"""The cost of a sandboxed tool call, beside its baselines, in one run.

Run with ``.venv/bin/python bench/tool_calls.py``. For a trivial tool in Python and in
TypeScript (Deno) it prints p50 and p95 of:

- the same function called in-process (the floor: no isolation at all);
- a bare interpreter start (``python -I -S -c pass``), what any fresh process costs;
- the first call through the gateway and the sandbox (no worker waiting yet);
- spaced calls: later calls with a pause between them (``GAP_S``), each finding a
  worker the pool started ahead with the tool's grants;
- back-to-back calls: turns of ``BURST`` calls with no gap between them, the turns
  apart by what a model's next step leaves (the pool is ready again), figures from
  the turns after the first (the pool has learnt the tool's use);
- a long run of calls with no gap at all (``RUNS`` of them): every call still needs a
  fresh worker, so past the pool's few this is bounded by how fast workers start
  (printed without a goal);
- a call on a ready worker alone (``Worker.call``: the call sent, the tool imported
  and run in the worker, its answer read), from the spaced calls: Deno's beside
  Python's (goal: at most ``READY_RATIO`` times it);
- the peer designs, per call: a fresh ``deno run`` with permission flags importing the
  tool and calling it, and ``bwrap`` (bubblewrap) running ``python -I -S`` doing the
  same, when it is installed (else the line says it is missing, and Python's figures
  stand beside a bare interpreter's start instead). Each of our figures is reported
  (``_report.report``) beside the peer of its runtime, with the ratio.

Overhead is a call's time minus the in-process time. Goals: spaced and back-to-back
calls at most 4 ms (Python) and 5 ms (Deno) at p50; a first call at most 60 ms for
either. ``uptime``'s load is printed first: read the figures beside it.

For the ``shell`` tool: a trivial command (``true``) through the gateway, first and later
calls (each finding its worker started ahead), beside a bare ``bash -c true`` measured in
the same run (goal: later calls at most 15 ms over it at p50); and applying a change set
of 1,000 files (half new, half replacing files whose earlier contents are kept for undo)
beside a plain copy of the same files (goal: at most 1 s). ``BENCH_ONLY=shell`` runs this
part alone, ``BENCH_ONLY=calls`` the Python and Deno calls alone.

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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import report  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "40"))
FIRSTS = int(os.environ.get("BENCH_FIRSTS", "8"))
GAP_S = 0.05
"""Pause between spaced calls, as a model's turn would leave: time for the next worker."""
BURST = int(os.environ.get("BENCH_BURST", "4"))
"""Calls of one turn made back to back."""
TURNS = int(os.environ.get("BENCH_TURNS", "12"))

READY_RATIO = 1.1
"""Deno's call on a ready worker (``Worker.call``: the call sent, the tool imported and
run, its answer read) against Python's in the same run: as fast, within a tenth."""

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


async def pool_ready(host) -> None:
    """Wait until the workers the pool started ahead are ready (bounded)."""
    tasks = host.sandbox.pool.starting()
    if tasks:
        await asyncio.wait(tasks, timeout=10)


def cpu_ms(zygote_pid: int) -> float:
    """CPU time so far of this process and of the zygote with the workers it reaped."""
    own = os.times()
    try:
        with open(f"/proc/{zygote_pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        zygote = sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except OSError:
        zygote = 0.0
    return (own.user + own.system + zygote) * 1000


CPU_PER_CALL: dict[str, float] = {}
"""CPU milliseconds per call of each case (host, zygote and the workers, started
ahead or not): what a call costs the machine whatever its load."""


async def measure(root: Path, runtime: str) -> dict[str, list[float]]:
    from workbench.core.host import Host
    from workbench.tools.loader import load_extension

    from workbench.sandbox.worker_host import Worker

    folder = make_extension(root, runtime)
    name = f"trivial_{runtime}"
    found: dict[str, list[float]] = {"first": [], "spaced": [], "burst": [], "sustained": [],
                                     "ready": []}
    plain_call = Worker.call

    async def worker_call(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return await plain_call(self, *args, **kwargs)
        finally:
            if timing_ready:
                found["ready"].append(time.perf_counter() - start)

    timing_ready = False
    Worker.call = worker_call  # type: ignore[method-assign]

    async def timed(label: str, index: int) -> None:
        start = time.perf_counter()
        outcome = await host.tools.call(name, {"n": index})
        found[label].append(time.perf_counter() - start)
        assert outcome.ok and outcome.result == {"n": index + 1}, outcome.error

    with Host.open(cwd=root) as host:
        load_extension(host.registry, folder)
        await host.sandbox.report()
        zygote = host.sandbox.zygote.process.pid

        def spent(label: str, since: float) -> None:
            host.sandbox.zygote.ping()  # the zygote reaps the workers that ended
            CPU_PER_CALL[f"{runtime}:{label}"] = (cpu_ms(zygote) - since) / max(1, len(found[label]))

        for index in range(FIRSTS):
            host.sandbox.forget()
            await asyncio.sleep(0.05)
            await timed("first", index)
        since = cpu_ms(zygote)
        timing_ready = True  # the spaced calls' workers were ready long before their call
        for index in range(RUNS):
            await asyncio.sleep(GAP_S)
            await timed("spaced", index)
        timing_ready = False
        spent("spaced", since)
        host.sandbox.forget()
        for turn in range(TURNS + 1):
            await pool_ready(host)
            await asyncio.sleep(GAP_S)
            if turn == 1:
                since = cpu_ms(zygote)
            for index in range(BURST):
                await timed("burst", index)
            if turn == 0:
                found["burst"].clear()  # the pool learns the tool's use in the first turn
        await pool_ready(host)
        spent("burst", since)
        since = cpu_ms(zygote)
        for index in range(RUNS):
            await timed("sustained", index)
        await pool_ready(host)
        spent("sustained", since)
    Worker.call = plain_call  # type: ignore[method-assign]
    return found


PEER_TS = """import * as tool from "{entry}";
console.log(JSON.stringify(await tool.trivial({{ n: 1 }})));
"""
PEER_PY = "import sys; sys.path.insert(0, {folder!r}); import main; print(main.trivial({{'n': 1}}, None))"


def cpu_note(key: str) -> str:
    return f"   cpu/call {CPU_PER_CALL[key]:5.1f} ms" if key in CPU_PER_CALL else ""


def children_cpu_ms() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def fresh_deno_run(root: Path) -> list[float]:
    """The peer design: a fresh ``deno run`` per call, its permissions as flags."""
    from workbench.sandbox.deno import deno_binary

    folder = root / "bench-deno"
    runner = root / "peer-deno.ts"
    runner.write_text(PEER_TS.format(entry=(folder / "index.ts").as_uri()))
    env = {"PATH": "/usr/bin:/bin", "DENO_DIR": str(root / "peer-deno-dir"), "DENO_NO_UPDATE_CHECK": "1",
           "NO_COLOR": "1"}
    argv = [deno_binary() or "deno", "run", "--no-prompt", "--no-config", "--no-lock", "--quiet",
            f"--allow-read={folder},{runner}", str(runner)]
    subprocess.run(argv, check=True, env=env, capture_output=True)  # cached once, as at install
    samples = []
    since = children_cpu_ms()
    for _ in range(max(10, RUNS // 2)):
        start = time.perf_counter()
        subprocess.run(argv, check=True, env=env, capture_output=True)
        samples.append(time.perf_counter() - start)
    CPU_PER_CALL["peer:deno"] = (children_cpu_ms() - since) / len(samples)
    return samples


def bwrap_per_call(root: Path) -> list[float] | None:
    """The peer design: bubblewrap per call, a fresh Python importing the tool."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    folder = root / "bench-python"
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
            "--ro-bind-try", "/lib", "/lib", "--ro-bind-try", "/lib64", "/lib64",
            "--ro-bind", sys.base_prefix, sys.base_prefix, "--ro-bind", str(folder), str(folder),
            "--proc", "/proc", "--dev", "/dev",
            os.path.realpath(sys.executable), "-I", "-S", "-c", PEER_PY.format(folder=str(folder))]
    samples = []
    since = children_cpu_ms()
    for _ in range(max(10, RUNS // 2)):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    CPU_PER_CALL["peer:bwrap"] = (children_cpu_ms() - since) / len(samples)
    return samples


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
    options = CallOptions(grants=(("run", "bash"), ("write", os.path.realpath(project))))
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
    report("tool_calls", "shell: later calls of `true` (warm worker)", pct(laters, 0.5), bash_ms,
           "a bare `bash -c true`", max_over_ms=15)
    applied, copied = apply_thousand(root)
    print(line("a plain copy of 1,000 files", copied))
    print(line("shell: apply a 1,000-file change set", applied, 0.0, 1000))
    report("tool_calls", "shell: apply a 1,000-file change set", pct(applied, 0.5), pct(copied, 0.5),
           "a plain copy of the same files", max_ms=1000)


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
        except BaseException as exc:  # said, then the parent says which layer failed
            print(f"{label}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        finally:
            os._exit(0)
    os.close(write)
    data = os.read(read, 64)
    os.close(read)
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"the measured layer failed: {label}")
    wall, cpu = (float(x) for x in data.split())
    CPU.setdefault(label, []).append(cpu)
    return wall


def _mapped_child(inner) -> None:
    """A child in a user namespace mapped as a worker's is, running ``inner()``."""
    import socket

    from workbench.sandbox._libc import CLONE_NEWUSER, unshare
    from workbench.sandbox.userns import map_user

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
    map_user(pid, os.getuid(), os.getgid())
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
    from workbench.sandbox.zygote import recv_fds, send_fds

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
        _, fds = recv_fds(ours)
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
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
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
    found = {runtime: asyncio.run(measure(root, runtime)) for runtime in ("python", "deno")}
    for runtime, samples in found.items():
        first_goal, later_goal = goals[runtime]
        print(line(f"{runtime}: first call (cold worker)", samples["first"], floor_ms, first_goal))
        print(line(f"{runtime}: spaced calls ({GAP_S * 1000:g} ms apart)", samples["spaced"], floor_ms,
                   later_goal) + cpu_note(f"{runtime}:spaced"))
        print(line(f"{runtime}: back-to-back, turns of {BURST}", samples["burst"], floor_ms, later_goal)
              + cpu_note(f"{runtime}:burst"))
        print(line(f"{runtime}: {RUNS} calls with no gap at all", samples["sustained"], floor_ms)
              + cpu_note(f"{runtime}:sustained"))
        print(line(f"{runtime}: its call on a ready worker", samples["ready"]))
    deno_peer = fresh_deno_run(root)
    bwrapped = bwrap_per_call(root)
    print(line("peer: fresh `deno run` per call", deno_peer) + cpu_note("peer:deno"))
    if bwrapped is None:
        print("peer: bwrap per call: not measured, bwrap (Debian's bubblewrap) is not installed here")
    else:
        print(line("peer: bwrap per call (python -I -S)", bwrapped) + cpu_note("peer:bwrap"))
    peers = {"python": (bwrapped, "bwrap per call (python -I -S)") if bwrapped is not None
             else (bare_interpreter(), "bare `python -I -S` start (no bwrap here)"),
             "deno": (deno_peer, "fresh `deno run` per call")}
    for runtime, samples in found.items():
        first_goal, later_goal = goals[runtime]
        peer, peer_name = pct(peers[runtime][0], 0.5), peers[runtime][1]
        report("tool_calls", f"{runtime}: first call (cold worker), overhead",
               pct(samples["first"], 0.5) - floor_ms, peer, peer_name, max_ms=first_goal)
        report("tool_calls", f"{runtime}: spaced calls ({GAP_S * 1000:g} ms apart), overhead",
               pct(samples["spaced"], 0.5) - floor_ms, peer, peer_name, max_ms=later_goal)
        report("tool_calls", f"{runtime}: back-to-back calls, overhead", pct(samples["burst"], 0.5)
               - floor_ms, peer, peer_name, max_ms=later_goal)
    report("tool_calls", "deno: its call on a ready worker", pct(found["deno"]["ready"], 0.5),
           pct(found["python"]["ready"], 0.5), "python's, same run", max_ratio=READY_RATIO)
    if os.environ.get("BENCH_ONLY") == "calls":
        return
    shell_part(root)
    if os.environ.get("BENCH_LAYERS", "1") != "0":
        # In a small process of its own, as the zygote is (forking this one costs more).
        subprocess.run([sys.executable, "-I", __file__, "--layers", str(root)], check=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--layers"]:
        layer_costs(Path(sys.argv[2]))
    else:
        main()
