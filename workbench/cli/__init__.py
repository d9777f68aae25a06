"""The ``workbench`` command: the TUI by default, and every headless subcommand.

One typer sub-app per area lives beside this file. Heavy modules (textual, the
core) are imported inside the commands that need them, so ``--version`` stays fast.
"""

from __future__ import annotations

from workbench.cli.app import app, main

__all__ = ["app", "main"]
