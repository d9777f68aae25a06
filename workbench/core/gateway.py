"""The tool gateway: the one door every tool call goes through.

Whoever makes the call — the model, a person at the CLI, a schedule, another agent —
it is resolved, validated, checked against grants, bounded, run, recorded in the
store and the audit log, and published as events, in that order. No side path skips
a step.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any


from workbench import ctx_spec, jsontext
from workbench.agent.messages import new_call_id
from workbench.config.settings import DEFAULTS
from workbench.core.argument_check import Check, quick_check
from workbench.core.call_log import CallLog
from workbench.core.calls import CallOptions, ToolOutcome
from workbench.core.run_grants import ACT_KIND
from workbench.errors import ToolError
from workbench.events import (AskUserRequest, DisplayBubble, PermissionRequest, RequestDenied,
                              ToolCallEnded, ToolCallLog, ToolCallProgress, ToolCallStarted)
from workbench.hooks import dispatch
from workbench.hooks.dispatch import join_contexts
from workbench.hooks.registry import (REWRITE_KIND, REWRITE_VALUE, Hook, HookRegistry,
                                      rewrite_key)
from workbench.permissions.broker import Broker, Refusal
from workbench.permissions.requirements import (OS_KINDS, Requirement, TemplateRoots, on_this_system,
                                                requirements_of)
from workbench.tools.context import ChatContext, ToolContext
from workbench.tools.registry import Tool, ToolRegistry

if TYPE_CHECKING:
    from workbench.core.outside_changes import OutsideChanges

log = logging.getLogger(__name__)

Runner = Callable[[Tool, dict[str, Any], ToolContext], Any]

_QUICK_DRAFTS = ("Draft6Validator", "Draft7Validator", "Draft201909Validator",
                 "Draft202012Validator")
"""The drafts whose type rules ``argument_check`` follows (by class name: ``jsonschema``
is imported at the first validation, not when the host starts)."""


class _PausableDeadline:
    """A time limit that stops counting while a form is open.

    ``run`` awaits the tool in the calling task under an ``asyncio.timeout`` scope,
    which ``pause`` and ``resume`` move: no task of its own and no polling, so a warm
    call pays nothing for the limit.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.paused_total = 0.0
        self._paused_at: float | None = None
        self._scope: asyncio.Timeout | None = None

    def pause(self) -> None:
        self._paused_at = time.monotonic()
        self._move(None)

    def resume(self) -> None:
        if self._paused_at is not None:
            self.paused_total += time.monotonic() - self._paused_at
            self._paused_at = None
            self._move(self.remaining())

    def remaining(self) -> float | None:
        """Seconds left, or None while paused."""
        if self._paused_at is not None:
            return None
        return self.seconds - (time.monotonic() - self.started - self.paused_total)

    def _move(self, remaining: float | None) -> None:
        """Make the running scope expire ``remaining`` seconds from now (never while None)."""
        if self._scope is None or self._scope.expired():
            return
        when = None if remaining is None else asyncio.get_running_loop().time() + remaining
        self._scope.reschedule(when)

    async def run(self, awaitable: Awaitable[Any]) -> Any:
        """Await ``awaitable`` in this task; past the limit it is cancelled, its cleanup
        (the runner kills the worker) is awaited, and the call fails.

        Raises:
            ToolError: of kind ``timeout`` when the limit passed, however the tool ended.
        """
        task = asyncio.current_task()
        cancelling = task.cancelling() if task is not None else 0
        scope = asyncio.timeout(None)
        try:
            async with scope:
                self._scope = scope
                self._move(self.remaining())
                result = await awaitable
        except BaseException as exc:
            cancelled_too = (isinstance(exc, asyncio.CancelledError) and task is not None
                             and task.cancelling() > cancelling)
            if not scope.expired() or cancelled_too:
                raise
        finally:
            self._scope = None
        if scope.expired():
            raise ToolError("timeout", f"the call took longer than {self.seconds:g} s")
        return result


