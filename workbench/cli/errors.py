"""How a command ends on an error: one line on stderr saying what and where, and an exit code.

``reported()`` wraps a command body and turns a ``WorkbenchError`` into its message and
exit code. ``guarded()`` wraps the whole CLI: whatever escapes a command (a damaged store,
a full disk, an error of ours) becomes a clear message too, never a traceback; an
unexpected one is written, traceback and all, to a file under the home's ``logs/``,
whose path the message gives. Every such line goes out through ``say_error``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from workbench.cli.output import say
from workbench.errors import ExitCode, StoreError, WorkbenchError


def say_error(message: str) -> None:
    """Write ``error: MESSAGE`` to stderr: the one place an error line of the CLI is printed."""
    from workbench.headless.pipes import OutputClosed

    try:
        say(f"error: {message}", err=True)
    except (OSError, ValueError, OutputClosed):  # stderr closed or gone: nowhere left to say it
        pass


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Run a command body; a ``WorkbenchError`` becomes ``error: …`` and its exit code."""
    try:
        yield
    except WorkbenchError as exc:
        import typer

        raise typer.Exit(report(exc)) from None


def report(exc: WorkbenchError) -> int:
    """Say ``exc`` as ``error: …``; the exit code it ends its command with."""
    message, code = describe(exc) or (str(exc), exc.exit_code)
    say_error(message)
    return int(code)


def _store_path() -> str:
    try:
        from workbench.core.home_paths import home_paths

        return str(home_paths().db_path)
    except Exception:  # the home itself cannot be resolved: the message still stands
        return "the store"


def _home_disk_full() -> bool:
    """Whether the filesystem of the home has no room left (SQLite may only say "disk I/O
    error" when it cannot make its shared-memory file)."""
    try:
        from workbench.core.home_paths import home_paths

        root = home_paths().root
        stats = os.statvfs(root if root.exists() else root.parent)
    except Exception:
        return False
    return stats.f_bavail == 0


DAMAGED = ("database disk image is malformed", "file is not a database")
"""What SQLite says of a file whose pages are not what it wrote."""


def _damaged(path: str, said: str) -> str:
    return (f"{path}: the store is damaged ({said}); it was left as it is; restore it "
            f"from a copy, or recover what it holds with `sqlite3 {path} .recover`")


def describe(exc: BaseException) -> tuple[str, ExitCode] | None:
    """The message and exit code for an error a person can act on, or None for a fault of ours.

    A damaged store, a full disk, a file that cannot be read or written, and input
    nested past what can be read are the person's to fix; the message names where.
    """
    if isinstance(exc, WorkbenchError):
        if isinstance(exc, StoreError) and _home_disk_full():
            return f"{exc}; the disk holding it is full: free some space", exc.exit_code
        if isinstance(exc, StoreError) and any(words in str(exc) for words in DAMAGED):
            return f"{_damaged(_store_path(), str(exc))}", exc.exit_code
        return str(exc), exc.exit_code
    from workbench.core.home_paths import is_disk_full  # the error path alone needs the store

    if is_disk_full(exc) or (isinstance(exc, sqlite3.OperationalError) and _home_disk_full()):
        where = getattr(exc, "filename2", None) or getattr(exc, "filename", None) or _store_path()
        return (f"{where}: the disk is full ({exc}); what this command was writing was not "
                "saved; free some space and run it again"), ExitCode.ERROR
    if isinstance(exc, sqlite3.OperationalError):
        return (f"{_store_path()}: the store could not be used ({exc}); nothing more was "
                "written"), ExitCode.ERROR
    if isinstance(exc, sqlite3.DatabaseError):
        return _damaged(_store_path(), str(exc)), ExitCode.ERROR
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}", ExitCode.ERROR
    if isinstance(exc, RecursionError):
        return ("the input is nested too deeply to be read (a list or object inside "
                "hundreds of others)"), ExitCode.USAGE
    return None


def write_crash_log(exc: BaseException) -> Path | None:
    """Write ``exc``'s traceback to a new file under the home's ``logs/``; its path, or None."""
    text = "".join(traceback.format_exception(exc))
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    folders: list[Path] = []
    with contextlib.suppress(Exception):
        from workbench.core.home_paths import home_paths

        folders.append(home_paths().logs_dir)
    import tempfile

    folders.append(Path(tempfile.gettempdir()))
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"workbench-error-{stamp}-{id(exc) & 0xffff:04x}.log"
            path.write_text(f"workbench {' '.join(sys.argv[1:])}\n\n{text}",
                            encoding="utf-8", errors="backslashreplace")
            return path
        except OSError:
            continue
    return None


def _escaped_bytes(text: str) -> bool:
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


def check_arguments(argv: list[str]) -> None:
    """Refuse an argument that is not UTF-8 text (Python holds its bytes as lone
    surrogates, which no store, config file or model can take), naming it.

    Raises:
        WorkbenchError: (exit code 2) naming the argument by its position.
    """
    for position, argument in enumerate(argv, start=1):
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            raw = argument.encode("utf-8", "surrogateescape") if _escaped_bytes(argument) else \
                argument.encode("utf-8", "backslashreplace")
            shown = raw.decode("utf-8", "backslashreplace")
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise WorkbenchError(f"argument {position} ({shown}) is not UTF-8 text",
                                 exit_code=ExitCode.USAGE) from None


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """Run the whole CLI: no exception leaves as a traceback (see the module docstring).

    Raises:
        SystemExit: with the error's exit code (``ExitCode.INTERNAL`` for a fault of ours).
    """
    try:
        yield
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        from workbench.headless.pipes import is_closed_pipe, output_closed

        if is_closed_pipe(exc):
            raise output_closed() from None
        known = describe(exc)
        if known is not None:
            say_error(known[0])
            raise SystemExit(int(known[1])) from None
        log = write_crash_log(exc)
        first = str(exc).splitlines()[0][:300] if str(exc) else ""
        detail = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        where = f"; the details are in {log}" if log else ""
        say_error(f"workbench failed unexpectedly ({detail}){where}")
        raise SystemExit(int(ExitCode.INTERNAL)) from None
