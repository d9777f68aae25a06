"""Test a Python tool without a running workbench: a mock ``ctx`` and a runner.

A tool is a plain ``fn(args, ctx)``, so a test can hand it a ``MockContext`` that
stubs only what the tool touches. Every member that reaches something — a form for
the person, the memories, the database, the model, speech, schedules, the chat
context — fails loudly with ``UnstubbedMember`` unless it was stubbed, so an
accidental call is never silent. Progress, logs and display bubbles are recorded
for the test to assert on, and ``ctx.signal`` can be tripped to check that the tool
stops::

    from workbench.testing import MockContext, run_tool

    def test_pick_color():
        ctx = MockContext(ask_user=lambda questions: ["red"])
        assert run_tool(pick_color, {}, ctx) == {"color": "red"}
        assert ctx.progress[-1] == 1

A stub is a plain function, a coroutine function, a value to return as it is, or an
exception to raise (``CtxError("unavailable", "…")`` plays a refusing host). Groups
take a dict or any object with the members as attributes: ``memories={"get": fn}``,
``db=MockDatabase()``. Like the real ``ctx``, a member that needs an answer returns
it when called from a plain function and returns an awaitable when called inside a
running event loop, so one set of stubs serves sync and async tools alike.

The members are those ``workbench.ctx_spec`` declares, as the real ``ctx`` has them. This
module imports only the standard library and that spec: an extension's tests need
neither the host nor a terminal.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import sqlite3
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from workbench import ctx_spec

__all__ = [
    "Bubble", "Call", "CtxError", "CtxPermissionDenied", "MockContext", "MockDatabase",
    "MockMemories", "MockSignal", "ProgressUpdate", "UnstubbedMember", "WorkbenchMockContext",
    "WorkbenchMockDatabase", "WorkbenchMockMemories", "run_tool",
]

GROUPS = ctx_spec.groups()
"""The ctx groups whose members answer, and their members (Python names), as
``workbench.ctx_spec`` declares them when this module is imported."""

ANSWERING = (*ctx_spec.top_level(), "get_chat_context")
"""The top-level members that answer; they fail unless stubbed."""

RECORDED = ("set_progress", "log")
DISPLAY_KINDS = ("markdown", "image", "table", "diff")
LOG_LEVELS = ("debug", "info", "warn", "error")
QUESTION_KINDS = ("choice", "diff", "files", "image", "table")
MAX_QUESTIONS = 20


class UnstubbedMember(AssertionError):
    """A tool called a ctx member the test did not stub."""

    def __init__(self, member: str) -> None:
        group, _, name = member.partition(".")
        hint = f"{group}={{{name!r}: ...}}" if name else f"{member}=..."
        super().__init__(f"ctx.{member} was called but not stubbed; pass {hint} to MockContext")
        self.member = member


class CtxError(Exception):
    """A refusal as the real ctx raises it: ``kind`` says why (``unavailable``, ``not_found``…)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class CtxPermissionDenied(CtxError, PermissionError):
    """A capability the tool was not granted (kind ``permission``)."""

    def __init__(self, message: str) -> None:
        super().__init__("permission", message)


@dataclass(frozen=True)
class Call:
    """One call of an answering member: ``member`` is dotted (``db.query``)."""

    member: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProgressUpdate:
    progress: float
    label: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class Bubble:
    """A display bubble, its payload shaped as the host publishes it."""

    kind: str
    payload: dict[str, Any]


class MockSignal:
    """``ctx.signal``: trip it with ``abort()`` and check that the tool stops."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def abort(self, reason: str = "cancelled") -> None:
        """Trip the signal, as the host does when the person cancels the turn."""
        self.reason = reason
        self._event.set()

    def abort_after(self, seconds: float) -> threading.Timer:
        """Trip the signal ``seconds`` from now (for a tool that waits)."""
        timer = threading.Timer(seconds, self.abort)
        timer.daemon = True
        timer.start()
        return timer

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the signal trips or ``timeout`` passes; whether it tripped."""
        return self._event.wait(timeout)

    def throw_if_aborted(self) -> None:
        """Raise ``asyncio.CancelledError`` once tripped (the host reports ``cancelled``)."""
        if self.aborted:
            raise asyncio.CancelledError(self.reason)


_UNSTUBBED = object()


def _in_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _resolve_now(awaitable: Any) -> Any:
    async def wait() -> Any:
        return await awaitable
    return asyncio.run(wait())