class ToolGateway:
    """Runs tool calls with every check in order; see the module docstring."""

    def __init__(self, *, registry: ToolRegistry, store, broker: Broker, publish: Callable,
                 responder, runner: Runner, roots: TemplateRoots,
                 default_timeout_ms: int = DEFAULTS.tools.timeout_ms,
                 max_output_bytes: int = DEFAULTS.tools.max_output_bytes,
                 max_input_bytes: int = 1 << 20, hooks: HookRegistry | None = None,
                 run_hook: dispatch.RunHook | None = None,
                 observe: Callable[[str, dict[str, Any]], None] | None = None,
                 cwd: str = "") -> None:
        self.registry = registry
        self.store = store
        self.broker = broker
        self.publish = publish
        self.responder = responder
        self.runner = runner
        self.roots = roots
        self.default_timeout_ms = default_timeout_ms
        self.max_output_bytes = max_output_bytes
        self.max_input_bytes = max_input_bytes
        self._validators: dict[str, tuple[Any, Any, Check | None]] = {}
        """Per tool: the schema object a validator was built for, the validator, and the
        quick check of that schema (None when it has none)."""
        self.hooks = hooks or HookRegistry()
        self.run_hook = run_hook
        self.observe = observe or (lambda event, payload: None)
        self.cwd = cwd
        self._running: dict[str, tuple[asyncio.Task, ToolContext]] = {}
        """Calls whose tool is running: the task awaiting it and its context."""
        self._stopping: set[str] = set()
        """Calls ``cancel_call`` stopped, until their runner has returned."""
        self.call_log: CallLog | None = None
        """Where ``ctx.log`` lines go besides the event stream (the log file, the call's
        record); the host sets it."""
        self.locale: str | None = None
        """The person's locale, which ``ctx.getChatContext()`` tells tools; the host sets it."""
        self.outside: OutsideChanges | None = None
        """Where a change an extension's tool reports is checked and recorded
        (``core/outside_changes.py``); the host sets it."""
        self.review_writes: str = DEFAULTS.tools.review_writes
        """``tools.review_writes``: when file tools show a change as a diff question
        before writing it (``auto``: when the responder is not an interactive chat)."""

    def requirements(self, tool: Tool) -> list[Requirement]:
        """The tool's declared permissions, templates expanded; an action tool's ``act``
        too (asked for only when a call is unattended: ``_check_action``)."""
        found = (requirements_of(tool.permissions, roots=self.roots, extension_dir=tool.folder)
                 if tool.permissions else [])
        return found + [_act(tool)] if tool.action else found

    def attended(self, options: CallOptions) -> bool:
        """Whether a person is there for this call: the person's own, or a model's in an
        interactive chat (the TUI's responder)."""
        if options.caller == "person":
            return True
        return options.caller == "model" and bool(getattr(self.responder, "interactive", False))

    async def _check_action(self, tool: Tool, options: CallOptions) -> None:
        """An action tool runs at once when attended; unattended, it needs ``act``
        granted (standing, ``--grant TOOL:act``, a schedule card's grant).

        Raises:
            ToolError: ``permission`` when it is not granted.
        """
        if not tool.action or self.attended(options):
            return
        await self._settle(tool.grant_key, [_act(tool)], options)

    async def call(self, name: str, arguments: Any, options: CallOptions = CallOptions(),
                   call_id: str | None = None) -> ToolOutcome:
        """Make one tool call; never raises for a failure of the call itself.

        ``call_id`` is ours (the key of the call's record, what events, cancel and the
        audit name it by); a new one when omitted.
        """
        call_id = call_id or new_call_id()
        try:
            tool = self.registry.resolve(name)
        except ToolError as exc:
            return self.refused(call_id, name, arguments, options, exc)
        if tool.person_only and options.caller != "person":
            return self.refused(call_id, tool.qualified_name, arguments, options, ToolError(
                "permission", f"{tool.name} is run by the person only (\"audience\": \"person\"); "
                f"a {options.caller} cannot call it"))
        try:
            text = self._validate(tool, arguments)
        except ToolError as exc:
            return self.refused(call_id, tool.qualified_name, arguments, options, exc)
        event = {"tool_call_id": call_id, "tool_name": tool.qualified_name, "args": arguments,
                 "cwd": self.cwd, "session_id": options.session_id}
        decision = dispatch.CallDecision(arguments=arguments)
        call_hooks = self.hooks.for_event("on_tool_call", options.without_hooks_of)
        if call_hooks and self.run_hook is not None:
            decision = await dispatch.on_tool_call(call_hooks, event, self.run_hook)
        if decision.blocked is not None:
            # Outside approval checks: a blocked call never asks for a permission.
            return self.refused(call_id, tool.qualified_name, arguments, options,
                                 ToolError("blocked", f"blocked by a hook: {decision.blocked}"),
                                 context=join_contexts(decision.contexts))
        if decision.replaced_by is not None and decision.arguments != arguments:
            # (A "replacement" equal to the model's arguments rewrites nothing.)
            try:
                self._check_rewrite(call_id, tool, decision.replaced_by, decision.arguments,
                                    arguments, options)
            except ToolError as exc:
                return self.refused(call_id, tool.qualified_name, arguments, options, exc,
                                     context=join_contexts(decision.contexts))
        try:
            await self._check_action(tool, options)
            granted = await self._authorize(tool, options)
        except ToolError as exc:
            return self.refused(call_id, tool.qualified_name, arguments, options, exc,
                                 context=join_contexts(decision.contexts))
        return await self._run(call_id, tool, decision.arguments, options, granted,
                               model_arguments=arguments, contexts=decision.contexts,
                               arguments_json=text if decision.arguments is arguments else None)

    # --- the steps ---------------------------------------------------------

    def _validator(self, tool: Tool) -> tuple[Any, Check | None]:
        """The tool's argument validator and its quick check (``argument_check``), built
        once per schema (the registry keeps the same schema object for a tool until it
        reloads). A schema naming no ``$schema`` is draft 2020-12 (``validator_for``'s
        default here), so its quick check is built without ``jsonschema``, and its
        validator (None until then) only when the quick check cannot say yes."""
        cached = self._validators.get(tool.qualified_name)
        if cached is not None and cached[0] is tool.parameters:
            return cached[1], cached[2]
        if isinstance(tool.parameters, dict) and "$schema" not in tool.parameters:
            quick = quick_check(tool.parameters)
            if quick is not None:
                self._validators[tool.qualified_name] = (tool.parameters, None, quick)
                return None, quick
        return self._full_validator(tool), self._validators[tool.qualified_name][2]

    def _full_validator(self, tool: Tool) -> Any:
        """``_validator``'s ``jsonschema`` validator, built now if it was not."""
        cached = self._validators.get(tool.qualified_name)
        if cached is not None and cached[0] is tool.parameters and cached[1] is not None:
            return cached[1]
        import jsonschema

        validator_cls = jsonschema.validators.validator_for(
            tool.parameters, default=jsonschema.Draft202012Validator)
        validator = validator_cls(tool.parameters)
        quick = (quick_check(tool.parameters)
                 if validator_cls.__name__ in _QUICK_DRAFTS else None)
        self._validators[tool.qualified_name] = (tool.parameters, validator, quick)
        return validator

    def _validate(self, tool: Tool, arguments: Any) -> str | None:
        """Check the arguments' size, JSON and schema; returns them as JSON text, as the
        store keeps them (None when they are not JSON), so they are written once.

        Raises:
            ToolError: ``input_too_large`` or ``invalid_arguments``.
        """
        text = _json_text(arguments)
        # "surrogatepass": a lone surrogate is measured here and refused just below
        size = len((text if text is not None else json.dumps(arguments, default=str))
                   .encode("utf-8", "surrogatepass"))
        if size > self.max_input_bytes:
            raise ToolError("input_too_large",
                            f"arguments are {size} bytes; the limit is {self.max_input_bytes}")
        found = jsontext.problem(arguments)  # NaN, a lone surrogate, nesting past the bound
        if found is not None:
            raise ToolError("invalid_arguments", f"{found[0]}: {found[1]}", pointer=found[0])
        validator, quick = self._validator(tool)
        if quick is not None and quick(arguments):
            return text
        if validator is None:
            validator = self._full_validator(tool)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            pointer = "".join(f"/{p}" for p in first.absolute_path)
            raise ToolError("invalid_arguments", f"{pointer or '/'}: {first.message}",
                            pointer=pointer or "")
        return text

    def _check_rewrite(self, call_id: str, tool: Tool, hook: Hook, replaced: Any,
                       original: Any, options: CallOptions) -> None:
        """Let a hook's replacement of the arguments through only as the model's would go.

        A hook may rewrite the arguments of its own extension's tools; another
        extension's only with the ``hooks.rewrite`` grant of its extension (kept under
        ``hook:IDENTITY``). Without it the call fails closed: running it with the
        model's arguments would skip what the hook meant to change. The new arguments
        are validated against the tool's schema like the model's, and the permission
        check that follows sees them. Every rewrite, let through or refused, is audited.

        Raises:
            ToolError: ``permission`` without the grant, ``invalid_arguments`` when the
                new arguments do not fit the schema.
        """
        changed = sorted(_changed_keys(original, replaced))
        detail = {"call_id": call_id, "tool": tool.qualified_name, "hook": hook.name,
                  "changed": changed}
        own = hook.identity == tool.identity
        if not own and not self.broker.granted(rewrite_key(hook.identity), [REWRITE_GRANT],
                                               options.session_id):
            self.store.audit("hook", "hook.rewrite_refused", hook.extension, detail)
            raise ToolError("permission", (
                f"the on_tool_call hook of {hook.extension} rewrote the arguments of "
                f"{tool.qualified_name}, a tool of another extension, without the "
                f"hooks.rewrite grant; the call was refused (allow it with `workbench ext "
                f"trust {hook.extension} --allow-hook-rewrite`)"), hook=hook.extension)
        try:
            self._validate(tool, replaced)
        except ToolError as exc:
            self.store.audit("hook", "hook.rewrite_refused", hook.extension,
                             {**detail, "invalid": exc.message})
            raise ToolError("invalid_arguments", f"the arguments the on_tool_call hook of "
                            f"{hook.extension} put in are not valid: {exc.message}",
                            hook=hook.extension, **exc.extra) from None
        self.store.audit("hook", "hook.rewrite", hook.extension,
                         {**detail, "by": "own extension" if own else "hooks.rewrite grant"})

    async def _authorize(self, tool: Tool, options: CallOptions) -> list[Requirement]:
        """Settle the tool's OS-level permissions before it starts; return what is granted.

        Capabilities (memories, llm, tts, stt) are settled at their first use instead,
        through ``ToolContext.authorize``.
        """
        try:
            reqs = [r for r in self.requirements(tool) if r.kind in OS_KINDS and on_this_system(r)]
        except ValueError as exc:
            raise ToolError("permission", str(exc)) from exc
        if not reqs:  # nothing to settle, nothing granted (most host and MCP tools)
            return []
        key = tool.grant_key
        once: set[tuple[str, str]] = set()
        await self._settle(key, reqs, options, once=once, covers=self._project_siblings(tool, reqs))
        return self.broker.granted(key, reqs, options.session_id, tuple(options.grants) + tuple(once))

    def _project_siblings(self, tool: Tool, reqs: list[Requirement]) -> dict[str, list[Requirement]]:
        """The other tools of ``tool``'s extension that declare the same ``$project``
        entries as ``reqs`` (by grant key, with those entries): a lasting answer to the
        call's request grants them those entries too, so that one prompt covers the
        project for the extension's file tools. The request names each of them."""
        shared = {(r.kind, r.value) for r in reqs if r.project}
        if not shared:
            return {}
        found: dict[str, list[Requirement]] = {}
        for other in self.registry.all_tools():
            if (other.grant_key == tool.grant_key or other.identity != tool.identity
                    or other.origin != tool.origin or not other.permissions):
                continue
            try:
                theirs = self.requirements(other)
            except ValueError:
                continue
            same = [r for r in theirs if r.project and (r.kind, r.value) in shared]
            if same:
                found[other.grant_key] = same
        return found

    async def _settle(self, key: str, reqs: list[Requirement], options: CallOptions,
                      deadline: _PausableDeadline | None = None, once: set | None = None,
                      covers: dict[str, list[Requirement]] | None = None) -> None:
        """Settle ``reqs`` through the broker, asking when allowed: the missing required
        entries and the undecided optional ones in one request (``Broker.settle``).

        Raises:
            ToolError: of kind ``permission``, naming what is missing and why it was asked for.
        """
        async def ask(request: PermissionRequest) -> Any:
            if deadline is not None:
                deadline.pause()
            try:
                return await self.responder.answer(request)
            finally:
                if deadline is not None:
                    deadline.resume()

        extra = tuple(options.grants) + tuple(once or ())
        try:
            granted = await self.broker.settle(key, reqs, options.session_id, ask=ask,
                                               extra=extra, prompt=options.prompt,
                                               covers=covers or {})
        except Refusal as exc:
            raise ToolError("permission", _listing(exc.state, exc.requirements, key),
                            missing=[r.to_json() for r in exc.requirements]) from exc
        if once is not None:
            once.update(granted)

    async def _run(self, call_id: str, tool: Tool, arguments: Any, options: CallOptions,
                   granted: list[Requirement], *, model_arguments: Any = None,
                   contexts: list[str] | None = None,
                   arguments_json: str | None = None) -> ToolOutcome:
        key = tool.qualified_name
        model_arguments = arguments if model_arguments is None else model_arguments
        # The records go behind the call (the store's writer thread commits them in
        # order); reading them, or closing the store, waits for them: see store/writer.py.
        self.store.start_tool_call(call_id, key, arguments, options.caller, options.session_id,
                                   model_call_id=options.model_call_id,
                                   message_id=options.message_id, audit=True, defer=True,
                                   arguments_json=arguments_json)
        self.publish(ToolCallStarted(call_id=call_id, tool=key, arguments=arguments,
                                     caller=options.caller, session_id=options.session_id))
        self.observe("on_tool_execution_start", {"id": call_id, "name": key, "args": model_arguments,
                                                 "session_id": options.session_id})
        finish = _Finisher(self, call_id, tool, arguments, options, list(contexts or []))
        deadline = _PausableDeadline((tool.timeout_ms or self.default_timeout_ms) / 1000)
        ctx = self._context(call_id, tool, options, deadline, granted)
        try:
            result = await deadline.run(self._stoppable(call_id, ctx, self.runner(
                tool, arguments, ctx, timeout_ms=tool.timeout_ms or self.default_timeout_ms)))
            text = self._check_result(result)
        except asyncio.CancelledError:
            # The cancellation reached the runner in this task, which stopped the tool.
            ctx.signal.abort("cancelled")
            self._finish(call_id, key, options, "cancelled",
                         error={"kind": "cancelled", "message": "the call was cancelled"})
            raise
        except ToolError as exc:
            ctx.signal.abort(exc.kind)
            return await finish("error", error=exc.to_json())
        except (TypeError, ValueError) as exc:
            return await finish("error", error={"kind": "tool", "message": f"the result is not JSON: "
                                                f"{jsontext.printable(str(exc))}"})
        except Exception as exc:  # a fault of ours must still end the call's record
            log.debug("running %s failed in the host", key, exc_info=True)
            ctx.signal.abort("tool")
            return await finish("error", error={"kind": "tool", "message": "the host failed running "
                                                f"the call: {type(exc).__name__}: {exc}"})
        return await finish("ok", result=result, result_json=text)

    def cancel_call(self, call_id: str) -> bool:
        """Stop one running call, leaving the rest of its turn running.

        The tool sees the cancellation (its signal is aborted and the runner stops its
        worker or server request), and the call ends as an error of kind ``cancelled``,
        which is what its caller — the model — gets as the result.

        Returns:
            Whether the call was running (and not already being stopped).
        """
        running = self._running.get(call_id)
        if running is None or call_id in self._stopping:
            return False
        task, ctx = running
        self._stopping.add(call_id)
        ctx.signal.abort("cancelled")
        task.cancel()
        return True

    async def _stoppable(self, call_id: str, ctx: ToolContext, awaitable: Awaitable[Any]) -> Any:
        """Await the runner so that ``cancel_call`` can stop this call alone.

        The cancellation it sends is taken back here and becomes a ``cancelled``
        ``ToolError``; a cancellation from elsewhere too (the turn, the host closing)
        still propagates.
        """
        task = asyncio.current_task()
        assert task is not None
        before = task.cancelling()
        self._running[call_id] = (task, ctx)
        try:
            return await awaitable
        except asyncio.CancelledError:
            if call_id in self._stopping and task.cancelling() - before == 1:
                task.uncancel()
                raise ToolError("cancelled", "the call was cancelled by the person") from None
            raise
        finally:
            self._running.pop(call_id, None)
            self._stopping.discard(call_id)

    def _check_result(self, result: Any) -> str:
        """Refuse a result larger than the output bound, or not JSON (never cut it);
        returns it as JSON text, as the store keeps it (so it is written once).

        Raises:
            ToolError: of kind ``output_too_large``.
            TypeError, ValueError: The result is not JSON.
        """
        found = jsontext.encodable(result)
        if found is not None:  # NaN, Infinity, a lone surrogate, nesting past the bound
            raise ValueError(f"{found[0]}: {found[1]}")
        text = _json_text(result)
        if text is None:
            # Measured as text anyway, so that a huge result is named for its size.
            size = len(json.dumps(result, default=str).encode())
            if size <= self.max_output_bytes:
                json.dumps(result)  # raises, saying what is not JSON
        else:
            size = len(text.encode())
        if size > self.max_output_bytes:
            raise ToolError("output_too_large",
                            f"the result is {size} bytes; the limit is {self.max_output_bytes}")
        assert text is not None
        return text

    def _context(self, call_id: str, tool: Tool, options: CallOptions,
                 deadline: _PausableDeadline, granted: list[Requirement]) -> ToolContext:
        def sink(kind: str, data: dict[str, Any]) -> None:
            if kind == "progress":
                self.publish(ToolCallProgress(call_id=call_id, **data))
            elif kind == "log":
                self.publish(ToolCallLog(call_id=call_id, **data))
                if self.call_log is not None:
                    self.call_log.write(call_id, tool.qualified_name, data["level"], data["message"])
            elif kind == "display":
                self.publish(DisplayBubble(call_id=call_id, **data))
                # Kept with the call, so that the chat shows it again when resumed.
                self.store.display_tool_call(call_id, tool.qualified_name, options.session_id,
                                             str(data.get("display")), data.get("payload"),
                                             defer=True)

        async def request(what: Any) -> Any:
            deadline.pause()
            try:
                return await self.responder.answer(what)
            finally:
                deadline.resume()

        async def ask(questions: list[dict[str, Any]]) -> list[Any]:
            try:
                return await request(AskUserRequest(tool=tool.qualified_name, call_id=call_id,
                                                    questions=questions))
            except RequestDenied as exc:
                raise ToolError("cancelled", f"the form was not answered: {exc.reason}") from exc

        once: set[tuple[str, str]] = set()

        async def authorize(kind: str, access: str) -> None:
            declared = [r for r in self.requirements(tool) if r.kind == kind]
            levels = ctx_spec.permission(kind)
            if levels is not None and levels.access:
                declared = [r for r in declared if levels.covers(r.value, access)]
                declared.sort(key=lambda r: r.value != access)  # a read asks for the read entry
            if not declared:
                raise ToolError("permission", f"{tool.qualified_name} did not declare the "
                                f"{kind}{' ' + access if access else ''} permission in its manifest")
            await self._settle(tool.grant_key, [replace(r, optional=False) for r in declared[:1]],
                               options, deadline, once)

        return ToolContext(sink=sink, asker=ask,
                           chat=ChatContext(user_message=options.user_message,
                                            session_id=options.session_id, locale=self.locale,
                                            project_of=self._project, review_writes=self.reviews()),
                           granted=granted, authorize=authorize, requester=request)

    def _project(self) -> str | None:
        try:
            return self.roots.project_folder()
        except ValueError:
            return None

    def reviews(self) -> bool:
        """Whether file changes are shown as a diff question before they are written:
        ``tools.review_writes`` (``auto``: unless the responder is an interactive chat,
        one whose ``interactive`` is true, as the TUI's is)."""
        if self.review_writes == "auto":
            return not getattr(self.responder, "interactive", False)
        return self.review_writes == "always"

    def refused(self, call_id: str, name: str, arguments: Any, options: CallOptions,
                exc: ToolError, context: str | None = None) -> ToolOutcome:
        """Refuse the call ``call_id`` before it runs: audited and published
        (``ToolCallEnded``) like any refusal; returns its outcome."""
        detail = {"call_id": call_id, "message": exc.message}
        if options.model_call_id is not None:
            detail["model_call_id"] = options.model_call_id
        self.store.audit(options.caller, f"tool.refused.{exc.kind}", name, detail)
        outcome = ToolOutcome(call_id, name, False, error=exc.to_json(), context=context)
        self.publish(ToolCallEnded(call_id=call_id, tool=name, ok=False, error=outcome.error,
                                   session_id=options.session_id))
        return outcome

    def _finish(self, call_id: str, key: str, options: CallOptions, status: str,
                result: Any = None, error: dict[str, Any] | None = None,
                context: str | None = None, details: dict[str, Any] | None = None,
                result_json: str | None = None) -> ToolOutcome:
        if error is not None and isinstance(error.get("message"), str):
            # A tool's own words may hold a lone surrogate, which no record or terminal takes.
            error = {**error, "message": jsontext.printable(error["message"])}
        if self.call_log is not None:
            self.call_log.finish(call_id, key)
        self.store.finish_tool_call(call_id, status, result=result, error=error, audit=True,
                                    defer=True, result_json=result_json)
        outcome = ToolOutcome(call_id, key, status == "ok", result=result, error=error,
                              context=context, details=dict(details or {}))
        self.observe("on_tool_execution_end", {"id": call_id, "name": key,
                                               "result": outcome.result if outcome.ok else outcome.error,
                                               "is_error": not outcome.ok,
                                               "session_id": options.session_id})
        self.publish(ToolCallEnded(call_id=call_id, tool=key, ok=outcome.ok, result=result,
                                   error=error, session_id=options.session_id))
        return outcome


