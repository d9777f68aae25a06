"""``workbench sessions``: list the chat sessions, show one (with its model and folder),
change a session's model, the tools it offers (with the extensions and the single
tools it switched off and on) and what its shell may reach on the network."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say

if TYPE_CHECKING:
    from workbench.core.switches import SwitchMenu

sessions_app = typer.Typer(help="List and show chat sessions and switch extensions and tools "
                                "per session.",
                           no_args_is_help=True)


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


@sessions_app.command("list")
def list_sessions(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: int | None = typer.Option(None, "--limit", "-n", min=1, help="At most this many."),
) -> None:
    """The sessions, newest first."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        rows = host.chats.rows(limit=limit)
    if as_json:
        say(json.dumps([row.to_json() for row in rows], indent=2, default=str))
        return
    if not rows:
        say("No sessions yet. Start one with `workbench` or `workbench run \"…\"`.")
        return
    for row in rows:
        say(f"{row.id[:12]}  {_when(row.updated_at)}  {row.message_count:>4} msgs  {row.title}")


@sessions_app.command("show")
def show_session(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One session with its messages, and under each tool call the lines its tool logged."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        session = host.chats.get(session_id)
        messages = host.chats.messages(session["id"])
        # A call's log is kept under our id of it (``call_id``; a call stored before
        # ours were given has the model's id as ours too).
        logs = {ours: host.chats.call_log(ours) for message in messages
                for call in message.get("tool_calls") or []
                if (ours := call.get("call_id") or call.get("id"))}
    logs = {call_id: lines for call_id, lines in logs.items() if lines}
    if as_json:
        say(json.dumps({"session": session, "messages": messages, "call_logs": logs},
                              indent=2, default=str))
        return
    say(f"session {session['id']}  started {_when(session.get('created_at'))}")
    say(f"model   {session.get('model') or '- (follows the default)'}")
    say(f"folder  {session.get('folder') or '-'}")
    for message in messages:
        role = message["role"]
        if message.get("content"):
            say(f"\n[{role}] {message['content']}")
        for call in message.get("tool_calls") or []:
            ours = f"  ({call['call_id']})" if call.get("call_id") else ""
            say(f"\n[{role}] → {call['name']} {json.dumps(call.get('arguments') or {})}{ours}")
            for line in logs.get(call.get("call_id") or call.get("id"), []):
                say(f"    {line['level']:<5} {line['message']}")


@sessions_app.command("set-model")
def set_model(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    spec: str = typer.Argument(..., metavar="SPEC",
                               help="echo, scripted:FILE, openai:MODEL, anthropic:MODEL, local, "
                                    "auto or ext:EXTENSION/PROVIDER; default: follow the default "
                                    "model again."),
    as_json: bool = typer.Option(False, "--json", help="Print the session as JSON."),
) -> None:
    """Make one session talk to another model from its next turn on."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        session = host.chat_models.choose_model(host.chats.get(session_id)["id"], spec)
        default = host.default_model.spec
    if as_json:
        say(json.dumps(session, indent=2, default=str))
        return
    if session["model"]:
        say(f"Session {session['id'][:12]} now talks to {session['model']}")
    else:
        say(f"Session {session['id'][:12]} now follows the default model ({default})")


@sessions_app.command("model")
def session_model(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    spec: str | None = typer.Argument(None, metavar="[SPEC]",
                                      help="Switch to this model (as set-model), or `default`."),
    choices: bool = typer.Option(False, "--choices", help="List the models it can switch to "
                                 "(what /model completes in the TUI)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """What one session talks to — its own model or the default, real or the echo
    stand-in — or switch it, as `/model` does in the TUI."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        full = host.chats.get(session_id)["id"]
        if spec is not None:
            host.chat_models.choose_model(full, spec)
        if choices:
            rows = host.chat_models.model_choices(full)
            if as_json:
                say(json.dumps(rows, indent=2))
                return
            width = max(len(row["spec"]) for row in rows)
            for row in rows:
                say(f"{row['spec']:<{width}}  {row['description']}")
            return
        info = host.chat_models.model_info(full)
    if as_json:
        say(json.dumps({"session": full, **info}, indent=2))
        return
    whose = "its own" if info["own"] else "the default"
    label = info["label"] if info["label"] == info["spec"] else f"{info['spec']} ({info['label']})"
    say(f"Session {full[:12]} talks to {label}: {whose}")
    if info["stand_in"]:
        say(info["hint"], err=True)


@sessions_app.command("tools")
def session_tools(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    every: bool = typer.Option(False, "--all", help="Every tool a session can switch, with its "
                               "state there, not only those offered."),
) -> None:
    """The tools the model is offered in one session, and what it switched off."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        session = host.chats.get(session_id)
        listing = host.switches.menu(session["id"]) if every else None
        tools = host.switches.tools(session["id"])
        switches = host.switches.of(session["id"])
    if listing is not None:
        _print_switches(listing, as_json)
        return
    off = sorted(switches.extensions_off)
    tools_off = sorted(f"{extension}.{name}" for (extension, name), on in switches.tools.items()
                       if not on)
    if as_json:
        say(json.dumps({
            "session": session["id"], "switched_off": off, "tools_off": tools_off,
            "tools": [{"name": t.name, "extension": t.extension, "source": t.source,
                       "qualified_name": t.qualified_name, "description": t.description}
                      for t in tools]}, indent=2))
        return
    width = max((len(t.name) for t in tools), default=0)
    extension_width = max((len(t.extension) for t in tools), default=0)
    for tool in tools:
        say(f"{tool.name:<{width}}  {tool.extension:<{extension_width}}  {tool.description}")
    if not tools:
        say("No tools are offered in this session.")
    if off:
        say(f"\nSwitched off in this session: {', '.join(off)}")
    if tools_off:
        if not off:
            say("")
        say(f"Tools switched off in this session: {', '.join(tools_off)}")


def _print_switches(menu: SwitchMenu, as_json: bool) -> None:
    if as_json:
        say(json.dumps(menu.to_json(), indent=2))
        return
    tools = menu.tools
    width = max((len(t.name) for t in tools), default=0)
    extension_width = max((len(t.extension) for t in tools), default=0)
    for tool in tools:
        state = ("on" if tool.on else "off") + ("*" if tool.own else "")
        note = ("" if not tool.on or tool.offered else
                f"  (replaced by {tool.replaced_by})" if tool.replaced_by
                else "  (another tool has its name)")
        if tool.replaces:
            note += f"  (in place of {', '.join(tool.replaces)})"
        say(f"{state:<4}  {tool.name:<{width}}  {tool.extension:<{extension_width}}{note}".rstrip())
    chosen = [f"{e.name} {'on' if e.on else 'off'}" for e in menu.extensions if e.own]
    if chosen:
        say(f"\nExtensions switched in this session: {', '.join(chosen)}")
    if any(t.own for t in tools):
        say("* switched in this session; the other tools follow their extension.")


def _switch(session_id: str, extension: str, enabled: bool) -> None:
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        full = host.chats.get(session_id)["id"]
        host.switches.set_extension(full, extension, enabled)
    state = "on" if enabled else "off"
    say(f"Switched {extension} {state} in session {full[:12]}")


@sessions_app.command("disable-extension")
def disable_extension(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    extension: str = typer.Argument(..., metavar="EXT", help="The extension to switch off."),
) -> None:
    """Switch an extension off in one session: the model is not offered its tools there."""
    _switch(session_id, extension, False)


@sessions_app.command("enable-extension")
def enable_extension(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    extension: str = typer.Argument(..., metavar="EXT", help="The extension to switch on."),
) -> None:
    """Switch an extension back on in one session."""
    _switch(session_id, extension, True)


def _switch_tool(session_id: str, tool: str, enabled: bool) -> None:
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        full = host.chats.get(session_id)["id"]
        chosen = host.switches.set_tool(full, tool, enabled)
    state = "on" if enabled else "off"
    say(f"Switched {chosen.qualified_name} {state} in session {full[:12]}")


@sessions_app.command("disable-tool")
def disable_tool(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    tool: str = typer.Argument(..., metavar="TOOL", help="The tool's name, or EXTENSION.TOOL."),
) -> None:
    """Switch one tool off in one session: not offered there, calls to it refused."""
    _switch_tool(session_id, tool, False)


@sessions_app.command("enable-tool")
def enable_tool(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    tool: str = typer.Argument(..., metavar="TOOL", help="The tool's name, or EXTENSION.TOOL."),
) -> None:
    """Switch one tool on in one session, even when its extension is switched off there."""
    _switch_tool(session_id, tool, True)


@sessions_app.command("network")
def session_network(
    session_id: str = typer.Argument(..., metavar="ID", help="A session id or a unique prefix."),
    level: str | None = typer.Argument(None, metavar="[LEVEL]",
                                       help="off, registries (PyPI, npm, Debian) or all (every "
                                            "public site); `default` follows shell.network again."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """What the shell may reach in one session, or choose it, as the Tools menu's
    Network row does; never beyond shell.network_ceiling from your own config."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        full = host.chats.get(session_id)["id"]
        if level is None:
            found = host.shell.network(full)
        else:
            found = host.shell.set_network(full, None if level == "default" else level)
    if as_json:
        say(json.dumps({"session": full, **found}, indent=2))
        return
    whose = "its own choice" if found["chosen"] else "the setting shell.network"
    say(f"Session {full[:12]}: the shell reaches {found['labels'][found['level']]} ({whose})")
    wanted = found["chosen"] or found["setting"]
    if wanted != found["level"]:
        say(f"{found['labels'][wanted]} is beyond the ceiling shell.network_ceiling "
            f"({found['labels'][found['ceiling']]}, set in your own config)", err=True)
    if found["allowed_hosts"]:
        say(f"Allowed for this session from a network card: {', '.join(found['allowed_hosts'])}")
