"""The CLI's one way to print: every line goes through ``workbench.text.visible``.

What commands print often comes from outside — a tool's result or error, a model's
reply, an extension's manifest, an MCP server's message — and a terminal obeys the
escape sequences in it. ``say`` makes each control, escape and bidi override visible
(``\\u001b``) instead, which inside a JSON string is the same value, so ``--json``
output stays exact JSON. Commands print with ``say`` and nothing else (a test holds
every module of the CLI and the headless writers to it); ``terminal`` wraps a stream
for code that writes to one.
"""

from __future__ import annotations

import codecs
import sys
from typing import TextIO

from workbench.text import SafeStream, visible


def say(text: object = "", *, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` (on stderr with ``err``), every unsafe code point made visible.

    Raises:
        OutputClosed: The reader of the stream is gone (``| head``): the command ends
            quietly with exit code 141 (``workbench.headless.pipes``).
    """
    try:
        _echo(visible(str(text)), err=err, nl=nl)
    except OSError as exc:
        from workbench.headless.pipes import is_closed_pipe, output_closed

        if not is_closed_pipe(exc):
            raise
        raise output_closed() from None


def _echo(text: str, *, err: bool, nl: bool) -> None:
    """``typer.echo`` of ``text`` (already safe: no escape sequence is left for it to
    strip), without importing typer for a text stream in a usable encoding: written to
    the stream of the moment, then flushed. Any other stream (none, bytes, ASCII) goes
    to ``typer.echo``, which knows how to write to it."""
    stream = sys.stderr if err else sys.stdout
    encoding = getattr(stream, "encoding", None)
    if stream is None or not isinstance(encoding, str) or _ascii(encoding):
        import typer

        typer.echo(text, err=err, nl=nl)
        return
    stream.write(f"{text}\n" if nl else text)
    stream.flush()


def _ascii(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name == "ascii"
    except LookupError:
        return True


class _Standard(SafeStream):
    """``sys.stdout`` or ``sys.stderr`` as it is at each write (the TUI and tests swap them)."""

    def __init__(self, name: str) -> None:  # not super().__init__: it would pin the stream
        self.name = name

    @property
    def stream(self) -> TextIO:  # type: ignore[override]
        return getattr(sys, self.name)


def terminal(err: bool = False) -> TextIO:
    """stdout (or stderr), wrapped so that whatever is written to it is made safe."""
    return _Standard("stderr" if err else "stdout")  # type: ignore[return-value]