class _Group:
    """A ctx group (``ctx.db``…) whose members go to their stubs."""

    def __init__(self, ctx: MockContext, name: str, stub: Any) -> None:
        members = ctx_spec.groups()[name]
        if isinstance(stub, Mapping):
            unknown = sorted(set(stub) - set(members))
            if unknown:
                raise TypeError(f"ctx.{name} has no member {', '.join(unknown)}; "
                                f"it has {', '.join(members)}")
        for member in members:
            if stub is None:
                target = _UNSTUBBED
            elif isinstance(stub, Mapping):
                target = stub.get(member, _UNSTUBBED)
            else:
                target = getattr(stub, member, _UNSTUBBED)
            setattr(self, member, ctx._answering(f"{name}.{member}", target))


class _Display:
    """``ctx.display``: records each bubble, then calls the test's stub if any."""

    def __init__(self, ctx: MockContext, stubs: Mapping[str, Callable] | None) -> None:
        stubs = dict(stubs or {})
        unknown = sorted(set(stubs) - set(DISPLAY_KINDS))
        if unknown:
            raise TypeError(f"ctx.display has no member {', '.join(unknown)}")
        self._ctx, self._stubs = ctx, stubs

    def _show(self, kind: str, payload: dict[str, Any], args: tuple) -> None:
        self._ctx.bubbles.append(Bubble(kind, payload))
        if kind in self._stubs:
            self._stubs[kind](*args)

    def markdown(self, text: str) -> None:
        self._show("markdown", {"text": str(text)}, (text,))

    def image(self, data_b64: str, mime: str, alt: str | None = None) -> None:
        self._show("image", {"dataB64": data_b64, "mime": mime, "alt": alt}, (data_b64, mime, alt))

    def table(self, columns: list[str], rows: list[list[Any]]) -> None:
        payload = {"columns": [str(c) for c in columns], "rows": [[str(v) for v in r] for r in rows]}
        self._show("table", payload, (columns, rows))

    def diff(self, before: str, after: str, title: str | None = None) -> None:
        self._show("diff", {"before": before, "after": after, "title": title}, (before, after, title))


class MockContext:
    """A ``ctx`` for tests; see the module docstring.

    Args:
        signal: The signal to hand the tool (a fresh ``MockSignal`` by default);
            pass your own to trip it from a stub.
        **stubs: What the tool may touch, by member name: ``ask_user``,
            ``schedule_prompt``, ``get_chat_context``, the groups ``memories``,
            ``db``, ``llm``, ``tts``, ``stt``, and optionally ``set_progress``,
            ``log`` and ``display`` (``{"markdown": fn, …}``), which are recorded
            either way and call the stub afterwards.

    Attributes:
        calls: Every call of an answering member, in order (stubbed or not).
        unstubbed: The members called without a stub, even if the tool caught the error.
        progress_updates: Every ``set_progress``; ``progress`` has just the values.
        logs: ``(level, message)`` pairs.
        bubbles: The display bubbles shown.

    Raises:
        TypeError: A stub names a member the ctx does not have.
    """

    def __init__(self, *, signal: MockSignal | None = None, **stubs: Any) -> None:
        groups, answering = ctx_spec.groups(), (*ctx_spec.top_level(), "get_chat_context")
        known = set(answering) | set(groups) | set(RECORDED) | {"display"}
        unknown = sorted(set(stubs) - known)
        if unknown:
            raise TypeError(f"ctx has no member {', '.join(unknown)}; it has {', '.join(sorted(known))}")
        self.calls: list[Call] = []
        self.unstubbed: list[str] = []
        self.progress_updates: list[ProgressUpdate] = []
        self.logs: list[tuple[str, str]] = []
        self.bubbles: list[Bubble] = []
        self.signal = signal or MockSignal()
        self.display = _Display(self, stubs.get("display"))
        self._progress_stub = stubs.get("set_progress")
        self._log_stub = stubs.get("log")
        for name in groups:
            setattr(self, name, _Group(self, name, stubs.get(name)))
        self._ask_user = self._answering("ask_user", stubs.get("ask_user", _UNSTUBBED),
                                         before=_check_questions, after=_check_answers)
        for name in ctx_spec.top_level():
            if not hasattr(self, name):  # ask_user, with its checks, is the class's own
                setattr(self, name, self._answering(name, stubs.get(name, _UNSTUBBED)))
        self._chat = stubs.get("get_chat_context", _UNSTUBBED)

    # --- recorded, never failing ------------------------------------------------

    @property
    def progress(self) -> list[float]:
        """The progress values reported, in order."""
        return [update.progress for update in self.progress_updates]

    def set_progress(self, progress: float, label: str | None = None, description: str | None = None) -> None:
        value = float(progress)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"progress runs from 0 to 1, not {progress!r}")
        self.progress_updates.append(ProgressUpdate(value, label, description))
        if self._progress_stub is not None:
            self._progress_stub(progress, label, description)

    def log(self, level: str, message: str) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be debug, info, warn or error, not {level!r}")
        self.logs.append((level, str(message)))
        if self._log_stub is not None:
            self._log_stub(level, message)

    # --- answering, failing unless stubbed ---------------------------------------

    def get_chat_context(self) -> dict[str, Any]:
        self.calls.append(Call("get_chat_context", ()))
        if self._chat is _UNSTUBBED:
            self.unstubbed.append("get_chat_context")
            raise UnstubbedMember("get_chat_context")
        value = _produce(self._chat, (), {})
        return {"userMessage": "", "sessionId": None, "locale": None, **dict(value)}

    def ask_user(self, questions: list[dict[str, Any]]):
        return self._ask_user(list(questions) if isinstance(questions, tuple) else questions)

    def _answering(self, member: str, stub: Any, *, before: Callable[..., None] | None = None,
                   after: Callable[[tuple, Any], Any] | None = None) -> Callable[..., Any]:
        """A member that answers: blocking in plain code, awaitable inside a loop.

        ``before`` refuses what the host would refuse; ``after`` checks the stub's answer.
        An unstubbed member raises at the call itself, in sync and async code alike.
        """

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(Call(member, args, kwargs))
            if stub is _UNSTUBBED:
                self.unstubbed.append(member)
                raise UnstubbedMember(member)
            loop = _in_loop()
            try:
                if before is not None:
                    before(*args, **kwargs)
                value = _produce(stub, args, kwargs)
            except Exception as exc:
                if loop is None:
                    raise
                failed = loop.create_future()
                failed.set_exception(exc)
                return failed
            if loop is None:
                if inspect.isawaitable(value):
                    value = _resolve_now(value)
                return after(args, value) if after else value

            async def settle() -> Any:
                result = await value if inspect.isawaitable(value) else value
                return after(args, result) if after else result
            return loop.create_task(settle())

        call.__name__ = member.rpartition(".")[2]
        return call


