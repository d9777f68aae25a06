"""The ``shell`` tool as a ``ToolSource``: a command line run with bash in the sandbox on
a copy-on-write view of the chat's project folder, its changes applied as one change set.

The tool asks once for ``run bash`` and ``write $project`` (the broker's prompt, like any
tool's, naming ``this project (/path)``; ``$project`` is never ``/``, the home folder or
the workbench's own files, so the call is refused there, saying why). Each call:
the chat's folder is pinned; a worker (``runner.py``) runs the command with the
host's programs read-only, no network but the proxy, a time limit; what it changed
is applied by ``Changes`` (``changes.py``); the answer carries the output (cut at
``shell.answer_bytes``), the exit code, the changed files and the change set's id,
which ``u`` on the call's card and ``workbench changes undo ID`` undo.

Where the machine cannot isolate it (no overlay in a user namespace, a required
sandbox layer missing, no memory cgroup for its processes) the call is refused as
``unavailable``, saying why, and ``workbench doctor`` shows the same check.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.config.settings import NETWORK_LEVELS, Settings
from workbench.errors import ToolError
from workbench.events import NETWORK_ANSWERS, NetworkRequest, RequestDenied
from workbench.sandbox.client import ZygoteClient
from workbench.sandbox.paths import PathChanged, Pin, open_pinned, pin_path, read_beneath
from workbench.sandbox.policy import Limits
from workbench.sandbox.proxy import internal, parse_address
from workbench.shell import network
from workbench.shell.changes import Changes
from workbench.shell.runner import ShellPolicy, ShellRunner
from workbench.tools.registry import HOST_RUNTIME, Tool
from workbench.tools.source import SourceRow, ToolSource

TOOL = "shell"
EXTENSION = "shell"

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "minLength": 1, "maxLength": 100_000,
                    "description": "The command line, run with bash -c in the project folder."},
        "timeout_s": {"type": "integer", "minimum": 1, "maximum": 1680,
                      "description": "Seconds it may run (default 120; at most the "
                                     "shell.max_timeout_s setting, 28 minutes)."},
    },
    "required": ["command"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Run a command line with bash in an isolated sandbox on this chat's project folder: "
    "build, test, convert, inspect (make, python -m pytest, git status...). The command "
    "starts in the project folder and sees the host's installed programs read-only; what "
    "it changes in the project is applied as one change the person can undo. No network "
    "unless the chat allows it. Returns the exit code, the output (stdout and stderr, cut "
    "at 64 KiB) and the files it changed.")

PERMISSIONS = {"run": [{"binary": "bash", "reason": "run command lines in the sandbox on a "
                        "copy of this project; what they change lands as one change you can undo"}],
               "write": [{"path": "$project", "reason": "run commands on this project's files; "
                          "what they change lands in it as one change you can undo"}]}
"""``run bash`` and the chat's folder (``$project``), named ``this project (/path)`` in the
prompt as the built-in file tools name it. ``$project`` is never ``/``, the home folder or
the workbench's own files, so the shell never runs on them."""

LONGEST_S = 28 * 60
"""The longest any command may run (the bound of ``shell.max_timeout_s``)."""


_TMP_PROGRAM = re.compile(r"['‘]?(/tmp/[^\s:'\"‘’]+)['’]?(?:: bad interpreter)?: No such file or directory")
_NO_INTERPRETER = re.compile(r": ([^\s:'\"]+): cannot execute: required file not found")
_TMP_PATH = re.compile(r"/tmp/[A-Za-z0-9._+@%=,/-]{1,200}")


