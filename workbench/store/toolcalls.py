"""The record of tool calls: started as ``running``, finished once with their outcome.

Arguments, results and errors are stored as JSON. A call is keyed by our own id (the
gateway's, ``call_…``); the id the model gave it is data (``model_call_id``), unique
only within the assistant message that asked for it (``message_id``), so a model that
reuses ``call_0`` in another message, or another session, is recorded all the same. A
tool result message names both: ``tool_call_id`` (the model's) and ``call_id`` (ours).

Each call records its owner (pid and process start, see ``owners.py``). A call still
``running`` whose owner is gone — killed, crashed — is settled ``interrupted`` by
whoever looks first (``settle_interrupted_calls``).

The gateway writes a call's start and its end, each with its audit entry (all or
nothing), behind the call (``defer=True``): they are queued to the store's writer
thread, which commits them in order, grouped with whatever else is queued, so no commit
waits in the call's path. Values and times are taken when the method is called; what
could refuse a queued write (a duplicate id, an unknown session) is raised by the next
read of these records or ``flush`` (see ``writer.py``), and an end whose start was
refused is not written. Called with ``defer=False`` (the default), each is its own
transaction and a refusal is raised at once.

This module must not import anything above the store.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from workbench.errors import StoreError
from workbench.store.audit import AuditMixin, insert_audit
from workbench.store.db import dump_json, load_json
from workbench.store.owners import Owner, owner_alive, this_process
from workbench.store.writer import Write

FINAL_STATUSES = frozenset({"ok", "error", "cancelled", "denied"})
"""The statuses a call may be finished with; a call in progress is ``running``, and one
whose owner died before it ended is settled ``interrupted``."""

INTERRUPTED = "interrupted"

_COLUMNS = ("id, session_id, message_id, model_call_id, tool, arguments, caller, status, "
            "result, error, started_at, ended_at, owner_pid, owner_start")

Clock = Callable[[], int]


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    for column in ("arguments", "result", "error"):
        row[column] = load_json(row[column])
    return row


class _QueuedStart:
    """A call's start queued behind its caller; its end joins it while it waits.

    A fast call ends before the writer takes its start: the end is then handed to the
    start (``end``), and the writer inserts the call's row as ended, with both audit
    entries, in one write (no update of a row just inserted). Once the writer has
    taken the start (``taken``), the end is queued as a write of its own.
    """

    __slots__ = ("end", "taken")

    def __init__(self) -> None:
        self.end: tuple[str, str | None, str | None, bool, tuple[int, ...]] | None = None
        """status, result, error (as JSON text), audit, and the end's clock readings."""
        self.taken = False


def _written_with_start(conn: sqlite3.Connection) -> None:
    """The end of a call that joined its queued start: nothing left to write."""


_JOINING = threading.Lock()
"""Guards ``_QueuedStart``: the caller's end joining it, the writer taking it."""


def _write_start(conn: sqlite3.Connection, call_id: str, tool: str, arguments: str | None,
                 caller: str, session_id: str | None, model_call_id: str | None,
                 message_id: int | None, owner: Owner, audit: bool, clock: Clock,
                 queued: _QueuedStart | None = None,
                 starts: dict[str, _QueuedStart] | None = None) -> None:
    """The start's statements on ``conn``, inside the caller's transaction or savepoint;
    with the call's end too, when it joined the queued start (``_QueuedStart``)."""
    end = None
    if queued is not None:
        with _JOINING:
            queued.taken = True
            if starts is not None and starts.get(call_id) is queued:
                del starts[call_id]
            end = queued.end  # read each time: a group run again applies this again
    status, result, error, ended_at = "running", None, None, None
    ticks: Clock | None = None
    if end is not None:
        status, result, error = end[0], end[1], end[2]
        ticks = iter(end[4]).__next__
        ended_at = ticks()
    try:
        conn.execute(
            f"INSERT INTO tool_calls ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?, ?)",
            (call_id, session_id, message_id, model_call_id, tool, arguments, caller, status,
             result, error, clock(), ended_at, owner.pid, owner.start))
    except sqlite3.IntegrityError as exc:
        # The keys guard the insert; the lookups run only to say which refused it.
        raise _start_refused(conn, call_id, session_id, model_call_id, message_id, exc) from None
    if audit:
        detail = {"call_id": call_id}
        if model_call_id is not None:
            detail["model_call_id"] = model_call_id
        insert_audit(conn, clock(), caller, "tool.call", tool, detail)
    if end is not None and end[3] and ticks is not None:
        insert_audit(conn, ticks(), caller, f"tool.{status}", tool, {"call_id": call_id})


