"""Host-native tools: tools that are the host's own code, such as ``extensions_status``.

They need the host's internals (the registry, the loaded extensions, whether a turn
is streaming), so they cannot run in a sandboxed worker. Each is a registry ``Tool``
with ``runtime="host"`` and a ``handler``, from the source ``builtin`` and the
extension ``workbench``; the ``Dispatcher`` awaits the handler in-process. They
still go through the gateway like every other call (validation, audit, events).
``Host.reload_extensions`` registers them after the extensions, so they survive a
reload.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import ToolError
from workbench.tools.registry import HOST_RUNTIME, Tool

if TYPE_CHECKING:
    from workbench.core.host import Host

HOST_EXTENSION = "workbench"
"""The extension name host-native tools are registered under (``workbench.extensions_status``)."""

EXTENSIONS_STATUS_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string", "enum": ["status", "reload"], "default": "status",
            "description": "status: report the extensions as loaded now (the default). "
                           "reload: find the extensions again, rebuild the tool registry, "
                           "then report.",
        },
        "include_details": {
            "type": "boolean", "default": False,
            "description": "Also give each extension's folder, tools and config schema.",
        },
    },
    "additionalProperties": False,
}

EXTENSIONS_STATUS_DESCRIPTION = (
    "Report the health of the extensions: which loaded (with versions and what they "
    "bring), which failed to load and why, tool name conflicts and what each source "
    "contributes; or reload them. Use when an expected tool is missing, an extension "
    "seems broken, or extensions were added, changed or removed during the chat.")

RELOAD_WHILE_STREAMING = (
    "extensions cannot be reloaded while a turn is streaming: the tools offered to this "
    "turn would change under it. Reload between turns (or start workbench again); "
    "action \"status\" works now.")

RELOAD_WITHOUT_SESSION = (
    "reload needs a chat session, and this call has none ({why}); action \"status\" "
    "reports the extensions without one.")


def _extensions_status(host: Host):
    async def handler(arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
        action = arguments.get("action", "status")
        details = bool(arguments.get("include_details", False))
        session_id = ctx.chat.session_id
        if action == "reload":
            if host.busy:
                raise ToolError("unavailable", RELOAD_WHILE_STREAMING)
            if session_id is None or host.store.get_session(session_id) is None:
                why = "no session context" if session_id is None else "session not found"
                raise ToolError("unavailable", RELOAD_WITHOUT_SESSION.format(why=why))
            await asyncio.to_thread(host.reload_extensions)
        report = host.status_report(session_id)
        reloaded = action == "reload"
        return {"title": report.title(reloaded=reloaded),
                "markdown": report.to_markdown(details=details, reloaded=reloaded)}

    return handler


def host_tools(host: Host) -> list[Tool]:
    """The host-native tools of ``host``, ready to add to its registry."""
    folder = Path(__file__).resolve().parent
    return [Tool(name="extensions_status", description=EXTENSIONS_STATUS_DESCRIPTION,
                 parameters=EXTENSIONS_STATUS_PARAMETERS, extension=HOST_EXTENSION,
                 source="builtin", function="extensions_status", folder=folder, entry=None,
                 runtime=HOST_RUNTIME, handler=_extensions_status(host))]
