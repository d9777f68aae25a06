"""``workbench run``: one headless turn, plain or as JSON lines."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from workbench.cli.errors import reported
from workbench.errors import ExitCode, WorkbenchError


def run_command(
    prompt: str | None = typer.Argument(
        None, help="What to say to the model, or an MCP prompt: /mcp__SERVER__PROMPT with its "
                   "arguments as NAME=VALUE words or one JSON object. `-`, or none with stdin "
                   "not a terminal: read from stdin."),
    session: str | None = typer.Option(
        None, "--session", "-s",
        help="Continue this session (id or prefix), with its own model and in its own folder."),
    model: str | None = typer.Option(
        None, "--model", "-m",
        help="The model, e.g. echo, scripted:FILE or ext:EXTENSION/PROVIDER; with --session "
             "it becomes that session's model."),
    jsonl: bool = typer.Option(False, "--jsonl", help="Print one JSON event per line."),
    approvals: str | None = typer.Option(
        None, "--approvals",
        help="Permission requests: deny (default), allowlisted, or delegate:COMMAND."),
    answers: Path | None = typer.Option(None, "--answers", help="A JSON file answering ask-user forms, in order."),
    wait: bool = typer.Option(
        True, "--wait/--no-wait",
        help="When another process is running a turn in the session: wait for it to end "
             "(default; Ctrl+C stops waiting), or refuse at once with exit code 75."),
    resource: list[str] = typer.Option(
        None, "--resource", "-r", metavar="mcp:SERVER:URI",
        help="Attach an MCP resource to the prompt, as data (repeatable)."),
    file: list[Path] = typer.Option(
        None, "--file", "-f", metavar="PATH",
        help="Attach a text file to the prompt, as data (repeatable; at most "
             "headless.max_prompt_bytes each)."),
    grant: list[str] = typer.Option(
        [], "--grant", "-g", metavar="[TOOL:]KIND[:VALUE]",
        help="Grant, for this turn, a permission any tool (or TOOL alone) asks for: read:PATH, "
             "net:HOST:PORT, env:NAME… (repeatable); what it does not cover follows --approvals."),
    addon: list[str] = typer.Option(
        [], "--addon", "-a", metavar="ID",
        help="Switch this add-on (or any extension) on in the run's chat first, as the "
             "Tools menu does (repeatable); an installed add-on is off in a chat until then."),
    allow_refusals: bool = typer.Option(
        False, "--allow-refusals",
        help="Exit 0 when the turn ends although a tool was refused a permission (else exit 6)."),
) -> None:
    """Send PROMPT and print the reply; never waits for input.

    A continued session talks to the model it keeps and works in the folder it was
    started in (that folder's config and project extensions apply), wherever this runs.

    One turn at a time runs in a session: a second `run` on it waits for the
    first, or with --no-wait is refused (exit code 75), adding nothing.

    A turn in which a tool was refused a permission exits 6 (unless --allow-refusals);
    with no real model (echo) one line on stderr says so.
    """
    from workbench.core.host import Host
    from workbench.core.run_grants import resolve_run_grants
    from workbench.headless.inputs import file_block, read_prompt
    from workbench.headless.responder import HeadlessResponder, load_answers
    from workbench.headless.run import Refusals, exit_code, writer_for

    with reported():
        writer = writer_for(jsonl)
        # With a session, extensions load once, in the session's folder.
        host = Host.open(model=model, defer_extensions=session is not None)
        with host:
            limit = host.config.settings.headless.max_prompt_bytes
            if prompt is None and sys.stdin.isatty():
                raise WorkbenchError("no prompt: give it as an argument, or pipe it in (`-` reads "
                                     "it from stdin)", exit_code=ExitCode.USAGE)
            if prompt is None or prompt == "-":
                prompt = read_prompt(sys.stdin.buffer, limit)
            blocks = [file_block(path, limit) for path in file or []]
            if session is not None:
                session = host.chats.enter(session)["id"]
                if model is not None:
                    host.chats.set_model(session, model)
            if addon:
                if session is None:
                    session = host.chats.new()["id"]
                for name in addon:
                    host.switches.set_extension(session, name, True)
            grants = resolve_run_grants(host, grant) if grant else ()
            info = host.chat_models.model_info(session)
            if info["stand_in"]:
                # Said on stderr, once: stdout stays the reply (or the JSON lines).
                from workbench.cli.output import say

                say(f"workbench: {info['hint']}", err=True)
            responder = HeadlessResponder(
                approvals or host.config.settings.headless.approvals,
                allowlist=list(host.config.settings.headless.allowlist),
                answers=load_answers(answers) if answers else None,
                delegate_timeout=host.config.settings.headless.delegate_timeout_s,
                record=writer.request, grants=grants)
            host.answer_with(responder)
            host.chats.turn_holder = "workbench run"
            refusals = Refusals()
            host.bus.subscribe(refusals.event)
            result = asyncio.run(_turn(host, prompt, blocks, resource or [], session, writer, wait))
            if hasattr(writer, "finish"):
                writer.finish(result)
            if refusals.count and not allow_refusals and not writer.closed and result.status == "done":
                from workbench.cli.output import say

                say(f"workbench: {refusals.describe()}; exit {int(ExitCode.TOOL_REFUSED)} "
                    "(--allow-refusals: exit 0)", err=True)
                raise typer.Exit(int(ExitCode.TOOL_REFUSED))
    raise typer.Exit(exit_code(result, writer))


async def _turn(host, prompt: str, files: list[str], resources: list[str], session: str | None,
                writer, wait: bool = True):
    """Expand an MCP prompt and attach the resources and files, then run the turn (on one
    loop, where the MCP servers started for them keep running). The model's own notice
    is not announced: the one line about echo replies is said before."""
    from workbench.core.mcp_prompting import compose
    from workbench.headless.inputs import with_files
    from workbench.headless.run import run_turn

    text = with_files(await compose(host, prompt, resources), files)
    return await run_turn(host, text, session_id=session, writer=writer, wait=wait,
                          announce_model=False)