class _Finisher:
    """Ends a call that ran: result hooks first, then the record and the event."""

    def __init__(self, gateway: ToolGateway, call_id: str, tool: Tool, arguments: Any,
                 options: CallOptions, contexts: list[str]) -> None:
        self.gateway = gateway
        self.call_id = call_id
        self.tool = tool
        self.arguments = arguments
        self.options = options
        self.contexts = contexts

    async def __call__(self, status: str, result: Any = None,
                       error: dict[str, Any] | None = None,
                       result_json: str | None = None) -> ToolOutcome:
        gateway = self.gateway
        checked = result
        details: dict[str, Any] = {}
        hooks = gateway.hooks.for_event("on_tool_result", self.options.without_hooks_of)
        if hooks and gateway.run_hook is not None:
            is_error = status != "ok"
            decision = await dispatch.on_tool_result(hooks, {
                "tool_call_id": self.call_id, "tool_name": self.tool.qualified_name,
                "args": self.arguments, "result": error if is_error else result,
                "is_error": is_error, "cwd": gateway.cwd, "session_id": self.options.session_id,
            }, gateway.run_hook)
            if not is_error:
                result = decision.result
            details = decision.details
            self.contexts.extend(decision.contexts)
        if status == "ok" and gateway.outside is not None:
            settled = gateway.outside.settle(self.tool, checked, result, call_id=self.call_id,
                                             options=self.options, validate=gateway._validate)
            if settled is not result:
                result = settled
                checked = _REPLACED
        return gateway._finish(self.call_id, self.tool.qualified_name, self.options, status,
                               result=result, error=error, context=join_contexts(self.contexts),
                               details=details,
                               result_json=result_json if result is checked else None)


