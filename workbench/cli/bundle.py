"""``workbench bundle``: a project's content-addressed extension bundles — list, validate,
create, inspect and call them, through the same service the agent's
``extension_manage`` and ``extension_call`` use (``core/bundles.py``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say

bundle_app = typer.Typer(help="List, validate, create, inspect and call a project's extension bundles.",
                         no_args_is_help=True)

PROJECT = typer.Option(None, "--project", help="The project folder (default: this folder).")
AS_JSON = typer.Option(False, "--json", help="Print JSON.")


def _read(path: Path, what: str) -> Any:
    from workbench import jsontext

    return jsontext.loads(jsontext.read_file(path), str(path)) if str(path) != "-" else \
        jsontext.loads(_stdin(), f"the {what} on stdin")


def _stdin() -> bytes:
    import sys

    return sys.stdin.buffer.read(4 * 1024 * 1024 + 1)


def _print(found: Any, as_json: bool, lines: list[str]) -> None:
    if as_json:
        say(json.dumps(found, indent=2, ensure_ascii=False))
    else:
        for line in lines:
            say(line)


def _open(project: Path | None):
    from workbench.core.host import Host

    return Host.open(cwd=project, defer_extensions=True)


@bundle_app.command("list")
def list_bundles(project: Path | None = PROJECT, as_json: bool = AS_JSON) -> None:
    """Every revision of the project's bundles: id, digest, kind, state (metadata only)."""
    from workbench.core.bundles import bundles

    with reported(), _open(project) as host:
        rows = bundles(host).list(project or host.cwd)
    lines = [f"{r['id']:<24} {r['digest']}  {r.get('kind', '-'):<5} {r['state']}"
             + (f"  {r['why']}" if r.get("why") else "") for r in rows] or ["No bundles."]
    _print(rows, as_json, lines)


@bundle_app.command("validate")
def validate(path: Path = typer.Argument(..., metavar="FILE", help='The bundle: {"manifest", "files"} ("-": stdin).'),
             as_json: bool = AS_JSON) -> None:
    """Check a bundle and compute its digest; nothing is written or run."""
    from workbench.core.bundles import check

    with reported():
        found = check(_read(path, "bundle"))
    _print(found, as_json, [f"valid: {found['id']} {found['digest']} ({found['kind']}, "
                            f"{len(found['files'])} files, {found['bytes']} bytes)"])


@bundle_app.command("create")
def create(path: Path = typer.Argument(..., metavar="FILE", help='The bundle: {"manifest", "files"} ("-": stdin).'),
           project: Path | None = PROJECT, as_json: bool = AS_JSON) -> None:
    """Store a bundle as a revision of the project (.workbench/bundles/ID/DIGEST)."""
    from workbench.core.bundles import bundles

    with reported():
        value = _read(path, "bundle")
        with _open(project) as host:
            found = bundles(host).create(project or host.cwd, value)
    _print(found, as_json, [f"{'created' if found['created'] else 'already there'}: "
                            f"{found['id']} {found['digest']}", f"  {found['path']}"])


@bundle_app.command("inspect")
def inspect(bundle_id: str = typer.Argument(..., metavar="ID"),
            digest: str = typer.Argument(..., metavar="DIGEST"),
            project: Path | None = PROJECT, as_json: bool = AS_JSON,
            runtime: str = typer.Option("auto", "--runtime", help="auto, node or deno.")) -> None:
    """One revision, checked against its digest; an MCP bundle is started to list its tools."""
    from workbench.core.bundles import bundles, set_runtime

    with reported(), _open(project) as host:
        set_runtime(host, runtime)
        found = asyncio.run(bundles(host).inspect(project or host.cwd, bundle_id, digest))
    lines = [f"{found['id']} {found['digest']} ({found['kind']}): {found['description']}",
             f"  files: {', '.join(found['files'])}"]
    lines += [f"  tool {t['name']}: {t['description']}" for t in found.get("tools", [])]
    _print(found, as_json, lines)


@bundle_app.command("call")
def call(bundle_id: str = typer.Argument(..., metavar="ID"),
         digest: str = typer.Argument(..., metavar="DIGEST"),
         input_text: str | None = typer.Option(None, "--input", help="The input as JSON."),
         input_file: Path | None = typer.Option(None, "--input-file", help="The input's JSON file ('-': stdin)."),
         tool_name: str | None = typer.Option(None, "--tool", help="mcp: which of its tools."),
         project: Path | None = PROJECT, as_json: bool = AS_JSON,
         runtime: str = typer.Option("auto", "--runtime", help="auto, node or deno.")) -> None:
    """Use a revision by its id and exact digest; prints the result (a skill's text)."""
    from workbench import jsontext
    from workbench.core.bundles import bundles, set_runtime

    with reported():
        value = None
        if input_text is not None:
            value = jsontext.loads(input_text, "--input")
        elif input_file is not None:
            value = _read(input_file, "input")
        with _open(project) as host:
            set_runtime(host, runtime)
            found = asyncio.run(bundles(host).call(project or host.cwd, bundle_id, digest, value,
                                                   tool_name=tool_name))
    if found["kind"] == "skill":
        lines = [found["skill"]] + [f"--- {r['path']}\n{r['text']}" for r in found["references"]]
    else:
        lines = [json.dumps(found["result"], indent=2, ensure_ascii=False)]
    _print(found, as_json, lines)
