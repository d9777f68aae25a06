"""Start the ``workbench`` command: ``python -m workbench`` and the console script.

ctrl+c is handled from the first instructions. Until a command installs its own
handling (``workbench call`` cancels its call and prints the ``cancelled`` answer), a
SIGINT ends the command with exit code 4 (cancelled) and never a traceback: one that
lands while the modules are still being imported too. ``call`` then prints the same
``cancelled`` answer it prints for a later ctrl+c, in the form asked for.

This module imports only the standard library before it installs that handling.
"""

from __future__ import annotations

import functools
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


def _imports_hold_sigint() -> None:
    """From now on, a ctrl+c that lands while this thread runs an ``import`` statement
    is held until the statement ends (SIGINT blocked for it, a pending one delivered
    as it returns). Raised inside a compiled module's initialisation (pydantic's core,
    SQLite's), a ``KeyboardInterrupt`` breaks the module (a panic, "failed to import") or
    ends the interpreter by SIGINT with nothing said; just after it, it is the ordinary
    ctrl+c every command handles. Only the thread that starts the command is held (the
    one Python runs signal handlers in)."""
    import builtins
    import threading

    real = builtins.__import__
    if getattr(real, "holds_sigint", False):  # already in place (a command run in-process again)
        return
    main_thread = threading.main_thread()
    depth = [0]
    mask = {signal.SIGINT}

    def held(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not main_thread:
            return real(*args, **kwargs)
        if depth[0] == 0:
            signal.pthread_sigmask(signal.SIG_BLOCK, mask)
        depth[0] += 1
        try:
            return real(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, mask)

    held.holds_sigint = True  # type: ignore[attr-defined]
    builtins.__import__ = held


def main() -> None:
    """Run the command of ``sys.argv``; exit with its code."""
    # Python's own handler (KeyboardInterrupt; asyncio.run turns it into a cancellation
    # of its task), also for a call started with SIGINT ignored, as the call's own
    # handling is; any other command started so keeps ignoring it.
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN or _call_form(sys.argv[1:]):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    hook = sys.unraisablehook
    sys.unraisablehook = functools.partial(_interrupted_again, hook=hook)  # no frame of its own
    try:
        if _call_form(sys.argv[1:]) and not {"--help", "-h"} & set(sys.argv[1:]):
            # The sandbox's zygote starts now, in parallel with the imports below (it
            # takes about as long as they do); the host's sandbox takes it. Started
            # before SIGINT is blocked: its processes must not inherit the mask.
            from workbench.sandbox.client import start_ahead

            start_ahead()
        # A ctrl+c while modules are imported waits until they are (here the CLI's, later
        # the ones a command imports when it needs them): landing inside an import, it
        # may be ignored (in a callback, "Exception ignored" and a traceback) or make the
        # interpreter end by SIGINT instead of exit code 4 (inside code a compiled module
        # runs as it loads, pydantic's core).
        _imports_hold_sigint()
        from workbench.cli import main as run  # a ctrl+c that came meanwhile is handled here
        run()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ctrl+c while it is said
        _forget_interrupt_in_eval()
        _say_cancelled(sys.argv[1:])
        sys.exit(CANCELLED)
    finally:
        sys.unraisablehook = hook


def _forget_interrupt_in_eval() -> None:
    """Keep exit code 4 for a ctrl+c that landed inside ``eval`` or ``exec`` of a string
    (typer evaluates each command's annotations so, dataclasses ``exec`` their methods).

    CPython then marks the interpreter as ended by an unhandled ``KeyboardInterrupt``
    although the interrupt was caught, and at exit kills itself by SIGINT instead of
    exiting with the code asked for (status -2, nothing said). In 3.11 the mark is a
    global the interpreter exports, cleared here; from 3.12 it lives in the runtime's
    own state, out of reach, and such an exit stays -2."""
    try:
        import ctypes

        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (ImportError, ValueError, AttributeError, OSError):
        pass


def _interrupted_again(unraisable: Any, hook: Callable[[Any], object]) -> None:
    """``sys.unraisablehook`` while a command runs: a ctrl+c that landed where Python can
    only ignore it (a callback, a finalizer) is delivered again once this hook has
    returned, at the next instruction that can be interrupted; anything else goes to
    ``hook`` (Python's report).

    Not from inside the hook: Python runs a signal's handler at the first check after a
    call returns, which would still be in this frame (the ``KeyboardInterrupt`` raised
    here is then reported as "Exception ignored in sys.unraisablehook"). A thread waits
    until the main thread has left this frame and trips the interrupt then."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _interrupt_after(sys._getframe().f_code)
    else:
        hook(unraisable)


def _interrupt_after(code: Any) -> None:
    """Interrupt the main thread as soon as no frame of ``code`` is on its stack."""
    import _thread
    import threading
    import time

    main = threading.main_thread().ident

    def inside() -> bool:
        frame = sys._current_frames().get(main or 0)
        while frame is not None and frame.f_code is not code:
            frame = frame.f_back
        return frame is not None

    def deliver() -> None:
        deadline = time.monotonic() + 5.0
        while inside() and time.monotonic() < deadline:
            time.sleep(0.001)
        _thread.interrupt_main()

    try:
        threading.Thread(target=deliver, name="interrupt-again", daemon=True).start()
    except RuntimeError:  # the interpreter is ending: nothing left to interrupt
        pass

if __name__ == "__main__":
    main()
