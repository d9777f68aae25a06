"""``workbench mcp …``: add, list, show, remove, enable and disable MCP servers, and
``mcp serve`` (the workbench's extension tools as an MCP server over stdio).

Secrets given with ``--env`` and ``--header`` are kept in the config file (made private
to its owner) and shown masked everywhere. The host and the SDK are imported inside
the commands, so loading this module costs no more than typer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say
from workbench.errors import ExitCode, WorkbenchError

if TYPE_CHECKING:
    from workbench.core.host import Host

mcp_app = typer.Typer(help="Add and manage MCP servers; serve the extensions' tools over MCP.",
                      no_args_is_help=True)
resource_app = typer.Typer(help="List and read the MCP servers' resources.", no_args_is_help=True)
mcp_app.add_typer(resource_app, name="resource")


@contextlib.contextmanager
def _host(load: bool = False) -> Iterator[Host]:
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        for notice in host.config.notices:
            say(f"notice: {notice}", err=True)
        if load:
            host.loading.ensure()
        try:
            yield host
        finally:
            host.mcp.manager.kill_all()


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise WorkbenchError(f"{option} {value!r} must be KEY=VALUE", exit_code=ExitCode.USAGE)
        pairs[key] = rest
    return pairs


@mcp_app.command("add")
def add(
    name: str = typer.Argument(..., help="The server's name: its tools are mcp__NAME__TOOL."),
    command: list[str] = typer.Argument(None, metavar="-- COMMAND [ARGS]...",
                                        help="The program of a stdio server, after --."),
    url: str | None = typer.Option(None, "--url", help="The endpoint of a streamable HTTP server."),
    header: list[str] = typer.Option([], "--header", metavar="K=V",
                                     help="An HTTP header (a secret: kept, shown masked)."),
    env: list[str] = typer.Option([], "--env", "-e", metavar="K=V",
                                  help="An environment value (a secret: kept, shown masked)."),
    cwd: Path | None = typer.Option(None, "--cwd", help="The folder a stdio server starts in."),
    timeout_ms: int | None = typer.Option(None, "--timeout-ms", help="How long one call may run."),
    sandbox: bool = typer.Option(False, "--sandbox", help="Run the stdio server in the sandbox."),
    grant: list[str] = typer.Option([], "--grant", "-g", metavar="KIND:VALUE",
                                    help="Grant the sandboxed server read:PATH, write:PATH, "
                                         "run:BINARY, env:KEY or net:HOST:PORT (repeatable)."),
    project: bool = typer.Option(False, "--project",
                                 help="Add it to the project's .workbench/config.toml "
                                      "(it applies once trusted)."),
    replace: bool = typer.Option(False, "--replace", help="Replace a server of the same name."),
    check: bool = typer.Option(True, "--check/--no-check",
                               help="Start it now and list its tools (the default)."),
) -> None:
    """Add a stdio server (`mcp add NAME -- COMMAND ARGS…`) or an HTTP one (`--url URL`)."""
    with _host() as host:
        if bool(command) == bool(url):
            raise WorkbenchError("give a command after -- (stdio) or --url (streamable HTTP)",
                                 exit_code=ExitCode.USAGE)
        server = host.mcp.entry(
            name, command=command[0] if command else None, args=tuple(command[1:] if command else ()),
            env=_pairs(env, "--env"), cwd=str(cwd.resolve()) if cwd else None, url=url,
            headers=_pairs(header, "--header"), timeout_ms=timeout_ms, sandbox=sandbox,
            grants=tuple(grant))
        if (sandbox or grant) and url:
            raise WorkbenchError("--sandbox and --grant are for stdio servers", exit_code=ExitCode.USAGE)
        notice = host.mcp.add(server, scope="project" if project else "global", replace=replace)
        say(f"added MCP server {name}: {server.target()}")
        if notice:
            say(f"notice: {notice}", err=True)
            return
        if check:
            host.loading.ensure()  # lists the tools of a server never listed
            row = next(r for r in host.mcp.servers() if r["name"] == name)
            if not row["tools_known"]:
                say(f"error: it could not start: {row['reason'] or 'unknown reason'}\n"
                           f"(the entry is kept; `workbench mcp rm {name}` removes it)", err=True)
                raise typer.Exit(ExitCode.ERROR)
            tools = [t["name"] for t in row["tools"]]
            say(f"{len(tools)} tools: {', '.join(tools)}" if tools else "no tools")


@mcp_app.command("list")
def list_servers(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    check: bool = typer.Option(False, "--check", help="Start the enabled servers and report them live."),
) -> None:
    """List the servers with their state and tools (secrets masked)."""
    with _host(load=True) as host:
        if check:
            asyncio.run(host.mcp.check())
        rows = host.mcp.servers()
    if as_json:
        say(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        say("no MCP servers; `workbench mcp add NAME -- COMMAND` adds one")
    for row in rows:
        tools = f"{len(row['tools'])} tools" if row["tools_known"] else "tools not listed yet"
        sandbox = ", sandboxed" if row["sandbox"] else ""
        say(f"{row['name']}  {row['state']}  {row['transport']}{sandbox}  {tools}  "
                   f"({row['scope']})  {row['target']}")
        if row["reason"]:
            say(f"    {row['reason']}")


@mcp_app.command("show")
def show(
    name: str = typer.Argument(..., help="A server's name."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    check: bool = typer.Option(False, "--check", help="Start it and report it live."),
) -> None:
    """Show one server: its entry (secrets masked), state, tools, prompts and resources."""
    with _host(load=True) as host:
        failures = asyncio.run(host.mcp.check([name])) if check else {}
        row = next((r for r in host.mcp.servers() if r["name"] == name), None)
        if row is None:
            raise WorkbenchError(f"no MCP server named {name!r}; `workbench mcp list` shows them")
    if as_json:
        say(json.dumps(row, indent=2, ensure_ascii=False))
        return
    say(f"{row['name']}  {row['state']}  ({row['scope']}: {row['origin']})")
    if failures.get(name) or row["reason"]:
        say(f"  reason: {failures.get(name) or row['reason']}")
    if row["sandbox_note"]:
        say(f"  sandbox: {row['sandbox_note']}")
    for key, value in row["config"].items():
        say(f"  {key}: {_shown(value)}")
    if not row["tools"]:
        say("  tools: " + ("none" if row["tools_known"] else "not listed yet"))
    else:
        say("  tools:")
    for tool in row["tools"]:
        note = (f"  (not offered: {tool['unusable']})" if tool["unusable"] else
                "" if tool["enabled"] else "  (disabled)")
        first = tool["description"].splitlines()[0] if tool["description"] else ""
        say(f"    {tool['name']}{note}  {first}")
    say(f"  prompts: {', '.join(row['prompts']) or 'none'}")
    say(f"  resources: {', '.join(row['resources']) or 'none'}")


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


@mcp_app.command("rm")
def remove(
    name: str = typer.Argument(..., help="A server's name."),
    project: bool = typer.Option(False, "--project", help="Remove it from the project's config."),
) -> None:
    """Remove a server (its entry and its secrets)."""
    with _host() as host:
        notice = host.mcp.remove(name, scope="project" if project else "global")
    say(f"removed MCP server {name}")
    if notice:
        say(f"notice: {notice}", err=True)


def _switch(name: str, tool: str | None, enabled: bool) -> None:
    with _host() as host:
        notice = host.mcp.set_enabled(name, enabled, tool=tool)
    what = f"tool {tool} of MCP server {name}" if tool else f"MCP server {name}"
    say(f"{'enabled' if enabled else 'disabled'} {what}")
    if notice:
        say(f"notice: {notice}", err=True)


@mcp_app.command("enable")
def enable(
    name: str = typer.Argument(..., help="A server's name."),
    tool: str | None = typer.Option(None, "--tool", help="Only this tool (its MCP name)."),
) -> None:
    """Switch a server (or one of its tools) back on, in every chat."""
    _switch(name, tool, True)


@mcp_app.command("disable")
def disable(
    name: str = typer.Argument(..., help="A server's name."),
    tool: str | None = typer.Option(None, "--tool", help="Only this tool (its MCP name)."),
) -> None:
    """Switch a server (or one of its tools) off in every chat; a chat can also switch a
    server off for itself (`sessions disable-extension SESSION mcp:NAME`)."""
    _switch(name, tool, False)


@mcp_app.command("serve")
def serve(
    no_builtin: bool = typer.Option(False, "--no-builtin",
                                    help="Serve the extensions' tools only, not the built-in ones."),
    addon: list[str] = typer.Option([], "--addon", "-a", metavar="ID",
                                    help="Serve this first-party add-on's tools too (repeatable); "
                                         "an installed add-on is served only when named."),
) -> None:
    """Serve the built-in and the installed extensions' tools over MCP on stdin/stdout,
    for another agent.

    Each call runs as it would here — your standing grants, the sandbox, hooks and the
    audit log — and never asks: a missing permission is an MCP error that names it.
    """
    from workbench.core.host import Host
    from workbench.headless.responder import HeadlessResponder

    with reported():
        host = Host.open(responder=HeadlessResponder("deny"))

        async def run() -> None:
            try:
                await host.mcp.serve_stdio(builtin=not no_builtin, addons=addon)
            finally:
                await host.aclose()

        asyncio.run(run())


@resource_app.command("list")
def list_resources(
    server: str | None = typer.Argument(None, help="One server's name (default: every enabled one)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the servers' resources (starting them), each with the reference that attaches
    it to a prompt: `workbench run --resource mcp:SERVER:URI`."""
    from workbench.core.mcp_prompting import list_resources as listed

    with _host(load=True) as host:
        rows = asyncio.run(listed(host, server))
    if as_json:
        say(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        say("no resources")
    for row in rows:
        mime = f"  {row['mimeType']}" if row.get("mimeType") else ""
        say(f"{row['ref']}  {row.get('name') or ''}{mime}")


@resource_app.command("read")
def read_resource(
    server: str = typer.Argument(..., help="The server's name."),
    uri: str = typer.Argument(..., help="The resource's URI."),
    as_json: bool = typer.Option(False, "--json", help="Print the server's answer as JSON."),
) -> None:
    """Print one resource's text (a binary one is given as base64 by --json)."""
    with _host(load=True) as host:
        if server not in host.mcp.manager.servers:
            raise WorkbenchError(f"no enabled MCP server named {server!r}; `workbench mcp list` "
                                 "shows them", exit_code=ExitCode.USAGE)
        data = asyncio.run(host.mcp.read_resource(server, uri))
    if as_json:
        say(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for item in data.get("contents", []):
        if "text" in item:
            say(item["text"])
        else:
            say(f"(binary content, {item.get('mimeType') or 'unknown type'}; "
                       "--json gives it as base64)", err=True)