def _interpreter_under_tmp(output: str, project: Pin) -> str:
    """The ``/tmp`` interpreter a script's ``#!`` line names, when bash said only that
    the script "cannot execute: required file not found" (bash 5.2 names no
    interpreter). The script is read beneath the project (its first line, a regular
    file, no link followed); a script elsewhere is not looked at."""
    found = _NO_INTERPRETER.search(output)
    if found is None:
        return ""
    script, folder = found.group(1), project.path.rstrip("/") + "/"
    if script.startswith("/"):
        if not script.startswith(folder):
            return ""
        script = script[len(folder):]
    try:
        fd = open_pinned(project)  # the very folder the command ran on
        if fd is None:
            return ""
        try:
            first = read_beneath(fd, script, 256, head=True).split(b"\n", 1)[0]
        finally:
            os.close(fd)
    except (OSError, ValueError, PathChanged):
        return ""
    if not first.startswith(b"#!"):
        return ""
    words = first[2:].decode("utf-8", "replace").split()
    if words[:1] == ["/usr/bin/env"] or words[:1] == ["/bin/env"]:
        words = [w for w in words[1:] if not w.startswith("-")]
    named = _TMP_PATH.fullmatch(words[0]) if words else None
    return named.group(0) if named else ""


def _missing_tmp_program(output: str, project: Pin, *, read: bool = True) -> str:
    """Why a program or file named under ``/tmp`` was not found, when bash (or the
    program) said only "No such file", or a script's ``#!`` line names one: the shell's
    ``/tmp`` is its own, empty at each command, not the host's. The host's ``/tmp`` is
    never looked at, so the answer tells nothing of what is there. With ``read`` false,
    from the output alone (no script's first line is read)."""
    found = _TMP_PROGRAM.search(output)
    missing = found.group(1) if found else (_interpreter_under_tmp(output, project) if read else "")
    if not missing:
        return ""
    return (f"{missing} was not found because the shell's /tmp is its own, empty at "
            "each command, not the host's /tmp: put the program or file in the project, or run "
            "a program of the host's installation (the folders shell.programs names)")


class ShellHost:
    """What the shell asks of the host, given by the composition root."""

    def __init__(self, *, settings: Callable[[], Settings], trusted: Callable[[str], bool],
                 folder: Callable[[str | None], Path], zygote: Callable[[], ZygoteClient],
                 readiness: Callable[[], Awaitable[dict]], limits: Callable[[], Limits],
                 store: Any) -> None:
        self.settings = settings
        """The settings in force."""
        self.trusted = trusted
        """Whether a setting's value comes from the person's own config (or its default)."""
        self.folder = folder
        """The project folder of a chat (the host's folder without one)."""
        self.zygote = zygote
        self.readiness = readiness
        """The sandbox's probe report (``workbench doctor``'s checks)."""
        self.limits = limits
        """Each worker's resource limits."""
        self.store = store


@dataclass
class CallNet:
    """One call's network decisions."""

    level: str
    ceiling: str
    session_id: str | None
    decided: dict[str, str | None]
    waited: float = 0.0


