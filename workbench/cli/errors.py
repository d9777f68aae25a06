"""Turn ``WorkbenchError``s into a message on stderr and the error's exit code."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import typer

from workbench.cli.output import say
from workbench.errors import WorkbenchError


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Run a command body; a ``WorkbenchError`` becomes ``error: …`` and its exit code."""
    try:
        yield
    except WorkbenchError as exc:
        say(f"error: {exc}", err=True)
        raise typer.Exit(int(exc.exit_code)) from None