REWRITE_GRANT = Requirement(REWRITE_KIND, REWRITE_VALUE,
                            "Rewrite the arguments of other extensions' tools from its "
                            "on_tool_call hook.")
"""The ``hooks.rewrite`` grant as the broker keeps it (under ``hook:IDENTITY``)."""


def _act(tool: Tool) -> Requirement:
    return Requirement(ACT_KIND, "", f"Change what {tool.extension} keeps for you, with no one "
                       "there to see it (an unattended run)")


def _changed_keys(original: Any, replaced: Any) -> set[str]:
    """The top-level argument names a replacement added, removed or changed (never
    their values: those go to the audit log of no one)."""
    if not isinstance(original, dict) or not isinstance(replaced, dict):
        return {"/"}
    return {key for key in original.keys() | replaced.keys()
            if original.get(key, _MISSING) != replaced.get(key, _MISSING)}


_MISSING = object()
_REPLACED = object()
"""Stands for a result the host changed (its JSON text is then written again)."""


def _json_text(value: Any) -> str | None:
    """``value`` as the store writes JSON (``store.db.dump_json``), or None when it is not
    JSON (a type ``json`` cannot write, a cycle)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def _listing(state: str, reqs: Iterable[Requirement], key: str = "") -> str:
    reqs = list(reqs)
    lines = [f"permission {state}:"]
    lines += [f"  - {r.describe()} — {r.reason}" for r in reqs]
    if state == "not granted" and reqs:
        tool = key.rpartition(".")[2] or "TOOL"
        flags = " ".join(f"--grant {r.key}" for r in reqs)
        lines.append(f"grant it with `workbench call {tool} … {flags}` or `workbench run … "
                     f"{flags}`; in a chat (the TUI), answer its permission prompt")
    return "\n".join(lines)
