"""Finding extension folders for diagnostics, without running any of their code.

Two places hold extensions: the global folder in the home (``<home>/extensions``)
and a project's own ``.workbench/extensions``. Each folder found is validated
(manifest only) and reported with its scope and whether its code may run: a global
extension when it is approved and unchanged, a project-local one only when the
project is trusted (its ``.workbench/config.toml`` trusted in its current version,
``workbench trust``) *and* a person consented to that extension's files as they are
now (:mod:`workbench.ext.project`), and its name is not an installed extension's. A
project that was never trusted, or whose config changed since, runs none of its
extensions' code; their manifests are still reported.

This module imports nothing of ours but the config and manifest packages and
``workbench.ext``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.config.home import PROJECT_DIR_NAME, Home, project_config_path
from workbench.config.trust import check_trust
from workbench.errors import ConfigError
from workbench.ext.project import project_identity
from workbench.manifest.models import Manifest
from workbench.manifest.problems import Problem
from workbench.manifest.validate import CheckedTexts, validate_extension

PROJECT_EXTENSIONS = Path(PROJECT_DIR_NAME) / "extensions"
"""Where a project keeps its own extensions, relative to the project folder."""

Scope = Literal["global", "project"]


@dataclass(frozen=True)
class DiscoveredExtension:
    """One extension folder found, as diagnostics report it.

    Attributes:
        name: The manifest's name, else the folder's name.
        folder: The extension folder.
        scope: ``global`` (the home) or ``project`` (``.workbench/extensions``).
        valid: Whether its manifest and files validate.
        errors: What validation found wrong.
        warnings: What validation found worth a look.
        manifest: The manifest, when valid.
        trusted: For a project extension, whether the project is trusted; None for global.
        runnable: Whether its code may run here.
        reason: Why it may not run, for a person; empty when it may.
    """

    name: str
    folder: Path
    scope: Scope
    valid: bool
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    manifest: Manifest | None
    trusted: bool | None
    runnable: bool
    reason: str
    identity: str = ""
    """What its private resources are kept under (``project:FOLDER`` for a project's)."""
    conflict: str = ""
    """The installed extension whose name it takes, if any (then it is not loaded)."""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "folder": str(self.folder), "scope": self.scope,
                "valid": self.valid, "errors": [p.to_json() for p in self.errors],
                "warnings": [p.to_json() for p in self.warnings], "trusted": self.trusted,
                "runnable": self.runnable, "reason": self.reason,
                "identity": self.identity or self.name, "conflict": self.conflict}


def extension_folders(parent: Path) -> list[Path]:
    """The folders directly under ``parent``, by name, leaving out hidden ones."""
    if not parent.is_dir():
        return []
    return sorted(entry for entry in parent.iterdir()
                  if entry.is_dir() and not entry.is_symlink() and not entry.name.startswith("."))


def project_trusted(home: Home, project_dir: Path) -> tuple[bool, str]:
    """Whether a project is trusted in its current version, and why not.

    Returns:
        ``(True, "")``, or ``(False, reason)``.
    """
    config = project_config_path(project_dir)
    try:
        data = config.read_bytes()
    except FileNotFoundError:
        return False, (f"the project is not trusted (it has no {PROJECT_DIR_NAME}/config.toml "
                       "to trust)")
    except OSError as exc:
        return False, f"the project config cannot be read: {exc.strerror or exc}"
    try:
        check = check_trust(home, project_dir, data)
    except ConfigError as exc:
        return False, f"the trust record cannot be read: {exc}"
    if check.state == "trusted":
        return True, ""
    if check.state == "changed":
        return False, ("the project config changed since it was trusted; run "
                       "`workbench trust` in the project to run its extensions")
    return False, "the project is not trusted; run `workbench trust` in the project"


def _describe(errors: tuple[Problem, ...]) -> str:
    first = errors[0].describe()
    return f"invalid: {first}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


def discover(home: Home, project_dir: Path | None,
             global_state: Callable[[str, Path], tuple[bool, str]], *,
             include_global: bool = True,
             project_state: Callable[[Path], tuple[bool, str]] | None = None,
             installed: Callable[[str], bool] = lambda name: False,
             checked: CheckedTexts | None = None) -> list[DiscoveredExtension]:
    """Find the global and project-local extensions and check them without running them.

    Args:
        home: The workbench home.
        project_dir: The project folder, or None outside a project.
        global_state: Says whether an installed (global) extension may run and why
            not: ``(runnable, reason)`` for a name and folder.
        include_global: False to look at the project's folder alone (the installed
            ones are known already, e.g. from ``ExtensionManager.list``).
        project_state: Says whether a person consented to a project extension's
            files as they are now: ``(consented, reason)`` for its folder. None
            consents to none.
        installed: Says whether a name is an installed extension's (a project
            extension taking it is not loaded).
        checked: The manifest texts checked already (``ext/manifest_checks.py``): a
            text it knows skips its parameters' JSON Schema check, and one that passes
            it is remembered, as for an installed extension.

    Returns:
        Global extensions first, then the project's, each by name.
    """
    found: list[DiscoveredExtension] = []
    for folder in extension_folders(home.extensions_dir) if include_global else []:
        report = validate_extension(folder, checked=checked)
        errors, warnings = tuple(report.errors), tuple(report.warnings)
        name = report.manifest.name if report.manifest else folder.name
        if report.valid:
            runnable, reason = global_state(folder.name, folder)
        else:
            runnable, reason = False, _describe(errors)
        found.append(DiscoveredExtension(name, folder, "global", report.valid, errors,
                                         warnings, report.manifest, None, runnable, reason))
    if project_dir is not None:
        project_dir = project_dir.resolve()
        folders = extension_folders(project_dir / PROJECT_EXTENSIONS)
        trusted, why = project_trusted(home, project_dir) if folders else (False, "")
        for folder in folders:
            report = validate_extension(folder, checked=checked)
            errors, warnings = tuple(report.errors), tuple(report.warnings)
            name = report.manifest.name if report.manifest else folder.name
            conflict = name if report.valid and installed(name) else ""
            if not report.valid:
                runnable, reason = False, _describe(errors)
            elif conflict:
                runnable, reason = False, (
                    f"name conflict: the installed extension {name!r} has this name; a "
                    "project extension never takes an installed one's name, so it is not "
                    "loaded (rename it in its loca.json)")
            elif not trusted:
                runnable, reason = False, why
            elif project_state is None:
                runnable, reason = False, "project extensions run only once consented to"
            else:
                runnable, reason = project_state(folder)
            found.append(DiscoveredExtension(name, folder, "project", report.valid, errors,
                                             warnings, report.manifest, trusted, runnable,
                                             reason, identity=project_identity(folder),
                                             conflict=conflict))
    return found
