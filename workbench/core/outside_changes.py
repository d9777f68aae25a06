"""Changes an extension's tool makes outside the project's files, in the one change list.

A tool that changed something the person keeps elsewhere than in the project (a
calendar event, a contact, rows of a table) says so in its result, beside whatever else
it answers::

    {"event": {...},
     "change": {"summary": "Added “Dinner with Sam” on Thu 4 Dec, 20:00",
                "undo": {"tool": "event-restore", "arguments": {"token": "…"}}}}

The gateway hands every ended call of an extension's tool here (``settle``) before
the result goes anywhere. The change is recorded in ``host.changes`` (the shell's
change sets' list, kind ``outside``), bound to that call, only when:

- the call was not itself an undo, and its tool is a sandboxed extension's;
- ``summary`` is text of 1 to ``MAX_SUMMARY`` characters (kept as ``text.visible``);
- ``undo.tool`` names a tool of the *same* extension (by its manifest name, or the
  name it is offered under) whose ``audience`` is ``person``, so no model can run it;
- ``undo.arguments`` is an object of at most ``MAX_UNDO_BYTES`` that the undo tool's
  own schema accepts.

The result then carries the host's account instead of the tool's: ``change_set`` (the
id ``u`` on the card and ``workbench changes undo`` take) and ``change`` with
``undoable`` and a note for the model that only the person can undo it. A change that
fails a check is not recorded; ``change`` then says ``undoable: false`` and why. A
``change_set`` a tool (or a result hook) wrote itself is removed: only the host names
one, so a card never offers to undo what its call did not do.

Undo (``run_undo``, handed to ``Changes``) resolves the recorded ``EXTENSION.TOOL``
again, checks it is still that extension's person-only tool, and calls it through the
gateway as the person.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from workbench.core.calls import CallOptions, ToolOutcome
from workbench.errors import ToolError, WorkbenchError
from workbench.shell.changes import Changes
from workbench.text import visible
from workbench.tools.registry import Tool, ToolRegistry

MAX_SUMMARY = 300
"""The longest summary of a change, in characters."""

MAX_UNDO_BYTES = 64 * 1024
"""The largest undo arguments, as JSON."""

HOST_CHANGE_ORIGINS = frozenset({"shell"})
"""The sources whose own results name a ``change_set`` (the shell's, which applies
change sets itself)."""

EXTENSION_ORIGIN = "extensions"
"""The source of the extensions' tools: the only tools that report outside changes."""

NOTE = ("The change is made. Only the person can undo it (u on this call's card, or "
        "`workbench changes undo {id}`); no tool of yours can. Say plainly what changed.")

Call = Callable[[str, Any, CallOptions], Awaitable[ToolOutcome]]
Validate = Callable[[Tool, Any], Any]


