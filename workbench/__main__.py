"""Start the ``workbench`` command: ``python -m workbench`` and the console script.

ctrl+c is handled from the first instructions. Until a command installs its own
handling (``workbench call`` cancels its call and prints the ``cancelled`` answer), a
SIGINT ends the command with exit code 4 (cancelled) and never a traceback: one that
lands while the modules are still being imported too. ``call`` then prints the same
``cancelled`` answer it prints for a later ctrl+c, in the form asked for.

This module imports only the standard library before it installs that handling.
"""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CANCELLED = 4
"""``ExitCode.CANCELLED`` (``workbench.errors`` is not imported before the handler is in)."""

_VALUED = frozenset({"--model", "--args", "-a", "--grant", "-g", "--answers"})
"""The options of the root and of ``call`` that take a value."""


def _call_form(argv: list[str]) -> str | None:
    """For a ``call`` command line, how its answer is printed (``json``, ``jsonl`` or
    ``plain``); None for any other command."""
    words = iter(argv)
    command = None
    flags: set[str] = set()
    for word in words:
        if word == "--":
            break
        if word in _VALUED:
            next(words, None)
        elif word.startswith("-"):
            flags.add(word)
        elif command is None:
            command = word
            if command != "call":
                return None
    if command != "call":
        return None
    return "jsonl" if "--jsonl" in flags else "json" if "--json" in flags else "plain"


def _say_cancelled(argv: list[str]) -> None:
    """Print what ``call`` prints when ctrl+c cancels it (nothing for other commands)."""
    import json

    form = _call_form(argv)
    error = {"kind": "cancelled", "message": "the call was cancelled (SIGINT)"}
    try:
        if form == "jsonl":
            print(json.dumps({"type": "outcome", "ok": False, "error": error}), flush=True)
        elif form == "json":
            print(json.dumps({"ok": False, "error": error}, indent=2), flush=True)
        elif form == "plain":
            print(f"error (cancelled): {error['message']}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # the output is gone: nothing left to say it on
        pass


def main() -> None:
    """Run the command of ``sys.argv``; exit with its code."""
    # Python's own handler (KeyboardInterrupt; asyncio.run turns it into a cancellation
    # of its task), also for a call started with SIGINT ignored, as the call's own
    # handling is; any other command started so keeps ignoring it.
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN or _call_form(sys.argv[1:]):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: _interrupted_again(unraisable, hook)
    try:
        if _call_form(sys.argv[1:]) and not {"--help", "-h"} & set(sys.argv[1:]):
            # The sandbox's zygote starts now, in parallel with the imports below (it
            # takes about as long as they do); the host's sandbox takes it. Started
            # before SIGINT is blocked: its processes must not inherit the mask.
            from workbench.sandbox.client import start_ahead

            start_ahead()
        # A ctrl+c while the CLI's modules are imported waits until they are: landing
        # inside an import, it may be ignored (in a callback, "Exception ignored" and a
        # traceback) or make the interpreter end by SIGINT instead of exit code 4
        # (inside code a compiled module runs as it loads, pydantic's core).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            from workbench.cli import main as run
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # one that came is handled here
        run()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ctrl+c while it is said
        _say_cancelled(sys.argv[1:])
        sys.exit(CANCELLED)
    finally:
        sys.unraisablehook = hook


def _interrupted_again(unraisable: Any, hook: Callable[[Any], object]) -> None:
    """``sys.unraisablehook`` while a command runs: a ctrl+c that landed where Python can
    only ignore it (a callback, a finalizer) is delivered again, at the next instruction
    that can be interrupted; anything else goes to ``hook`` (Python's report)."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    else:
        hook(unraisable)


if __name__ == "__main__":
    main()
