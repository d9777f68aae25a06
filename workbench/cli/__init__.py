"""The ``workbench`` command: the TUI by default, and every headless subcommand.

One typer sub-app per area lives beside this file. Heavy modules (textual, the
core) are imported inside the commands that need them, so ``--version`` stays fast;
a plainly well-formed ``workbench call`` runs without typer (``calling.py``).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the command ``argv`` (``sys.argv[1:]`` when not
    given) and exit with its code (``app.main``; a well-formed ``call`` without typer)."""
    from workbench.cli.calling import quick_main

    args = sys.argv[1:] if argv is None else list(argv)
    quick_main(args)
    from workbench.cli.app import main as typer_main

    typer_main(args)


def __getattr__(name: str) -> Any:
    if name == "app":
        from workbench.cli.app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