class ShellSource(ToolSource):
    """The source named ``shell``: one tool, ``shell`` (see the module docstring)."""

    name = "shell"
    precedence = "builtin"

    def __init__(self, host: ShellHost, changes: Changes) -> None:
        self.host = host
        self.changes = changes
        self.runner = ShellRunner(host.zygote)

    # --- the contract ------------------------------------------------------------

    def tools(self) -> list[Tool]:
        if not self.host.settings().shell.enabled:
            return []
        return [Tool(name=TOOL, description=DESCRIPTION, parameters=PARAMETERS, extension=EXTENSION,
                     source="builtin", function=TOOL, folder=Path(__file__).resolve().parent,
                     entry=None, runtime=HOST_RUNTIME, permissions=PERMISSIONS,
                     timeout_ms=(LONGEST_S + 120) * 1000, handler=self._handler)]

    def status_rows(self) -> list[SourceRow]:
        if not self.host.settings().shell.enabled:
            return []
        return [SourceRow(EXTENSION, "Shell (sandbox)", "workbench", 1)]

    def follow_config(self, settings: Any) -> None:
        self.runner.forget()

    async def stop(self) -> None:
        await self.runner.aclose()

    def close(self) -> None:
        self.runner.forget()

    # --- settings the person alone decides -------------------------------------------

    def _own(self, key: str, value: Any, default: Any) -> Any:
        return value if self.host.trusted(key) else default

    def ceiling(self) -> str:
        """The network ceiling from the person's own config (a project's cannot raise it)."""
        from workbench.config.settings import DEFAULTS

        return self._own("shell.network_ceiling", self.host.settings().shell.network_ceiling,
                         DEFAULTS.shell.network_ceiling)

    def network(self, session_id: str | None) -> dict[str, Any]:
        """The chat's network: its own choice or the setting, within the ceiling."""
        chosen = self.host.store.session_network(session_id) if session_id else None
        wanted = chosen or self.host.settings().shell.network
        ceiling = self.ceiling()
        return {"level": network.narrower(wanted, ceiling), "chosen": chosen, "setting": wanted,
                "ceiling": ceiling, "levels": list(NETWORK_LEVELS),
                "allowed_hosts": sorted(self._allowed(session_id))}

    def _allowed(self, session_id: str | None) -> set[str]:
        """The hosts the person allowed for the rest of a chat (``Allow for this chat``),
        kept with the chat in the store so a resumed chat still allows them."""
        return self.host.store.session_hosts(session_id) if session_id else set()

    def set_network(self, session_id: str, level: str | None) -> dict[str, Any]:
        """Choose a chat's network (None: follow the setting). A level above the
        ceiling is kept but capped by it, and the answer says so."""
        if level is not None and level not in NETWORK_LEVELS:
            raise ToolError("invalid_arguments", f"the network must be one of "
                            f"{', '.join(NETWORK_LEVELS)}, not {level!r}")
        self.host.store.set_session_network(session_id, level)
        self.runner.forget()
        return self.network(session_id)

    # --- a call ------------------------------------------------------------------

    async def _handler(self, arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
        settings = self.host.settings().shell
        command = str(arguments["command"])
        timeout_s = int(arguments.get("timeout_s") or settings.timeout_s)
        note = ""
        if timeout_s > settings.max_timeout_s:
            note = (f"the time limit asked ({timeout_s} s) is beyond shell.max_timeout_s; "
                    f"{settings.max_timeout_s} s applies")
            timeout_s = settings.max_timeout_s
        await self._check_isolation()
        session_id = ctx.chat.session_id
        folder = self.host.folder(session_id)
        if not folder.is_dir():
            raise ToolError("unavailable", f"the chat's project folder {folder} is not a folder")
        projects = [r.value for r in ctx.granted if r.kind == "write" and r.project]
        if os.path.realpath(folder) not in projects:
            raise ToolError("permission", f"the chat's folder {folder} is not the project this call "
                            f"was granted ({', '.join(projects) or 'none'}); nothing ran")
        try:
            pin = pin_path(str(folder))
        except PathChanged as exc:
            raise ToolError("permission", str(exc)) from None
        net = self.network(session_id)
        calls = CallNet(net["level"], net["ceiling"], session_id, {})
        programs = self._own("shell.programs", tuple(settings.programs),
                             tuple(type(settings)().programs))
        limits = self.host.limits()
        limits = Limits(**{**limits.__dict__, "cpu_seconds": timeout_s + 5})
        shape = ShellPolicy(project=pin.path, device=pin.device, inode=pin.inode,
                            programs=tuple(programs), upper_mb=settings.upper_mb,
                            tmp_mb=settings.tmp_mb, limits=limits,
                            net=tuple((e.host, tuple(int(p) for p in e.ports))
                                      for e in network.endpoints(calls.level)),
                            proxied=calls.ceiling != "off")
        policy = shape.build()
        worker = await self.runner.worker(policy)

        async def decide(host: str, port: int) -> str | None:
            return await self._decide(calls, host, port, command, ctx)

        ran = await worker.run(command, timeout_s=timeout_s, answer_bytes=settings.answer_bytes,
                               decide=decide, waiting=lambda: calls.waited)
        try:
            applied = await asyncio.to_thread(self.changes.apply, ran.upper_fd, project=pin,
                                              session_id=session_id, command=command,
                                              since_ns=ran.since_ns)
            apply_error = ""
        except ToolError as exc:
            applied, apply_error = {"change_set": None, "files": [], "more": 0, "skipped": [],
                                    "conflicts": []}, exc.message
        finally:
            os.close(ran.upper_fd)
        self.runner.prepare(policy)
        answer: dict[str, Any] = {
            "exit_code": ran.exit_code, "ended": ran.ended, "output": ran.output.text(),
            "output_bytes": ran.output.total, "change_set": applied["change_set"],
            "changes": applied["files"]}
        if ran.output.cut:
            answer["output_cut"] = (f"the output was cut at {settings.answer_bytes // 1024} KiB: "
                                    f"{ran.output.cut} of {ran.output.total} bytes left out")
        for key in ("more", "skipped", "conflicts"):
            if applied[key]:
                answer["more_changes" if key == "more" else key] = applied[key]
        if apply_error:
            answer["not_applied"] = apply_error
        if ran.net_events:
            answer["network"] = [event["message"] for event in ran.net_events[:20]]
        missing = _missing_tmp_program(answer["output"], pin, read=False)
        if not missing and _NO_INTERPRETER.search(answer["output"]):
            # Only then is a script's first line read, beneath the project: off the loop.
            missing = await asyncio.to_thread(_missing_tmp_program, answer["output"], pin)
        if missing:
            note = f"{note}; {missing}" if note else missing
        if note:
            answer["note"] = note
        if applied["change_set"] is not None:
            answer["undo"] = f"workbench changes undo {applied['change_set']}"
        return answer

    async def _check_isolation(self) -> None:
        """Refuse, saying why, where the machine cannot isolate a command."""
        report = await self.host.readiness()
        checks = {c["name"]: c for c in report.get("checks", [])}
        missing = [f"{c['name']}: {c['detail']}" for c in report.get("checks", [])
                   if c["required"] and not c["ok"]]
        for name in ("shell-overlay",):
            found = checks.get(name)
            if found is None or not found["ok"]:
                missing.append(f"{name}: {found['detail'] if found else 'not probed'}")
        memory = checks.get("memory-cgroup")
        if (memory is None or not memory["ok"]) and not self.host.limits().per_process_memory:
            missing.append(f"memory-cgroup: {memory['detail'] if memory else 'not probed'}")
        if missing:
            raise ToolError("unavailable", "this machine cannot isolate a shell command ("
                            + "; ".join(missing) + "); see `workbench doctor`")

    async def _decide(self, calls: CallNet, host: str, port: int, command: str, ctx: Any) -> str | None:
        """Whether the proxy lets the command reach ``host:port`` (None) or why not."""
        target = f"{host}:{port}"
        if target in calls.decided:
            return calls.decided[target]
        literal = parse_address(host)
        if literal is not None and internal(literal):
            why = f"{target} is an internal address ({internal(literal)}): the shell never reaches one"
            calls.decided[target] = why
            return why
        if network.allows(calls.level, host, port):
            return None
        if not network.allows(calls.ceiling, host, port):
            why = (f"{target} is beyond this chat's network ({network.described(calls.level)}) and "
                   f"the ceiling shell.network_ceiling ({network.described(calls.ceiling)}, set in "
                   "your own config)")
            calls.decided[target] = why
            return why
        if host.lower() in self._allowed(calls.session_id):
            return None
        started = time.monotonic()
        try:
            answer = await ctx.ask(NetworkRequest(tool=TOOL, host=host, port=port,
                                                  session_id=calls.session_id, command=command[:500]))
        except RequestDenied as exc:
            answer, reason = "deny", exc.reason
        else:
            reason = "you chose Deny"
        finally:
            calls.waited += time.monotonic() - started
        if answer not in NETWORK_ANSWERS:
            answer, reason = "deny", f"the answer {answer!r} is not one of {', '.join(NETWORK_ANSWERS)}"
        if answer == "chat" and calls.session_id:
            self.host.store.allow_session_host(calls.session_id, host.lower())
        decided = None if answer in ("once", "chat") else f"{target} was not allowed: {reason}"
        calls.decided[target] = decided
        return decided