def _produce(stub: Any, args: tuple, kwargs: dict) -> Any:
    if isinstance(stub, BaseException):
        raise stub
    if callable(stub):
        return stub(*args, **kwargs)
    return copy.deepcopy(stub)


def _check_questions(questions: Any) -> None:
    """Refuse a form the host would refuse, with the same kind."""
    if not isinstance(questions, list) or not questions:
        raise CtxError("invalid_arguments", "askUser needs a non-empty list of questions")
    if len(questions) > MAX_QUESTIONS:
        raise CtxError("invalid_arguments", f"askUser takes at most {MAX_QUESTIONS} questions")
    for index, question in enumerate(questions):
        if not isinstance(question, dict) or not isinstance(question.get("question"), str):
            raise CtxError("invalid_arguments", f"question {index} needs a `question` text")
        if question.get("kind", "choice") not in QUESTION_KINDS:
            raise CtxError("invalid_arguments", f"question {index} has an unknown kind {question['kind']!r}")


def _check_answers(args: tuple, answers: Any) -> Any:
    questions = args[0]
    if not isinstance(answers, list) or len(answers) != len(questions):
        raise AssertionError(f"the ask_user stub must return a list of one answer per question "
                             f"({len(questions)}), not {answers!r}")
    return answers


class MockDatabase:
    """An in-memory stand-in for ``ctx.db`` with the host's answers: pass ``db=MockDatabase()``.

    ``query`` returns rows as dicts; ``execute`` returns ``{changes, lastInsertRowId}``;
    params are a list of strings, numbers, booleans or None. A failing statement
    raises ``CtxError`` of kind ``tool``, as the host reports it.
    """

    def __init__(self) -> None:
        self.connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self.connection.row_factory = sqlite3.Row

    @staticmethod
    def _params(params: Any) -> list[Any]:
        if params is None:
            return []
        if not isinstance(params, list) or not all(
                v is None or isinstance(v, (str, int, float, bool)) for v in params):
            raise CtxError("invalid_arguments", "db params must be a list of strings, numbers, "
                           "booleans or null")
        return params

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        try:
            return [dict(row) for row in self.connection.execute(sql, self._params(params))]
        except sqlite3.Error as exc:
            raise CtxError("tool", f"database error: {exc}") from exc

    def execute(self, sql: str, params: list[Any] | None = None) -> dict[str, int]:
        try:
            cursor = self.connection.execute(sql, self._params(params))
        except sqlite3.Error as exc:
            raise CtxError("tool", f"database error: {exc}") from exc
        return {"changes": max(cursor.rowcount, 0), "lastInsertRowId": cursor.lastrowid or 0}