class OutsideChanges:
    """Records the changes extensions' tools report and runs their undo.

    Args:
        registry: The tools (the undo tool is looked up there).
        changes: The one change list.
        call: How the person's undo call is made (``host.tools.call``).
        ensure: Loads the tool sources if they are not (blocking; run in a thread).
    """

    def __init__(self, *, registry: ToolRegistry, changes: Changes, call: Call,
                 ensure: Callable[[], Any]) -> None:
        self.registry = registry
        self.changes = changes
        self.call = call
        self.ensure = ensure

    # --- recording ---------------------------------------------------------------

    def settle(self, tool: Tool, own: Any, result: Any, *, call_id: str, options: CallOptions,
               validate: Validate) -> Any:
        """The result to keep and return for a call of ``tool`` that ended well.

        Args:
            tool: The tool called.
            own: The tool's own result (before any result hook).
            result: The result as the hooks left it.
            call_id: The call (the change is bound to it).
            options: How the call was made.
            validate: Checks arguments against a tool's schema (raises ``ToolError``).
        """
        if not isinstance(result, dict):
            return result
        if tool.origin in HOST_CHANGE_ORIGINS:
            return result
        if "change_set" in result:
            result = {k: v for k, v in result.items() if k != "change_set"}
        if tool.origin != EXTENSION_ORIGIN or not isinstance(own, dict) or "change" not in own:
            return result
        reported = own["change"]
        summary = reported.get("summary") if isinstance(reported, dict) else None
        shown = visible(summary.strip())[:MAX_SUMMARY] if isinstance(summary, str) else ""
        try:
            undo_tool, arguments = self._check(tool, reported, options, validate)
        except ToolError as exc:
            self.changes.store.audit("tool", "changes.refused", tool.identity,
                                     {"call_id": call_id, "why": exc.message})
            return {**result, "change": {"summary": shown, "undoable": False,
                                         "reason": exc.message}}
        change_set = self.changes.record_outside(
            session_id=options.session_id, extension=tool.identity, call_id=call_id,
            summary=shown, undo_tool=undo_tool.qualified_name, undo_arguments=arguments)
        return {**result, "change_set": change_set,
                "change": {"summary": shown, "undoable": True, "change_set": change_set,
                           "note": NOTE.format(id=change_set)}}

    def _check(self, tool: Tool, reported: Any, options: CallOptions,
               validate: Validate) -> tuple[Tool, dict[str, Any]]:
        if options.undoing:
            raise ToolError("tool", "an undo's own change is not recorded")
        if not isinstance(reported, dict) or set(reported) - {"summary", "undo"}:
            raise ToolError("tool", "a change is an object with summary and undo only")
        summary = reported.get("summary")
        if not isinstance(summary, str) or not summary.strip() or len(summary) > MAX_SUMMARY:
            raise ToolError("tool", f"a change's summary is text of 1 to {MAX_SUMMARY} characters")
        undo = reported.get("undo")
        if not isinstance(undo, dict) or set(undo) - {"tool", "arguments"}:
            raise ToolError("tool", "a change's undo is an object with tool and arguments")
        name = undo.get("tool")
        arguments = undo.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ToolError("tool", "a change's undo names its tool (text) and arguments (an object)")
        found = self._undo_tool(tool, name)
        if found is None:
            raise ToolError("tool", f"the undo names {visible(name)[:80]!r}, which is no tool of "
                            f"{tool.extension}")
        if not found.person_only:
            raise ToolError("tool", f"the undo tool {found.own_name!r} is not for the person only "
                            "(\"audience\": \"person\"): a model could run it")
        size = len(json.dumps(arguments, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        if size > MAX_UNDO_BYTES:
            raise ToolError("tool", f"the undo's arguments are {size} bytes; at most {MAX_UNDO_BYTES}")
        try:
            validate(found, arguments)
        except ToolError as exc:
            raise ToolError("tool", f"the undo's arguments do not fit {found.own_name}: "
                            f"{exc.message}") from None
        return found, arguments

    def _undo_tool(self, tool: Tool, name: str) -> Tool | None:
        """The tool of ``tool``'s own extension (same identity and source) that ``name``
        names, by its manifest name or the name it is offered under."""
        return next((t for t in self.registry.all_tools()
                     if t.identity == tool.identity and t.origin == tool.origin
                     and t.source == tool.source and name in (t.own_name, t.name)), None)

    # --- undoing -----------------------------------------------------------------

    async def run_undo(self, extension: str, undo_tool: str, arguments: Any) -> Any:
        """Run a recorded change's undo tool as the person; its result.

        Raises:
            WorkbenchError: The tool is gone, is no longer that extension's person-only
                tool, or its call failed (the change then stays in the list, applied).
        """
        await asyncio.to_thread(self.ensure)
        tool = self.registry.resolve(undo_tool) if self._known(undo_tool) else None
        if tool is None or tool.identity != extension or not tool.person_only:
            raise WorkbenchError(f"the undo tool {undo_tool} of {extension} is not loaded (or no "
                                 "longer its person-only tool); install or switch it on, then "
                                 "try again")
        outcome = await self.call(undo_tool, arguments,
                                  CallOptions(caller="person", undoing=True))
        if not outcome.ok:
            error = outcome.error or {}
            raise WorkbenchError(f"the undo did not run: {error.get('message', 'it failed')}")
        return outcome.result

    def _known(self, qualified: str) -> bool:
        return any(t.qualified_name == qualified for t in self.registry.all_tools())
