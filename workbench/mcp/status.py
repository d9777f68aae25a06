"""What a person is shown of the MCP servers: one row per entry, secrets masked.

States: ``stopped`` (starts at its first need), ``starting``, ``running``, ``backoff``
(restarting; ``reason`` says why), ``fatal`` (gave up until the next call), ``disabled``
(switched off everywhere; ``fatal`` too for a server whose last start failed, with
its kept reason, ``starting`` while it is started again in the background) and ``untrusted`` (a project entry, new or changed, waiting
for ``workbench trust``). Tools, prompts and resources come from the running server,
else from the cache of its last listing.
"""

from __future__ import annotations

from typing import Any

from workbench.mcp.config import ServerConfig, ServerList
from workbench.mcp.manager import McpManager
from workbench.mcp.naming import tool_name
from workbench.mcp.tools import usable


def server_rows(found: ServerList, disabled: set[str], manager: McpManager,
                failures: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per server entry that applies or waits for trust; ``failures`` holds why
    servers could not be listed at the last (re)load."""
    entries: list[ServerConfig] = list(found.servers.values())
    entries += [s for name, s in found.pending.items() if name not in found.servers]
    return [_row(config, found, disabled, manager, failures or {}) for config in entries]


def _row(config: ServerConfig, found: ServerList, disabled: set[str], manager: McpManager,
         failures: dict[str, str]) -> dict[str, Any]:
    server = manager.servers.get(config.name)
    if server is not None and server.config.digest() != config.digest():
        server = None
    if config.name not in found.servers:
        state = "untrusted"
    elif config.name in disabled:
        state = "disabled"
    else:
        state = server.current_state().value if server is not None else "stopped"
    listing = manager.listing(config.name) if server is not None else None
    if listing is None and state != "untrusted":
        listing = manager.read_cache(config)
    reason = (server.reason if server is not None and state in ("backoff", "fatal")
              else failures.get(config.name, "") if listing is None else "")
    kept = manager.read_failure(config) if listing is None and state not in (
        "untrusted", "disabled") else None
    if kept is not None and state == "stopped":
        # It failed its last start: probed again in the background, or at the next need.
        state = "starting" if config.name in manager.probing else "fatal"
        reason = reason or kept
    pending = found.pending.get(config.name)
    return {
        "name": config.name, "scope": config.scope, "origin": config.origin,
        "transport": config.transport, "target": config.target(), "state": state,
        "reason": reason,
        "pid": server.pid if server is not None else None, "sandbox": config.sandbox,
        "sandbox_note": manager.notes.get(config.name, "") if server is not None else "",
        "pending_change": pending is not None and pending is not config,
        "tools_known": listing is not None,
        "tools": [{"name": tool_name(config.name, t["name"]), "mcp_name": t["name"],
                   "description": t.get("description", ""),
                   "enabled": t["name"] not in config.disabled_tools and usable(t) is None,
                   "unusable": usable(t)}
                  for t in (listing or {}).get("tools", [])],
        "prompts": [p["name"] for p in (listing or {}).get("prompts", [])],
        "resources": [r["uri"] for r in (listing or {}).get("resources", [])],
        "config": config.masked(),
    }


def state_notice(name: str, server: Any) -> tuple[str, str] | None:
    """``(level, message)`` worth telling a person about a server's new state, if any."""
    state = server.current_state().value
    if state == "backoff":
        return "warning", f"MCP server {name} is unavailable ({server.reason}); restarting it"
    if state == "fatal":
        return "error", f"MCP server {name} stopped: {server.reason}"
    if state == "running" and server.failures:
        return "info", f"MCP server {name} is running again"
    return None
