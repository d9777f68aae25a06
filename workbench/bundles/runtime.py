"""Running a bundle's entrypoint: staged from the pinned snapshot into a private folder
and run by Node (or Deno's Node compatibility) in a shell worker of the sandbox.

The staging folder (beneath the workbench's own cache, mode 0700, removed after the
call) holds the bundle's files under ``bundle/``, the runtime's own ``package.json``
(``{"type": "commonjs"}``: ``.js`` and ``.cjs`` are CommonJS whatever the workspace
declares, ``.mjs`` stays an ES module), and ``.wb/`` with the runner and the call
(``call.json``: the input, bounded). The worker is the shell's (``shell/runner.py``):
PID 1 of its own user, mount, PID, network, IPC and UTS namespaces in a private root
holding only the host's program folders read-only, a private ``/tmp`` and the staging
folder as an overlay whose writes are thrown away; pids and memory cgroups, rlimits,
Landlock, seccomp; a minimal environment. ``bash -c`` execs the runtime, so when it
ends the kernel ends everything it forked (its PID namespace dies with it); at the
time limit the host kills the whole sandbox. No network but what the chat's shell
network allows, through the host's proxy (no card is asked: a host beyond it is refused).

What the runtime prints is one pipe, bounded: past ``output_bytes`` the call fails as
``output_too_large``. The answer is the runner's last marked line; the rest is the log,
made visible (``text.visible``) before anyone sees it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench import text
from workbench.bundles.manifest import Bundle, BundleError
from workbench.errors import ToolError
from workbench.sandbox.client import ZygoteClient
from workbench.sandbox.paths import pin_path
from workbench.sandbox.policy import Limits
from workbench.shell.runner import ShellPolicy, ShellRunner

RUNNER = Path(__file__).with_name("runner.mjs")
RUNTIMES = ("node", "deno")
MAX_INPUT_BYTES = 256 * 1024
MAX_LOG_CHARS = 8000
PACKAGE_JSON = b'{"type": "commonjs", "private": true}\n'
"""The staging folder's package scope, the runtime's own (never a bundle's)."""


def node_binary() -> str | None:
    """Debian's ``nodejs`` (or any ``node`` on ``PATH``), resolved."""
    for candidate in ("/usr/bin/node", shutil.which("node")):
        if candidate and os.access(candidate, os.X_OK):
            return os.path.realpath(candidate)
    return None


def deno_binary() -> str | None:
    from workbench.sandbox.deno import deno_binary as found

    binary = found()
    return os.path.realpath(binary) if binary else None


@dataclass(frozen=True)
class Runtime:
    """A JavaScript runtime a bundle runs under."""

    name: str
    binary: str

    def command(self, stage: str, *, mcp: bool) -> list[str]:
        """The runner's command line in ``stage``."""
        if self.name == "node":
            return [self.binary, "--no-warnings", ".wb/runner.mjs"]
        # What Node may do there, so that both give the same results: the sandbox around
        # the worker is the boundary; Deno's flags keep its reads and writes to the stage.
        flags = ["--no-prompt", "--no-lock", "--quiet", f"--allow-read={stage}",
                 f"--allow-write={stage}", "--allow-env", "--allow-run"]
        return [self.binary, "run", *flags, ".wb/runner.mjs"]

    def child(self, stage: str) -> list[str]:
        """How the runner starts an MCP entrypoint (its path is appended)."""
        if self.name == "node":
            return [self.binary, "--no-warnings"]
        return [self.binary, "run", "--no-prompt", "--no-lock", "--quiet",
                f"--allow-read={stage}", f"--allow-write={stage}", "--allow-env", "--allow-run"]


def choose_runtime(prefer: str = "auto") -> Runtime:
    """Node where it is installed, else Deno; ``prefer`` names one.

    Raises:
        ToolError: ``unavailable`` when neither (or not the one named) is here.
    """
    order = RUNTIMES if prefer == "auto" else (prefer,)
    for name in order:
        binary = node_binary() if name == "node" else deno_binary() if name == "deno" else None
        if binary:
            return Runtime(name, binary)
    raise ToolError("unavailable", "no JavaScript runtime to run bundles: install Debian's "
                    "nodejs (apt-get install nodejs) or the deno package")


@dataclass
class Ran:
    """What a staged call answered."""

    ok: bool
    result: Any
    error: str
    log: str
    runtime: str


class BundleRunner:
    """Runs staged calls in shell workers of the sandbox.

    Args:
        zygote: The host's sandbox zygote.
        scratch: The private folder staging folders are made in.
        limits: Each worker's resource limits.
        programs: The host's program folders a worker sees (``shell.programs``, the
            person's own).
        output_bytes: The most a call may print, answer included.
        readiness: The sandbox's probe report (``workbench doctor``'s checks).
    """

    def __init__(self, *, zygote: Callable[[], ZygoteClient], scratch: Callable[[], Path],
                 limits: Callable[[], Limits], programs: Callable[[], tuple[str, ...]],
                 output_bytes: Callable[[], int], readiness: Callable[[], Awaitable[dict]]) -> None:
        self.readiness = readiness
        self.scratch = scratch
        self.limits = limits
        self.programs = programs
        self.output_bytes = output_bytes
        self.prefer = "auto"
        """``auto`` (Node where installed, else Deno), ``node`` or ``deno``."""
        self.shell = ShellRunner(zygote)
        self.shell.keep_warm = False

    def runtime(self) -> Runtime:
        return choose_runtime(self.prefer)

    async def run(self, bundle: Bundle, *, mode: str, input: Any, tool_name: str = "",
                  timeout_s: float, net: tuple[tuple[str, tuple[int, ...]], ...] = (),
                  proxied: bool = False) -> Ran:
        """Stage ``bundle`` and run it (``mode``: ``tool``, ``inspect`` or ``call``).

        Raises:
            ToolError: ``invalid_arguments`` for an input past the bound, ``timeout``,
                ``output_too_large``, ``tool`` when the runtime gave no answer,
                ``unavailable`` when no runtime or no sandbox is here.
        """
        data = json.dumps(input, ensure_ascii=False, allow_nan=False)
        if len(data.encode()) > MAX_INPUT_BYTES:
            raise ToolError("invalid_arguments", f"the input is {len(data.encode())} bytes; a bundle "
                            f"call takes at most {MAX_INPUT_BYTES}")
        runtime = self.runtime()
        await self._check_isolation()
        base = self.scratch()
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        stage = base / f"run-{secrets.token_hex(8)}"
        stage.mkdir(mode=0o700)
        try:
            mark = f"\x1eWB-{secrets.token_hex(16)}:"
            self._stage(stage, bundle, {"mark": mark, "mode": "tool" if mode == "tool" else mode,
                                        "entrypoint": bundle.entrypoint, "input": input,
                                        "toolName": tool_name, "child": runtime.child(str(stage)),
                                        "maxProtocolBytes": self.output_bytes()})
            return await self._run(stage, runtime, mark, mcp=mode != "tool", timeout_s=timeout_s,
                                   net=net, proxied=proxied)
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    async def _check_isolation(self) -> None:
        """Refuse, saying why, where the machine cannot isolate the runtime as it isolates
        a shell command (the same checks: a required layer, the overlay, a memory cgroup
        for its processes unless per-process bounds were accepted)."""
        report = await self.readiness()
        checks = {c["name"]: c for c in report.get("checks", [])}
        missing = [f"{c['name']}: {c['detail']}" for c in report.get("checks", [])
                   if c["required"] and not c["ok"]]
        overlay = checks.get("shell-overlay")
        if overlay is None or not overlay["ok"]:
            missing.append(f"shell-overlay: {overlay['detail'] if overlay else 'not probed'}")
        memory = checks.get("memory-cgroup")
        if (memory is None or not memory["ok"]) and not self.limits().per_process_memory:
            missing.append(f"memory-cgroup: {memory['detail'] if memory else 'not probed'}")
        if missing:
            raise ToolError("unavailable", "this machine cannot isolate a bundle's entrypoint ("
                            + "; ".join(missing) + "); see `workbench doctor`")

    @staticmethod
    def _stage(stage: Path, bundle: Bundle, call: dict[str, Any]) -> None:
        """Write the snapshot's files (never the revision folder's) and the runtime's own."""
        (stage / "package.json").write_bytes(PACKAGE_JSON)
        (stage / ".wb").mkdir()
        (stage / ".wb" / "runner.mjs").write_bytes(RUNNER.read_bytes())
        (stage / ".wb" / "call.json").write_text(json.dumps(call, ensure_ascii=False))
        files = stage / "bundle"
        files.mkdir()
        for name, content in bundle.files.items():
            target = files.joinpath(*name.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8") as handle:  # never through a link
                handle.write(content)

    async def _run(self, stage: Path, runtime: Runtime, mark: str, *, mcp: bool, timeout_s: float,
                   net: tuple[tuple[str, tuple[int, ...]], ...], proxied: bool) -> Ran:
        pin = pin_path(str(stage))
        limits = self.limits()
        limits = Limits(**{**limits.__dict__, "cpu_seconds": int(timeout_s) + 5})
        programs = tuple(dict.fromkeys((*self.programs(), os.path.dirname(runtime.binary))))
        shape = ShellPolicy(project=pin.path, device=pin.device, inode=pin.inode,
                            programs=programs, upper_mb=16, tmp_mb=64, limits=limits,
                            net=net, proxied=proxied)
        policy = shape.build()
        policy.env.update({"DENO_DIR": "/tmp/deno", "DENO_NO_UPDATE_CHECK": "1", "NO_COLOR": "1",
                           "HOME": "/tmp"})
        command = "exec " + " ".join(_quote(word) for word in runtime.command(pin.path, mcp=mcp))
        limit = self.output_bytes()
        worker = await self.shell.worker(policy)
        ran = await worker.run(command, timeout_s=timeout_s, answer_bytes=limit, decide=None,
                               waiting=lambda: 0.0)
        os.close(ran.upper_fd)  # what it wrote in the staging folder is thrown away
        if ran.timed_out:
            raise ToolError("timeout", f"the bundle's entrypoint did not answer within {timeout_s:g} s; "
                            "it was stopped with everything it started")
        if ran.output.cut:
            raise ToolError("output_too_large", f"the bundle printed more than {limit} bytes "
                            f"({ran.output.total}); it was stopped and its output left out")
        raw = bytes(ran.output.head) + bytes(ran.output.tail)
        at = raw.rfind(mark.encode())
        if at < 0:
            log = text.visible(raw.decode("utf-8", "replace"))[-MAX_LOG_CHARS:]
            raise ToolError("tool", f"the bundle's entrypoint ended ({ran.ended}) without an answer"
                            + (f"; it printed: {log}" if log.strip() else ""))
        line = raw[at + len(mark.encode()):].split(b"\n", 1)[0]
        try:
            answer = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ToolError("tool", "the bundle's answer is not JSON") from None
        log = text.visible(raw[:at].decode("utf-8", "replace").strip("\n"))
        if len(log) > MAX_LOG_CHARS:
            log = log[:MAX_LOG_CHARS // 2] + " […] " + log[-MAX_LOG_CHARS // 2:]
        if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
            raise ToolError("tool", "the bundle's answer has not the runner's shape")
        return Ran(answer["ok"], answer.get("result"), str(answer.get("error", "")), log, runtime.name)


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def check_input(bundle: Bundle, value: Any) -> None:
    """``value`` against the manifest's ``inputSchema``, when it has one.

    Raises:
        BundleError: ``input`` does not match, saying where and why.
    """
    schema = bundle.manifest.get("inputSchema")
    if schema is None:
        return
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path)
        raise BundleError("input" + (f"/{where}" if where else ""),
                          f"does not match the bundle's inputSchema: {first.message}")
