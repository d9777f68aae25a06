"""Checks that need no host and run nothing of an extension's: what the sandbox can
enforce on this machine (``workbench doctor``) and an extension's manifest and files
(``workbench ext validate``).

Part of the core's public API. The rows returned are the sandbox's and the manifest's
own report shapes (``Report`` with its ``Check`` rows; ``ValidationReport`` with its
problems), each with ``to_json``; both packages are imported when a check runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.manifest.problems import ValidationReport
    from workbench.sandbox.doctor import Report

__all__ = ["sandbox_report", "validate_extension"]


def sandbox_report() -> Report:
    """Try every sandbox layer here; ``ready`` says whether tools can run sandboxed."""
    from workbench.sandbox.doctor import probe

    return probe()


def validate_extension(path: Path) -> tuple[ValidationReport, Path]:
    """Check the extension at ``path`` (its folder, or its ``loca.json``) without running
    any of it; the report, and the manifest it read (``path`` when none was found)."""
    from workbench.manifest.validate import find_manifest
    from workbench.manifest.validate import validate_extension as validate

    report = validate(path)
    return report, find_manifest(path) or path
