"""Fetching a source into a staging folder: copy a folder, unpack an archive, or download a
package from the registry (checked before it is unpacked) and unpack it.

This module imports nothing of ours but ``workbench.ext`` and the manifest's file check.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench import __version__
from workbench.ext.archive import ArchiveLimits, extract_archive
from workbench.ext.errors import ExtensionError
from workbench.ext.plan import DEFAULT_VERSION
from workbench.ext.registry import RegistryClient
from workbench.ext.sources import Source
from workbench.ext.staging import StagingArea, copy_folder, prune_runtime_files, remove_tree


def _check_folder(folder: Path, limits: ArchiveLimits) -> None:
    """Refuse a folder for every link, special file or cap ``ext validate`` names, with
    the same check (``manifest.checks.check_files``), before copying any of it.

    Raises:
        ExtensionError: Listing each problem.
    """
    from workbench.manifest.checks import check_files
    from workbench.manifest.problems import Collector

    found = Collector()
    check_files(folder, found, max_bytes=limits.max_total_bytes, max_files=limits.max_files,
                max_file_bytes=limits.max_file_bytes)
    if found.errors:
        raise ExtensionError("the extension is not valid:\n  " + "\n  ".join(
            problem.describe() for problem in found.errors), where=str(folder))


def fetch(source: Source, staging: StagingArea, registry: RegistryClient,
          limits: ArchiveLimits) -> tuple[Path, str]:
    """Fetch and unpack a source into a new staging folder.

    Args:
        source: What to fetch.
        staging: Where to make the staging folder.
        registry: The npm registry, for ``npm:`` sources.
        limits: The caps on the extension's files.

    Returns:
        The staging folder, whose ``pkg`` folder holds the extension's files, and
        the version to use when the package names none (the registry's version for
        an npm package).

    Raises:
        ExtensionError: The source cannot be fetched, fails its checksum, or is
            unsafe or too large; the staging folder is deleted.
    """
    stage = staging.new()
    pkg = stage / "pkg"
    fallback = DEFAULT_VERSION
    try:
        if source.kind in ("folder", "addon"):
            assert source.path is not None
            _check_folder(source.path, limits)
            copy_folder(source.path, pkg, limits)
            # A shipped add-on is of the workbench it ships with.
            return stage, (__version__ if source.kind == "addon" else fallback)
        if source.kind == "archive":
            assert source.path is not None
            archive = source.path
        else:
            assert source.package is not None
            version = registry.resolve(source.package, source.spec)
            fallback = version.version
            archive = registry.download(version, stage / "package.tgz")
        root = extract_archive(archive, stage / "unpacked", limits)
        os.rename(root, pkg)
        remove_tree(stage / "unpacked")
        remove_tree(stage / "package.tgz")
        prune_runtime_files(pkg)
    except BaseException:
        staging.discard(stage)
        raise
    return stage, fallback
