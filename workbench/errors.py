"""Error types and the stable exit codes of the CLI; a leaf that imports nothing of ours."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of every ``workbench`` command; documented in the README."""

    OK = 0
    ERROR = 1
    USAGE = 2
    PERMISSION_DENIED = 3
    CANCELLED = 4
    STORE_TOO_NEW = 5
    TOOL_REFUSED = 6
    """``workbench run``: the turn ended, but a tool the model called was refused a
    permission in it (not with ``--allow-refusals``)."""
    INTERNAL = 70
    """A fault inside workbench itself; the message names the log file with its details."""
    BUSY = 75
    """The session is in use: another process is running a turn in it (EX_TEMPFAIL)."""
    OUTPUT_CLOSED = 141
    """The reader of the output closed it early (``| head``): 128 + SIGPIPE, as a shell
    reports a process that signal ended; the work under way was stopped and settled."""


class WorkbenchError(Exception):
    """An error meant for a person: what is wrong and where.

    Args:
        message: What is wrong, in a sentence.
        where: The file (and line, pointer or key) it is about, if any.
        exit_code: The exit code a CLI command ends with.
    """

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, *, where: str | None = None,
                 exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class ConfigError(WorkbenchError):
    """A config file that cannot be read or a key or value that is not valid."""


class StoreError(WorkbenchError):
    """The store cannot be opened or used."""


class StoreTooNewError(StoreError):
    """The store was written by a newer version of workbench; it is left untouched."""

    exit_code = ExitCode.STORE_TOO_NEW


class SessionBusyError(WorkbenchError):
    """Another turn holds the session; ``holder`` is its lease (pid, what holds it, since)."""

    exit_code = ExitCode.BUSY

    def __init__(self, message: str, *, holder: dict | None = None) -> None:
        super().__init__(message)
        self.holder = holder or {}


class ManifestError(WorkbenchError):
    """An extension manifest that is not valid."""


class ModelError(WorkbenchError):
    """A model provider failed or was misconfigured."""


class ToolError(WorkbenchError):
    """A tool call failed; ``kind`` classifies it (``not_found``, ``invalid_arguments``,
    ``permission``, ``tool``, ``timeout``, ``cancelled``, ``output_too_large``)."""

    def __init__(self, kind: str, message: str, **extra) -> None:
        super().__init__(message,
                         exit_code=ExitCode.PERMISSION_DENIED if kind == "permission" else None)
        self.kind = kind
        self.extra = extra

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message, **self.extra}


class UnknownSettingError(ConfigError):
    """A setting name that workbench does not know, given on the command line."""

    exit_code = ExitCode.USAGE


class StoreCorruptError(StoreError):
    """The store file is not a SQLite database or cannot be read as one; it is left untouched."""