def _start_refused(conn: sqlite3.Connection, call_id: str, session_id: str | None,
                   model_call_id: str | None, message_id: int | None,
                   exc: sqlite3.IntegrityError) -> StoreError:
    if conn.execute("SELECT 1 FROM tool_calls WHERE id = ?", (call_id,)).fetchone():
        return StoreError(f"tool call {call_id!r} was already started")
    if session_id is not None and not conn.execute(
            "SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
        return StoreError(f"no session {session_id!r}")
    if message_id is not None and conn.execute(
            "SELECT 1 FROM tool_calls WHERE message_id = ? AND model_call_id = ?",
            (message_id, model_call_id)).fetchone():
        return StoreError(f"message {message_id} already made a call with the model's id "
                          f"{model_call_id!r}")
    return StoreError(f"tool call {call_id!r} cannot be recorded: {exc}")


def _write_finish(conn: sqlite3.Connection, call_id: str, status: str, result: str | None,
                  error: str | None, audit: bool, clock: Clock) -> None:
    """The end's statements on ``conn``, inside the caller's transaction or savepoint."""
    ended = conn.execute(
        "UPDATE tool_calls SET status = ?, result = ?, error = ?, ended_at = ? "
        "WHERE id = ? AND status = 'running' RETURNING caller, tool",
        (status, result, error, clock(), call_id)).fetchall()
    if not ended:
        found = conn.execute("SELECT status FROM tool_calls WHERE id = ?", (call_id,)).fetchone()
        if found is None:
            raise StoreError(f"no tool call {call_id!r}")
        raise StoreError(f"tool call {call_id!r} already ended ({found[0]})")
    if audit:
        caller, tool = ended[0]
        insert_audit(conn, clock(), caller, f"tool.{status}", tool, {"call_id": call_id})


CALL_LOG = "tool.log"
"""The audit action of one line a call's tool logged (``ctx.log``): the call's log."""


def _write_log(conn: sqlite3.Connection, call_id: str, tool: str, level: str, message: str,
               clock: Clock) -> None:
    insert_audit(conn, clock(), "tool", CALL_LOG, tool,
                 {"call_id": call_id, "level": level, "message": message})


CALL_DISPLAY = "tool.display"
"""The audit action of one display bubble a call's tool showed (``ctx.display``), kept
with the call so that a chat resumed shows it again."""


def _write_display(conn: sqlite3.Connection, call_id: str, tool: str, session_id: str | None,
                   display: str, payload: Any, clock: Clock) -> None:
    insert_audit(conn, clock(), "tool", CALL_DISPLAY, tool,
                 {"call_id": call_id, "session_id": session_id, "display": display,
                  "payload": payload})


class ToolCallsMixin(AuditMixin):
    """Queries on ``tool_calls`` (and the audit entries of their start and end)."""

    def start_tool_call(self, call_id: str, tool: str, arguments: Any, caller: str,
                        session_id: str | None = None, *, model_call_id: str | None = None,
                        message_id: int | None = None, audit: bool = False,
                        defer: bool = False, arguments_json: str | None = None) -> None:
        """Record that a tool call started, owned by this process.

        Args:
            call_id: Our id of the call, unique across the store.
            tool: The tool's full name.
            arguments: The arguments, JSON-serializable.
            caller: Who made the call: ``model``, ``user``, a workflow or extension name.
            session_id: The session it belongs to, if any.
            model_call_id: The id the model gave the call, if a model made it.
            message_id: The assistant message that asked for it; with ``model_call_id``
                unique in the store.
            audit: Also add the audit entry ``tool.call`` (actor the caller, subject the
                tool, detail the call's id), in the same transaction.
            defer: Queue the write to the writer thread and return at once (see the
                module docstring); inside a transaction of this thread it is written there.
            arguments_json: ``arguments`` already written as ``dump_json`` writes them
                (the gateway measured them so): kept as is, not written again.

        Raises:
            StoreError: When a call with this id (or this model id in this message)
                exists, or the session does not (at once, or with ``defer`` at the next
                flush, as a ``DeferredWriteError``).
        """
        text = dump_json(arguments) if arguments_json is None or arguments is None else arguments_json
        write = partial(_write_start, call_id=call_id, tool=tool, arguments=text,
                        caller=caller, session_id=session_id, model_call_id=model_call_id,
                        message_id=message_id, owner=this_process(), audit=audit)
        if defer:
            queued = _QueuedStart()
            with _JOINING:
                self._queued_starts[call_id] = queued
            self._defer(f"start of tool call {call_id!r}",
                        partial(write, queued=queued, starts=self._queued_starts), 1 + audit,
                        key=call_id)
            return
        with self.transaction():
            write(self._db.conn, clock=self.clock)

    def finish_tool_call(self, call_id: str, status: str, result: Any = None,
                         error: Any = None, *, audit: bool = False, defer: bool = False,
                         result_json: str | None = None) -> None:
        """Record how a running tool call ended.

        Args:
            call_id: The call's id.
            status: ``ok``, ``error``, ``cancelled`` or ``denied``.
            result: The result, JSON-serializable.
            error: The error, JSON-serializable (e.g. ``ToolError.to_json()``).
            audit: Also add the audit entry ``tool.STATUS`` (actor the call's caller,
                subject its tool, detail its id), in the same transaction.
            defer: Queue the write behind the call's start (see ``start_tool_call``); when
                that start was refused, this end is not written.
            result_json: ``result`` already written as ``dump_json`` writes it: kept as
                is, not written again.

        Raises:
            ValueError: When ``status`` is not a final status (at once, always).
            StoreError: When no running call has this id (at once, or with ``defer`` at
                the next flush, as a ``DeferredWriteError``).
        """
        if status not in FINAL_STATUSES:
            raise ValueError(f"unknown final status {status!r}; "
                             f"expected one of {sorted(FINAL_STATUSES)}")
        text = dump_json(result) if result_json is None or result is None else result_json
        error_text = dump_json(error)
        write = partial(_write_finish, call_id=call_id, status=status, result=text,
                        error=error_text, audit=audit)
        if defer:
            with _JOINING:  # the start still waits for the writer: the end joins it
                queued = self._queued_starts.get(call_id)
                if queued is not None and not queued.taken and queued.end is None:
                    queued.end = (status, text, error_text, audit,
                                  tuple(self.clock() for _ in range(1 + audit)))
                    del self._queued_starts[call_id]
                    joined = True
                else:
                    joined = False
            if joined:
                # Written with its start; queued still, as nothing, so that a start
                # refused names its end as not attempted, as it would have been.
                self._write_behind(Write(f"end of tool call {call_id!r}", _written_with_start,
                                         needs=call_id))
                return
            self._defer(f"end of tool call {call_id!r}", write, 1 + audit, needs=call_id)
            return
        with self.transaction():
            write(self._db.conn, clock=self.clock)

    def log_tool_call(self, call_id: str, tool: str, level: str, message: str, *,
                      defer: bool = False) -> None:
        """Keep a line the call's tool logged, in the call's log (``tool_call_log``).

        Args:
            call_id: The call's id.
            tool: The tool's full name.
            level: ``debug``, ``info``, ``warn`` or ``error``.
            message: The line.
            defer: Queue the write behind the call's start (see ``start_tool_call``).
        """
        write = partial(_write_log, call_id=call_id, tool=tool, level=level, message=message)
        if defer:
            self._defer(f"log of tool call {call_id!r}", write, 1, needs=call_id)
            return
        with self.transaction():
            write(self._db.conn, clock=self.clock)

    def display_tool_call(self, call_id: str, tool: str, session_id: str | None, display: str,
                          payload: Any, *, defer: bool = False) -> None:
        """Keep a display bubble the call's tool showed, with the call (``session_displays``).

        Args:
            call_id: The call's id.
            tool: The tool's full name.
            session_id: The chat the call is in, if any.
            display: ``markdown``, ``image``, ``table`` or ``diff``.
            payload: The bubble's data (bounded with the call's output).
            defer: Queue the write behind the call's start (see ``start_tool_call``).
        """
        write = partial(_write_display, call_id=call_id, tool=tool, session_id=session_id,
                        display=display, payload=payload)
        if defer:
            self._defer(f"display of tool call {call_id!r}", write, 1, needs=call_id)
            return
        with self.transaction():
            write(self._db.conn, clock=self.clock)

    def session_displays(self, session_id: str) -> dict[str, list[dict[str, Any]]]:
        """The display bubbles the tools of a session's calls showed, by call id, each
        call's in order: ``{display, payload}`` each (found through the audit log's time
        index, from the session's start)."""
        session = self._one("SELECT created_at FROM sessions WHERE id = ?", (session_id,))
        if session is None:
            return {}
        rows = self._all(
            "SELECT detail FROM audit_log WHERE at >= ? AND action = ? "
            "AND json_extract(detail, '$.session_id') = ? ORDER BY at, id",
            (session["created_at"], CALL_DISPLAY, session_id))
        found: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            detail = load_json(row["detail"]) or {}
            if isinstance(detail, dict) and detail.get("call_id"):
                found.setdefault(str(detail["call_id"]), []).append(
                    {"display": detail.get("display"), "payload": detail.get("payload")})
        return found

    def tool_call_log(self, call_id: str) -> list[dict[str, Any]]:
        """The lines a call's tool logged, in order: ``{at, level, message}`` each.

        The lines are audit entries of the call's time span, found through the audit
        log's time index.
        """
        call = self._one("SELECT started_at, ended_at FROM tool_calls WHERE id = ?", (call_id,))
        if call is None:
            return []
        rows = self._all(
            "SELECT at, detail FROM audit_log WHERE at >= ? AND (? IS NULL OR at <= ?) "
            "AND action = ? AND json_extract(detail, '$.call_id') = ? ORDER BY at, id",
            (call["started_at"], call["ended_at"], call["ended_at"], CALL_LOG, call_id))
        lines = []
        for row in rows:
            detail = load_json(row["detail"]) or {}
            lines.append({"at": row["at"], "level": detail.get("level"),
                          "message": detail.get("message")})
        return lines

    def _defer(self, label: str, write: Callable[..., None], ticks: int,
               key: str | None = None, needs: str | None = None) -> None:
        """Queue ``write(conn, clock=…)`` with the clock's next ``ticks`` readings taken now,
        handed out in the same order however often the writer applies it."""
        readings = tuple(self.clock() for _ in range(ticks))
        self._write_behind(Write(label, lambda conn: write(conn, clock=iter(readings).__next__),
                                 key=key, needs=needs))

    def settle_interrupted_calls(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Settle the running calls whose owner is gone (of one session, or all):
        ``interrupted``, with an error saying so and its audit entry.

        Returns:
            The calls settled now, as ``get_tool_call`` gives them.
        """
        where = "status = 'running'" + (" AND session_id = ?" if session_id else "")
        rows = self._all(f"SELECT id, owner_pid, owner_start FROM tool_calls WHERE {where}",
                         (session_id,) if session_id else ())
        gone = [row for row in rows if not owner_alive(row["owner_pid"], row["owner_start"])]
        settled = []
        for row in gone:
            pid = row["owner_pid"]
            who = f"the process running it (pid {pid})" if pid else "the process running it"
            error = {"kind": INTERRUPTED,
                     "message": f"the call was interrupted: {who} stopped before it finished; "
                                "it may or may not have taken effect"}
            with self.transaction():
                ended = self._db.conn.execute(
                    "UPDATE tool_calls SET status = ?, error = ?, ended_at = ? WHERE id = ? "
                    "AND status = 'running' AND owner_pid IS ? AND owner_start IS ? "
                    "RETURNING caller, tool", (INTERRUPTED, dump_json(error), self.clock(),
                                               row["id"], pid, row["owner_start"])).fetchall()
                if ended:
                    insert_audit(self._db.conn, self.clock(), ended[0][0], "tool.interrupted",
                                 ended[0][1], {"call_id": row["id"], "owner_pid": pid})
            if ended:
                settled.append(self.get_tool_call(row["id"]))
        return settled

    def get_tool_call(self, call_id: str) -> dict[str, Any] | None:
        """One tool call (by our id) with its JSON columns decoded, or None."""
        row = self._one(f"SELECT {_COLUMNS} FROM tool_calls WHERE id = ?", (call_id,))
        return None if row is None else _decode(row)

    def list_tool_calls(self, session_id: str | None = None,
                        limit: int | None = None) -> list[dict[str, Any]]:
        """Tool calls, newest first, with JSON columns decoded.

        Args:
            session_id: Only this session's calls; every call when None.
            limit: At most this many; all when None.
        """
        where, params = ("WHERE session_id = ?", [session_id]) if session_id else ("", [])
        rows = self._all(
            f"SELECT {_COLUMNS} FROM tool_calls {where} "
            "ORDER BY started_at DESC, rowid DESC LIMIT ?",
            (*params, -1 if limit is None else limit))
        return [_decode(row) for row in rows]
