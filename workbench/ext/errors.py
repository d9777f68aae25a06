"""The errors of installing, checking and removing extensions.

Each one is a ``WorkbenchError``: it says what is wrong and where (the archive
member, the URL, the file), and carries the exit code a CLI command ends with.
This module imports nothing of ours but ``workbench.errors``.
"""

from __future__ import annotations

from workbench.errors import ExitCode, WorkbenchError


class ExtensionError(WorkbenchError):
    """An extension cannot be installed, updated, removed or trusted."""


class SourceError(ExtensionError):
    """A source string that names no folder, archive or npm package."""

    exit_code = ExitCode.USAGE


class ArchiveError(ExtensionError):
    """An archive that is unsafe or too large to unpack; nothing of it was kept."""


class RegistryError(ExtensionError):
    """The npm registry could not be reached or gave an answer that cannot be used."""


class IntegrityError(RegistryError):
    """A downloaded package does not match the registry's own checksum."""


class SignatureError(ExtensionError):
    """The built-in extension's files do not match their signature."""


class InstallDeclined(ExtensionError):
    """The person said no; nothing was changed."""

    exit_code = ExitCode.CANCELLED
