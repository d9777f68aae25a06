"""Answer the core's requests with no person at the keyboard.

A permission request whose required entries the ``--grant`` flags of the turn cover
(``core/run_grants.py``) is answered ``once``, the optional entries they leave out
declined. Every other one follows the ``--approvals`` policy:

- ``deny`` (the default): every request is refused; when it asks only for optional
  entries, they are declined for this call and the tool runs without them;
- ``allowlisted``: a tool named in the ``headless.allowlist`` setting is granted
  everything asked (optional entries too) for this call; any other tool is refused,
  or runs without the optional entries when nothing required is asked;
- ``delegate:COMMAND``: COMMAND runs with the request as JSON on stdin (each entry of
  ``permissions`` with its ``optional`` flag and its ``key``) and answers on stdout
  (``{"decision": "once"|"session"|"always"|"deny", "declined": [KEY, ...]}``, the
  optional ``declined`` listing optional entries left out; or ``{"answers": [...]}``
  for a form); no answer in time, a crash or unreadable output means deny.

A shell command's network card (``NetworkRequest``) is refused under ``deny``, answered
``once`` for an allowlisted ``shell`` under ``allowlisted``, and by the delegate
(``{"decision": "once"|"chat"|"deny"}``).

Ask-user forms and schedule proposals are answered from ``--answers FILE`` (one entry
per request, in the order they come: a list of answers for a form; ``true``, ``false`` or
``{"accepted": true, "draft": {FIELD: VALUE}}`` for a proposal), then by the delegate
(``{"answers": [...]}`` for a form, ``{"accepted": …, "draft"?: …}`` for a proposal),
and otherwise refused. Every answer is checked against its request as the TUI form
checks it (``workbench.core.answers``); one that does not fit refuses the request with
a reason naming the question.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.core.settings_service import DEFAULTS
from workbench.core.answers import AnswerProblem, check_answers, check_proposal_answer
from workbench.core.run_grants import RunGrant, covering
from workbench.errors import WorkbenchError
from workbench.events import (NETWORK_ANSWERS, AskUserRequest, NetworkRequest, PermissionAnswer,
                              PermissionRequest, Request, RequestDenied, ScheduleProposalRequest)

DECISIONS = ("once", "session", "always", "deny")


def parse_policy(policy: str) -> tuple[str, str | None]:
    """Split ``--approvals`` into its kind and the delegate command.

    Raises:
        WorkbenchError: (exit code 2) the policy is not one of the three forms.
    """
    if policy in ("deny", "allowlisted"):
        return policy, None
    if policy.startswith("delegate:") and policy[len("delegate:"):].strip():
        return "delegate", policy[len("delegate:"):].strip()
    from workbench.errors import ExitCode
    raise WorkbenchError(f"--approvals must be deny, allowlisted or delegate:COMMAND, not {policy!r}",
                         exit_code=ExitCode.USAGE)


def load_answers(path: Path) -> list[Any]:
    """Read an answers file: a JSON list with one entry per form (a list of answers) or
    schedule proposal (``true``, ``false`` or an object with ``accepted``).

    Raises:
        WorkbenchError: The file is missing, not a regular file, not JSON as
            ``jsontext.loads`` reads it (nesting, NaN, lone surrogates, UTF-8 named with
            their place), or not a list of such entries.
    """
    from workbench import jsontext

    try:
        data = jsontext.loads(jsontext.read_file(path), str(path))
    except OSError as exc:
        raise WorkbenchError(f"cannot read the answers file: {exc.strerror}", where=str(path)) from exc
    if isinstance(data, dict) and "forms" in data:
        data = data["forms"]
    if not isinstance(data, list):
        raise WorkbenchError("expected a list with one list of answers per form", where=f"{path}#/")
    for index, entry in enumerate(data):
        if not (isinstance(entry, (list, bool))
                or (isinstance(entry, dict) and isinstance(entry.get("accepted"), bool))):
            raise WorkbenchError("each entry answers a form (a list of answers) or a schedule "
                                 "proposal (true, false or {\"accepted\": …})",
                                 where=f"{path}#/{index}")
    return data


def _key(entry: dict[str, Any]) -> str:
    kind, value = str(entry.get("kind", "")), str(entry.get("value") or "")
    return str(entry.get("key") or (f"{kind}:{value}" if value else kind))


def _without_optional(request: PermissionRequest, reason: str) -> PermissionAnswer:
    """Decline every optional entry for this call alone, so the tool runs without them;
    refuse (``RequestDenied`` with ``reason``) when a required entry is asked."""
    if not request.permissions or any(not entry.get("optional") for entry in request.permissions):
        raise RequestDenied(reason)
    return PermissionAnswer("once", declined=tuple(_key(e) for e in request.permissions))


class HeadlessResponder:
    """Answers requests by policy; see the module docstring.

    Args:
        approvals: The ``--approvals`` value.
        allowlist: Tool names granted under ``allowlisted``.
        answers: The forms' answers, consumed in order.
        delegate_timeout: Seconds a delegate has to answer.
        record: Called with ``(request, answer_or_reason)`` for every request, so the
            JSONL output shows what was asked and what was said.
        grants: The turn's ``--grant`` flags, read (``resolve_run_grants``).
    """

    consumer = "headless"
    """Whom a model's calls serve here (``ToolGateway.consumer``)."""

    def __init__(self, approvals: str = DEFAULTS.headless.approvals, *,
                 allowlist: list[str] | tuple[str, ...] = (), answers: list[Any] | None = None,
                 delegate_timeout: float = DEFAULTS.headless.delegate_timeout_s,
                 record: Callable[[Request, dict[str, Any]], None] | None = None,
                 grants: tuple[RunGrant, ...] = ()) -> None:
        self.policy, self.delegate = parse_policy(approvals)
        self.grants = grants
        self.allowlist = set(allowlist)
        self.answers = list(answers or [])
        self.delegate_timeout = delegate_timeout
        self.record = record or (lambda request, outcome: None)

    async def answer(self, request: Request) -> Any:
        try:
            answer = await self._answer(request)
        except RequestDenied as exc:
            self.record(request, {"denied": exc.reason})
            raise
        outcome = {"answer": getattr(answer, "decision", answer)}
        if getattr(answer, "declined", ()):
            outcome["declined"] = list(answer.declined)
        self.record(request, outcome)
        return answer

    async def _answer(self, request: Request) -> Any:
        if isinstance(request, PermissionRequest):
            return await self._permission(request)
        if isinstance(request, AskUserRequest):
            if self.answers:
                given, source = self.answers.pop(0), "the answers file"
                if not isinstance(given, list):
                    raise RequestDenied(f"{source}'s next entry answers a schedule proposal, "
                                        f"but {request.tool} asks a form")
            elif self.policy == "delegate":
                reply = await self._ask_delegate(request)
                if not isinstance(reply.get("answers"), list):
                    raise RequestDenied("the delegate gave no answers")
                given, source = reply["answers"], "the delegate"
            else:
                raise RequestDenied("no answers left for this form; pass --answers FILE")
            try:
                return check_answers(request.questions, given)
            except AnswerProblem as exc:
                raise RequestDenied(f"{source}'s answers to {request.tool}'s form: {exc}") from None
        if isinstance(request, NetworkRequest):
            return await self._network(request)
        if isinstance(request, ScheduleProposalRequest):
            if self.answers:
                given, source = self.answers.pop(0), "the answers file"
                if isinstance(given, list):
                    raise RequestDenied(f"{source}'s next entry answers a form, but "
                                        f"{request.tool} proposes a schedule")
            elif self.policy == "delegate":
                given, source = await self._ask_delegate(request), "the delegate"
            else:
                raise RequestDenied("no answer for this schedule proposal; pass --answers FILE")
            try:
                return check_proposal_answer(request.draft, given)
            except AnswerProblem as exc:
                raise RequestDenied(f"{source}'s answer to {request.tool}'s schedule proposal: "
                                    f"{exc}") from None
        raise RequestDenied(f"headless mode cannot answer a {request.kind} request")

    async def _permission(self, request: PermissionRequest) -> PermissionAnswer:
        declined = covering(self.grants, request.tool, request.permissions)
        if declined is not None:
            return PermissionAnswer("once", declined=declined)
        if self.policy == "allowlisted":
            short = request.tool.rpartition(".")[2]
            if request.tool in self.allowlist or short in self.allowlist:
                return PermissionAnswer("once")
            return _without_optional(request, f"{request.tool} is not in headless.allowlist")
        if self.policy == "delegate":
            reply = await self._ask_delegate(request)
            decision = reply.get("decision")
            if decision not in DECISIONS:
                raise RequestDenied(f"the delegate answered {reply!r}, not a decision")
            if decision == "deny":
                raise RequestDenied("the delegate denied it")
            declined = reply.get("declined", [])
            if not isinstance(declined, list) or not all(isinstance(k, str) for k in declined):
                raise RequestDenied(f"the delegate answered {reply!r}: declined must be a list of keys")
            return PermissionAnswer(decision, declined=tuple(declined))
        return _without_optional(request, "the approvals policy is deny; pass --approvals or --grant")

    async def _network(self, request: NetworkRequest) -> str:
        """A shell command's host beyond its chat's network: ``once`` for a tool in the
        allowlist under ``allowlisted``, the delegate's ``{"decision": "once"|"chat"|"deny"}``,
        else refused."""
        if self.policy == "allowlisted":
            if request.tool in self.allowlist:
                return "once"
            raise RequestDenied(f"{request.tool} is not in headless.allowlist")
        if self.policy == "delegate":
            reply = await self._ask_delegate(request)
            decision = reply.get("decision")
            if decision not in NETWORK_ANSWERS or decision == "deny":
                raise RequestDenied(f"the delegate answered {reply!r}")
            return str(decision)
        raise RequestDenied(f"the approvals policy is deny: {request.host}:{request.port} is not "
                            "reached (pass --approvals, or set shell.network)")

    async def _ask_delegate(self, request: Request) -> dict[str, Any]:
        try:
            process = await asyncio.create_subprocess_exec(
                *shlex.split(self.delegate or ""), stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True)
        except OSError as exc:
            raise RequestDenied(f"the delegate could not start: {exc.strerror}") from exc
        try:  # asyncio.timeout: wait_for may drop a ctrl+c landing with the answer
            async with asyncio.timeout(self.delegate_timeout):
                out, _ = await process.communicate(json.dumps(request.to_json()).encode())
        except TimeoutError:
            _end_delegate(process)
            await process.wait()
            raise RequestDenied(f"the delegate did not answer within {self.delegate_timeout:g} s") from None
        except BaseException:  # cancelled (ctrl+c): nothing it started is left running
            _end_delegate(process)
            raise
        if process.returncode != 0:
            raise RequestDenied(f"the delegate exited with status {process.returncode}")
        try:
            reply = json.loads(out.decode() or "null")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RequestDenied("the delegate's answer is not JSON") from exc
        if not isinstance(reply, dict):
            raise RequestDenied("the delegate's answer is not a JSON object")
        return reply


def _end_delegate(process: asyncio.subprocess.Process) -> None:
    """Kill the delegate and everything it started (its own process group: it runs in a
    session of its own), and stop reading its pipes, which a child that left the group
    may still hold open."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    transport = getattr(process, "_transport", None)  # asyncio keeps no public way to close it
    if transport is not None:
        transport.close()
