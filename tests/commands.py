"""Run the ``workbench`` command from a test, as a person's shell would, and see what it did.

``workbench(*args)`` runs the real entry point, ``workbench.__main__.main`` (ctrl+c
handled from its start, the argument check, the guard that turns every error into one line and an exit code, the typer
app), inside the test's process through typer's ``CliRunner``: stdin, stdout and
stderr are pipes of its own (not terminals, as under ``subprocess.run``), argv, the
environment and the current folder are those a separate run would get, and it
returns the ``subprocess.CompletedProcess`` that ``subprocess.run`` would. What a run
may leave changed in the process is put back after it: the environment, the current
folder, signal handlers, logging handlers and the asyncio loop; what it registered with
``atexit`` runs when it ends, as at the exit of its interpreter. The interpreter and
our imports are paid once per test process instead of once per command.

``process=True`` runs ``python -m workbench`` as a real process instead, for a test
whose point is a process: signals, a closed pipe, kill -9, a daemon, ctrl+c, what a
fresh interpreter imports or prints before the entry point runs. A test inside a
running asyncio loop gets a real process too (a command runs its own loop).

Every run (either way) is checked for a Python traceback in its output, which no
input may ever cause; ``tracebacks=True`` lets a test see one.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from typing import IO, Any

COMMAND = (sys.executable, "-m", "workbench")
"""The command a real process runs (the package's ``__main__``, as the console script)."""

_SIGNALS = [signum for signum in signal.valid_signals()
            if signum not in (signal.SIGKILL, signal.SIGSTOP)]


def workbench(*args: str, env: Mapping[str, str | None] | None = None, input: str | None = None,
              stdin: int | IO[Any] | None = subprocess.DEVNULL, cwd: str | os.PathLike[str] | None = None,
              timeout: float = 180, process: bool = False,
              tracebacks: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``workbench ARGS…`` and return its exit code, stdout and stderr.

    Args:
        args: The command line after ``workbench``.
        env: Variables set (or, with None, unset) on top of this process's environment.
        input: Text fed to its stdin (else stdin is empty, as ``/dev/null``).
        stdin: For a real process, its stdin (``subprocess.DEVNULL`` by default).
        cwd: The folder it runs in (else the test's current folder).
        timeout: For a real process, how long it may take (pytest's own time-out
            bounds a run in this process).
        process: Run a real ``python -m workbench`` process.
        tracebacks: Allow a Python traceback in the output.
    """
    in_loop = True
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        in_loop = False
    if process or in_loop or (stdin not in (None, subprocess.DEVNULL) and input is None):
        done = _spawned(args, env, input, stdin, cwd, timeout)
    else:
        done = _in_process(args, env, input, cwd)
    if not tracebacks:
        assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done


def _spawned(args: tuple[str, ...], env: Mapping[str, str | None] | None, input: str | None,
             stdin: int | IO[Any] | None, cwd: str | os.PathLike[str] | None,
             timeout: float) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, env=environment,
                          cwd=cwd, timeout=timeout, **({"input": input} if input is not None
                                                       else {"stdin": stdin}))


def _in_process(args: tuple[str, ...], env: Mapping[str, str | None] | None, input: str | None,
                cwd: str | os.PathLike[str] | None) -> subprocess.CompletedProcess[str]:
    from click import termui
    from typer.testing import CliRunner

    from workbench.__main__ import main

    _imported()
    runner = CliRunner()
    with _restored(), runner.isolation(input=input or "", env=dict(env or {})) as (out, err, _):
        if cwd is not None:
            os.chdir(cwd)
        # A real run's prompt reads stdin without echoing what it read (CliRunner echoes it).
        termui.visible_prompt_func = input_line
        sys.argv = ["workbench", *args]
        with _at_exit():
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = _exit_status(exc.code)
            except BaseException:  # what the interpreter prints for an exception no one caught
                traceback.print_exc()
                code = 1
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue() if err is not None else b""
    return subprocess.CompletedProcess([*COMMAND, *args], code, _text(stdout), _text(stderr))


@contextlib.contextmanager
def _at_exit() -> Iterator[None]:
    """Run what the command registers with ``atexit`` when it ends, as its interpreter's
    exit would (a host never closed kills the MCP servers it started that way)."""
    import atexit

    held: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []
    register, unregister = atexit.register, atexit.unregister

    def hold(func: Any, *args: Any, **kwargs: Any) -> Any:
        held.append((func, args, kwargs))
        return func

    def drop(func: Any) -> None:
        held[:] = [entry for entry in held if entry[0] != func]

    atexit.register, atexit.unregister = hold, drop  # type: ignore[assignment]
    try:
        yield
    finally:
        atexit.register, atexit.unregister = register, unregister  # type: ignore[assignment]
        for func, args, kwargs in reversed(held):
            try:
                func(*args, **kwargs)
            except Exception:  # the interpreter says so on stderr and goes on
                print("Exception ignored in atexit callback", file=sys.stderr)
                traceback.print_exc()


def _imported() -> None:
    """Import what commands import before a run swaps the standard streams: a module
    first imported inside a run would keep that run's streams where it binds them at
    import (``mcp.client.stdio``'s ``errlog=sys.stderr``, which the tests' MCP clients use)."""
    import mcp.client.stdio  # noqa: F401

    import workbench.core.host  # noqa: F401
    import workbench.headless.run  # noqa: F401


def input_line(prompt: str = "") -> str:
    """``input()`` as it behaves on a stdin that is not a terminal."""
    return input(prompt)


def _exit_status(code: object) -> int:
    """The exit status Python gives ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _text(raw: bytes) -> str:
    """Output decoded as ``subprocess.run(text=True)`` does (universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="strict").read()


@contextlib.contextmanager
def _restored() -> Iterator[None]:
    """Put back what a command may change in the process it runs in."""
    environment = dict(os.environ)
    folder = os.getcwd()
    argv = list(sys.argv)
    handlers = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    last_resort = logging.lastResort
    loggers = [logging.getLogger()] + [logger for logger in logging.Logger.manager.loggerDict.values()
                                       if isinstance(logger, logging.Logger)]
    held = {id(logger): (list(logger.handlers), logger.level) for logger in loggers}
    try:
        yield
    finally:
        sys.argv = argv
        os.chdir(folder)
        os.environ.clear()
        os.environ.update(environment)
        for signum, handler in handlers.items():
            if handler is not None and signal.getsignal(signum) is not handler:
                signal.signal(signum, handler)
        logging.lastResort = last_resort
        for logger in [logging.getLogger()] + list(logging.Logger.manager.loggerDict.values()):
            if not isinstance(logger, logging.Logger):
                continue
            handlers_then, level = held.get(id(logger), ([], logging.NOTSET))
            for handler in list(logger.handlers):
                if handler not in handlers_then:
                    logger.removeHandler(handler)
                    handler.close()
            logger.setLevel(level)
        asyncio.set_event_loop(None)
