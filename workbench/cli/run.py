"""``workbench run``: one headless turn, plain or as JSON lines."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from workbench.cli.errors import reported


def run_command(
    prompt: str = typer.Argument(
        ..., help="What to say to the model, or an MCP prompt: /mcp__SERVER__PROMPT with its "
                  "arguments as NAME=VALUE words or one JSON object."),
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
) -> None:
    """Send PROMPT and print the reply; never waits for input.

    A continued session talks to the model it keeps and works in the folder it was
    started in (that folder's config and project extensions apply), wherever this runs.

    One turn at a time runs in a session: a second `run` on it waits for the
    first, or with --no-wait is refused (exit code 75), adding nothing.
    """
    from workbench.core.host import Host
    from workbench.headless.responder import HeadlessResponder, load_answers
    from workbench.headless.run import exit_code, writer_for

    with reported():
        writer = writer_for(jsonl)
        # With a session, extensions load once, in the session's folder.
        host = Host.open(model=model, defer_extensions=session is not None)
        with host:
            if session is not None:
                session = host.chats.enter(session)["id"]
                if model is not None:
                    host.chats.set_model(session, model)
            responder = HeadlessResponder(
                approvals or host.config.settings.headless.approvals,
                allowlist=list(host.config.settings.headless.allowlist),
                answers=load_answers(answers) if answers else None,
                delegate_timeout=host.config.settings.headless.delegate_timeout_s,
                record=writer.request)
            host.set_responder(responder)
            host.chats.turn_holder = "workbench run"
            result = asyncio.run(_turn(host, prompt, resource or [], session, writer, wait))
            if hasattr(writer, "finish"):
                writer.finish(result)
    raise typer.Exit(exit_code(result, writer))


async def _turn(host, prompt: str, resources: list[str], session: str | None, writer,
                wait: bool = True):
    """Expand an MCP prompt and attach the resources, then run the turn (on one loop,
    where the MCP servers started for them keep running)."""
    from workbench.core.mcp_prompting import compose
    from workbench.headless.run import run_turn

    text = await compose(host, prompt, resources)
    return await run_turn(host, text, session_id=session, writer=writer, wait=wait)