class MockMemories:
    """An in-memory stand-in for ``ctx.memories`` with the host's answers.

    Args:
        memories: The person's own memories, title to content (writable).
        shipped: Read-only memories an extension ships: title to content for
            knowledge, or to ``{file name: content}`` for a skill (``SKILL.md`` is
            what ``get`` returns; the other files are reached with ``get_file``, text
            as text and bytes that are not text as base64, as the workbench hands them).
    """

    def __init__(self, memories: Mapping[str, str] | None = None,
                 shipped: Mapping[str, str | Mapping[str, str | bytes]] | None = None) -> None:
        self.memories: dict[str, str] = dict(memories or {})
        self.shipped = {title: value if isinstance(value, str) else dict(value)
                        for title, value in (shipped or {}).items()}

    def list(self) -> list[dict[str, Any]]:
        found = [{"title": t, "kind": "knowledge", "summary": None, "updatedAtMs": 0,
                  "readOnly": False} for t in self.memories]
        found += [{"title": t, "kind": "knowledge" if isinstance(v, str) else "skill", "summary": None,
                   "updatedAtMs": 0, "readOnly": True}
                  for t, v in self.shipped.items() if t not in self.memories]
        return found

    def get(self, title: str) -> dict[str, str]:
        if title in self.memories:
            return {"title": title, "content": self.memories[title]}
        if title in self.shipped:
            value = self.shipped[title]
            return {"title": title, "content": value if isinstance(value, str) else value.get("SKILL.md", "")}
        raise CtxError("not_found", f"no memory titled {title!r}")

    def get_file(self, title: str, name: str) -> dict[str, Any]:
        files = self.shipped.get(title)
        if not isinstance(files, dict):
            raise CtxError("not_found", f"no skill titled {title!r} with files")
        if name not in files:
            raise CtxError("not_found", f"the skill {title!r} has no file {name!r}")
        from workbench.capabilities.memories import file_answer

        data = files[name]
        return {"title": title, "name": name,
                **file_answer(name, data if isinstance(data, bytes) else str(data).encode())}

    def write(self, title: str, content: str) -> dict[str, Any]:
        if title in self.shipped and title not in self.memories:
            raise CtxError("permission", f"{title!r} ships with an extension and is read-only")
        before = self.memories.get(title)
        self.memories[title] = content
        return {"title": title, "before": before, "after": content, "created": before is None}

    def edit(self, title: str, find: str, replace: str) -> dict[str, str]:
        if title not in self.memories:
            raise CtxError("not_found", f"no memory titled {title!r}")
        before = self.memories[title]
        count = before.count(find) if find else 0
        if count != 1:
            raise CtxError("tool", f"edit needs exactly one occurrence of the text to find; found {count}")
        self.memories[title] = before.replace(find, replace, 1)
        return {"title": title, "before": before, "after": self.memories[title]}


def _run(fn: Callable[..., Any], args: dict[str, Any], ctx: Any) -> Any:
    """Run ``fn`` as the worker does: a coroutine in its own loop, plain code outside any."""
    if inspect.iscoroutinefunction(fn):
        return asyncio.run(fn(args, ctx))
    value = fn(args, ctx)
    return _resolve_now(value) if inspect.isawaitable(value) else value


def run_tool(fn: Callable[..., Any], args: dict[str, Any], ctx: Any) -> Any:
    """Call a sync or async tool as the host would, and return its result.

    Callable from plain and ``async`` tests alike: inside a running event loop the
    tool runs in a thread of its own, as it does in its worker.

    Returns:
        What the tool returned.

    Raises:
        UnstubbedMember: The tool reached an unstubbed member, even if it caught the error.
        TypeError: The result is not JSON, which the host would refuse.
        BaseException: Whatever the tool raised (``asyncio.CancelledError`` when it
            stopped on ``ctx.signal``).
    """
    seen = len(ctx.unstubbed) if isinstance(ctx, MockContext) else 0
    try:
        if _in_loop() is None:
            value = _run(fn, args, ctx)
        else:
            with ThreadPoolExecutor(1) as pool:
                value = pool.submit(_run, fn, args, ctx).result()
    except UnstubbedMember:
        raise
    except BaseException as exc:
        if isinstance(ctx, MockContext) and len(ctx.unstubbed) > seen:
            raise UnstubbedMember(ctx.unstubbed[seen]) from exc
        raise
    if isinstance(ctx, MockContext) and len(ctx.unstubbed) > seen:
        raise UnstubbedMember(ctx.unstubbed[seen])
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the tool's result is not JSON, so the host would refuse it: {exc}") from exc
    return value


WorkbenchMockContext = MockContext
WorkbenchMockDatabase = MockDatabase
WorkbenchMockMemories = MockMemories
