"""Turn ``WorkbenchError``s into a message on stderr and the error's exit code."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import typer

from workbench.errors import WorkbenchError


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Run a command body; a ``WorkbenchError`` becomes ``error: …`` and its exit code."""
    try:
        yield
    except WorkbenchError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(int(exc.exit_code)) from None
