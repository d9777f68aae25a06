"""``workbench memories``: the user's knowledge and skills, and those extensions ship."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say

memories_app = typer.Typer(help="Your knowledge and skills, and the read-only ones extensions ship.",
                           no_args_is_help=True)


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


@memories_app.command("list")
def list_memories(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Your memories (knowledge and skills), then the read-only ones loaded extensions ship,
    each marked with its extension."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        found = host.memories.library.list()
    if as_json:
        say(json.dumps(found, indent=2, ensure_ascii=False))
        return
    if not found:
        say("No memories yet.")
        return
    width = max(len(memory["title"]) for memory in found)
    for memory in found:
        origin = f"read-only, from {memory['extension']}" if memory["readOnly"] else "yours"
        say(f"{memory['title']:<{width}}  {memory['kind']:<9}  {_when(memory['updatedAtMs'])}"
                   f"  {origin}")
        if memory.get("summary"):
            say(f"{'':<{width}}  {memory['summary']}")


def _text(file: Path | None, text: str | None) -> str:
    """The memory's text: from ``--file`` (``-`` is standard input) or ``--text``."""
    from workbench.errors import ExitCode, WorkbenchError

    if (file is None) == (text is None):
        raise WorkbenchError("give the memory's text with --file FILE or --text TEXT (one of them)",
                             exit_code=ExitCode.USAGE)
    if text is not None:
        return text
    if str(file) == "-":
        return sys.stdin.read()
    if file.is_dir():
        raise WorkbenchError(f"{file} is a folder; give a skill folder with --folder (a memory "
                             "you add with --file is one file)", exit_code=ExitCode.USAGE)
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkbenchError(f"cannot read {file}: {getattr(exc, 'strerror', None) or exc}",
                             exit_code=ExitCode.USAGE) from None


@memories_app.command("add")
def add_memory(
    title: str = typer.Argument(..., help="The memory's title (a skill's name)."),
    file: Path = typer.Option(None, "--file", "-f", help="Read the text from FILE (- for stdin)."),
    text: str = typer.Option(None, "--text", "-t", help="The text itself."),
    kind: str = typer.Option("knowledge", "--kind", "-k",
                             help="knowledge (reference data) or skill (a SKILL.md)."),
    folder: Path = typer.Option(None, "--folder", "-d",
                                help="A skill folder: its SKILL.md and the reference files "
                                     "beside it (with --kind skill)."),
    replace: bool = typer.Option(False, "--replace", help="Replace your memory of that title."),
) -> None:
    """Add one of your memories: knowledge the model is given as reference data, or a
    skill (a SKILL.md whose front matter gives its description) it loads when relevant."""
    from workbench.core.host import Host
    from workbench.errors import ExitCode, WorkbenchError

    with reported():
        if folder is not None and (file is not None or text is not None):
            raise WorkbenchError("give a skill folder with --folder, or the text with --file "
                                 "or --text, not both", exit_code=ExitCode.USAGE)
        content = _text(file, text) if folder is None else None
        with Host.open() as host:
            added = host.memories.add(title, content, kind, replace=replace, folder=folder)
    verb = "Replaced" if added["replaced"] else "Added"
    files = added.get("files") or []
    more = f" with {len(files)} file{'' if len(files) == 1 else 's'}" if files else ""
    say(f"{verb} {added['kind']} {added['title']!r}{more}.")


@memories_app.command("show")
def show_memory(
    title: str = typer.Argument(..., help="The memory's title."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One memory's text, yours or one an extension ships (with the files a skill bundles)."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        entry = host.memories.entry(title)
    if as_json:
        say(json.dumps(entry, indent=2, ensure_ascii=False))
        return
    origin = (f"read-only, from {entry['extension']}" if entry["readOnly"] else "yours")
    say(f"{entry['title']}  ({entry['kind']}, {origin})")
    if entry.get("summary"):
        say(entry["summary"])
    say("")
    say(entry["content"].rstrip("\n"))
    if entry.get("files"):
        say("\nFiles: " + ", ".join(entry["files"]))


@memories_app.command("rm")
def remove_memory(
    title: str = typer.Argument(..., help="The memory's title."),
) -> None:
    """Remove one of your memories (those extensions ship go with their extension)."""
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        host.memories.remove(title)
    say(f"Removed {title!r}.")
