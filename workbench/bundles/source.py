"""``extension_manage`` and ``extension_call`` as a ``ToolSource`` (the source ``bundles``).

Both are host tools (``runtime="host"``) whose handlers call ``BundleService`` on the
chat's project folder. ``extension_manage`` declares ``write $project`` (asked and
granted as the built-in file tools' is: one answer for this project; ``$project`` is
never ``/``, the home folder or the workbench's own files) and ``extension_call`` declares
``read $project``. Where the chat reviews writes (``tools.review_writes``), ``create``
shows the revision as a diff question first and writes it only when accepted, as the
file tools do. A chat is offered them only when its tools already include writing
the project and running commands (``offered_beside``: the ``shell`` tool and a tool
that writes ``$project``); a call from a chat without them is refused the same way.

The tools' names, schemas and descriptions are fixed: no bundle ever changes what a chat
is offered or its system prompt, and nothing here reads a bundle to list tools.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.bundles.service import BundleService
from workbench.errors import ToolError
from workbench.tools.registry import HOST_RUNTIME, Tool
from workbench.tools.source import SourceRow, ToolSource

from workbench.bundles.offer import CALL, EXTENSION, MANAGE, offered_beside

_BUNDLE = {
    "type": "object",
    "description": 'The bundle: {"manifest": {...}, "files": {"PATH": "TEXT", ...}}.',
    "properties": {
        "manifest": {"type": "object", "description": (
            "schemaVersion 1, id (lowercase, digits, '-'), kind (tool, skill or mcp), "
            "description, entrypoint (a file: .mjs/.js/.cjs for tool and mcp, SKILL.md for "
            "skill), inputSchema (a JSON Schema of an object; required for tool), "
            "references (skill: text files), timeoutMs (100-120000).")},
        "files": {"type": "object", "additionalProperties": {"type": "string"},
                  "description": "Each file's relative path and its UTF-8 text; no package.json."},
    },
    "required": ["manifest", "files"],
}

MANAGE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["list", "validate", "create", "inspect"],
                   "description": "list: the project's bundles (metadata only); validate: check "
                                  "a bundle and compute its digest without writing it; create: "
                                  "store it as a revision; inspect: one revision (an MCP bundle "
                                  "is started to list its tools)."},
        "bundle": _BUNDLE,
        "id": {"type": "string", "description": "inspect: the bundle's id."},
        "digest": {"type": "string", "description": "inspect: the revision's sha256 digest."},
    },
    "required": ["action"],
    "additionalProperties": False,
}

CALL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "The bundle's id."},
        "digest": {"type": "string", "description": "The exact sha256 digest create answered."},
        "input": {"description": "A tool's input (checked against its inputSchema); an MCP "
                                 "tool's arguments (an object)."},
        "tool_name": {"type": "string", "description": "mcp: which of its tools to call."},
    },
    "required": ["id", "digest"],
    "additionalProperties": False,
}

MANAGE_DESCRIPTION = (
    "Make and manage reusable extension bundles of this project: immutable revisions named "
    "by id and sha256 digest under .workbench/bundles. A minimal Node tool bundle: "
    '{"manifest": {"schemaVersion": 1, "id": "count-entries", "kind": "tool", "description": '
    '"Counts the entries in a JSON object", "entrypoint": "index.mjs", "inputSchema": {"type": '
    '"object"}}, "files": {"index.mjs": "export function run(input) { return { count: '
    'Object.keys(input).length } }"}}. create answers the digest; call it with extension_call. '
    "No dependency is installed: a bundle ships its own text files only.")

CALL_DESCRIPTION = (
    "Use a bundle of this project by its id and exact digest: a skill returns its SKILL.md and "
    "text references; a tool's entrypoint runs run(input) in the sandbox and returns its JSON; "
    "an MCP bundle's tool is called by tool_name. A revision whose files changed is refused.")

MANAGE_PERMISSIONS = {"write": [{"path": "$project", "reason": "store extension bundles in this "
                                 "project's .workbench/bundles"}]}
CALL_PERMISSIONS = {"read": [{"path": "$project", "reason": "read this project's extension bundles"}]}


class BundleSource(ToolSource):
    """The source ``bundles`` (see the module docstring).

    Args:
        service: The bundles' service.
        folder: A chat's project folder (the host's folder without one).
        chat_tools: The tools a chat has on (every available tool without one).
    """

    name = EXTENSION
    precedence = "builtin"

    def __init__(self, service: BundleService, *, folder: Callable[[str | None], Path],
                 chat_tools: Callable[[str | None], list[Tool]]) -> None:
        self.service = service
        self.folder = folder
        self.chat_tools = chat_tools

    def tools(self) -> list[Tool]:
        here = Path(__file__).resolve().parent
        return [Tool(name=MANAGE, description=MANAGE_DESCRIPTION, parameters=MANAGE_PARAMETERS,
                     extension=EXTENSION, source="builtin", function=MANAGE, folder=here, entry=None,
                     runtime=HOST_RUNTIME, permissions=MANAGE_PERMISSIONS, timeout_ms=150_000,
                     handler=self._manage),
                Tool(name=CALL, description=CALL_DESCRIPTION, parameters=CALL_PARAMETERS,
                     extension=EXTENSION, source="builtin", function=CALL, folder=here, entry=None,
                     runtime=HOST_RUNTIME, permissions=CALL_PERMISSIONS, timeout_ms=150_000,
                     handler=self._call)]

    def status_rows(self) -> list[SourceRow]:
        return [SourceRow(EXTENSION, "Extension bundles", "workbench", 2)]

    async def stop(self) -> None:
        await self.service.runner.shell.aclose()

    # --- the handlers ------------------------------------------------------------------

    def _project(self, ctx: Any, kind: str) -> tuple[str | None, Path]:
        session_id = ctx.chat.session_id
        names = {t.name for t in offered_beside(self.chat_tools(session_id))}
        if MANAGE not in names:
            raise ToolError("permission", "extension bundles are offered only in a chat whose tools "
                            "include writing the project and running commands (the shell and "
                            "write_file); switch those on first")
        folder = self.folder(session_id)
        granted = [r.value for r in ctx.granted if r.kind == kind and r.project]
        if os.path.realpath(folder) not in granted:
            raise ToolError("permission", f"the chat's folder {folder} is not the project this call "
                            f"was granted ({', '.join(granted) or 'none'})")
        return session_id, folder

    async def _manage(self, arguments: dict[str, Any], ctx: Any) -> Any:
        session_id, folder = self._project(ctx, "write")
        action = arguments["action"]
        if action == "list":
            return {"bundles": self.service.list(folder)}
        if action == "validate":
            return self.service.validate(_needs(arguments, "bundle"))
        if action == "create":
            bundle = _needs(arguments, "bundle")
            await self._review(ctx, folder, bundle)
            return self.service.create(folder, bundle)
        return await self.service.inspect(folder, _needs(arguments, "id"), _needs(arguments, "digest"),
                                          session_id=session_id)

    async def _review(self, ctx: Any, folder: Path, bundle: Any) -> None:
        """When the chat reviews writes (``tools.review_writes``), show the revision as the
        file tools show a change, a diff, and write it only when accepted."""
        if not ctx.chat.review_writes:
            return
        checked = self.service.validate(bundle)
        shown = f".workbench/bundles/{checked['id']}/{checked['digest']}"
        after = "".join(f"--- {name}\n{bundle['files'][name]}\n" for name in sorted(bundle["files"]))
        after = f"--- manifest.json\n{json.dumps(bundle['manifest'], indent=2)}\n" + after
        try:
            [verdict] = await ctx.ask_user([{"kind": "diff", "question": f"Store this bundle as {shown}?",
                                             "before": "", "after": after, "title": shown}])
        except Exception as exc:  # the form was not answered (no one there, or refused)
            raise ToolError("permission", f"the bundle is to be reviewed before it is written to {folder}, "
                            f"and it was not accepted ({exc}); nothing was written") from None
        if verdict != "accept":
            raise ToolError("permission", f"the bundle {shown} was rejected; nothing was written")

    async def _call(self, arguments: dict[str, Any], ctx: Any) -> Any:
        session_id, folder = self._project(ctx, "read")
        return await self.service.call(folder, arguments["id"], arguments["digest"],
                                       arguments.get("input"), tool_name=arguments.get("tool_name"),
                                       session_id=session_id)


def _needs(arguments: dict[str, Any], name: str) -> Any:
    if name not in arguments:
        raise ToolError("invalid_arguments", f"{name}: {arguments['action']} needs it")
    return arguments[name]
