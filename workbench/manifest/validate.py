"""Validate an extension folder without running any of its code.

:func:`validate_extension` reads `loca.json`, checks it against the models, then
checks what the models cannot see: tool names unique, each tool's `parameters` a
valid JSON Schema of an object, each `function` exported by the entry module (found
statically), each shipped memory inside the folder and of the right shape, and the
folder within its size cap. Every problem is named by a JSON pointer into the
manifest and, where the manifest has it, a line and column. :func:`load_manifest` is
the strict one-call form for code that only needs a valid manifest.

This module imports nothing of workbench but `errors` and the manifest package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from workbench.errors import ManifestError
from workbench.manifest.checks import check_content, check_files
from workbench.manifest.locate import locate
from workbench.manifest.models import Manifest
from workbench.manifest.problems import Collector, Problem, ValidationReport, problems_from_pydantic

MANIFEST_NAMES: tuple[str, ...] = ("loca.json", "tomat.json")
"""File names a manifest may have in an extension folder, in the order looked for."""

MAX_MANIFEST_BYTES = 1024 * 1024
"""The largest manifest read."""

MAX_FOLDER_BYTES = 50 * 1024 * 1024
"""The largest extension folder accepted, all files together."""

MAX_FOLDER_FILES = 20_000
"""The most files and folders an extension folder may hold."""

MAX_FILE_BYTES = 50 * 1024 * 1024
"""The largest one file of an extension may be."""


class CheckedTexts(Protocol):
    """Which manifest texts had their tools' ``parameters`` checked already, with
    nothing found (``workbench.ext.manifest_checks`` keeps them, sealed, in the store).

    Only that check is skipped for a text it knows: it depends on the text alone, and
    it is the one that needs ``jsonschema``. Everything else is checked at every
    validation, the files and the models included."""

    def known(self, text: bytes) -> bool:
        """Whether ``text`` (the manifest's bytes as read) passed the check before."""
        ...

    def remember(self, text: bytes) -> None:
        """Record that ``text`` passed it, nothing found, in a valid manifest."""
        ...


_UNREADABLE = object()
"""What ``_parse`` returns for a manifest it could not read (a manifest may be ``null``)."""


def find_manifest(path: Path) -> Path | None:
    """Return the manifest file `path` names: the file itself, or one inside the folder."""
    if path.is_file():
        return path
    return next((path / name for name in MANIFEST_NAMES if (path / name).is_file()), None)


def _parse(manifest_path: Path, found: Collector, max_bytes: int) -> tuple[Any, bytes]:
    """Read and parse the manifest: its data and its bytes as read; report why not and
    return ``_UNREADABLE`` for the data when it cannot be."""
    raw = b""
    try:
        size = manifest_path.stat().st_size
        if size > max_bytes:
            found.error("", f"{manifest_path.name} is {size} bytes; the limit is {max_bytes}",
                        locate_it=False)
            return _UNREADABLE, raw
        raw = manifest_path.read_bytes()
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        found.error("", f"{manifest_path.name} cannot be read: {exc.strerror or exc}",
                    locate_it=False)
        return _UNREADABLE, raw
    except UnicodeDecodeError as exc:
        found.error("", f"{manifest_path.name} is not UTF-8 text (byte {exc.start})",
                    locate_it=False)
        return _UNREADABLE, raw

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")

    try:
        data = json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as exc:
        found.errors.append(Problem("", f"not valid JSON: {exc.msg}", exc.lineno, exc.colno))
        return _UNREADABLE, raw
    except ValueError as exc:
        found.error("", f"not valid JSON: {exc}", locate_it=False)
        return _UNREADABLE, raw
    except RecursionError:
        found.error("", "not valid JSON: nested too deeply", locate_it=False)
        return _UNREADABLE, raw
    found.locations = locate(text)
    for pointer, (line, column) in found.locations.duplicates:
        key = pointer.rsplit("/", 1)[-1]
        found.errors.append(Problem(pointer, f"the key '{key}' appears more than once in "
                                    "this object", line, column))
    return data, raw


def _json_kind(data: Any) -> str:
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "true or false"
    if isinstance(data, (int, float)):
        return "a number"
    if isinstance(data, str):
        return "a string"
    return "a list"


def validate_extension(path: Path, *, max_manifest_bytes: int = MAX_MANIFEST_BYTES,
                       max_folder_bytes: int = MAX_FOLDER_BYTES,
                       checked: CheckedTexts | None = None) -> ValidationReport:
    """Validate an extension without running any of its code.

    Args:
        path: The extension folder (holding `loca.json`) or the manifest file itself.
        max_manifest_bytes: The largest manifest read.
        max_folder_bytes: The largest extension folder accepted.
        checked: The manifest texts whose tools' parameters were checked already (the
            check is then skipped for the text read, if it is one) and where a text
            that passes it now is recorded; None checks every time.

    Returns:
        The report: every error and warning, named by JSON pointer, and the parsed
        manifest when there are no errors.
    """
    found = Collector()
    path = Path(path)
    manifest_path = find_manifest(path)
    if manifest_path is None:
        what = "does not exist" if not path.exists() else f"holds no {MANIFEST_NAMES[0]}"
        found.error("", f"{path} {what}", locate_it=False)
        return found.report(None)
    folder = manifest_path.parent
    check_files(folder, found, max_bytes=max_folder_bytes, max_files=MAX_FOLDER_FILES,
                max_file_bytes=MAX_FILE_BYTES)
    data, raw = _parse(manifest_path, found, max_manifest_bytes)
    if data is _UNREADABLE:
        return found.report(None)
    if not isinstance(data, dict):
        found.error("", f"the manifest must be a JSON object, not {_json_kind(data)}",
                    locate_it=False)
        return found.report(None)

    manifest: Manifest | None = None
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        for problem in problems_from_pydantic(exc, data):
            found.error(problem.pointer, problem.message)
    known = checked is not None and checked.known(raw)
    clean = check_content(data, folder, found, parameters=not known)
    report = found.report(manifest)
    if checked is not None and clean and report.manifest is not None:
        checked.remember(raw)
    return report


def load_manifest(path: Path) -> Manifest:
    """Validate an extension and return its manifest.

    Args:
        path: The extension folder or its manifest file.

    Returns:
        The manifest.

    Raises:
        ManifestError: The extension has an error; the first one is named, with its
            pointer and line, and how many more there are.
    """
    report = validate_extension(path)
    if report.manifest is None:
        first = report.errors[0]
        more = f" (and {len(report.errors) - 1} more)" if len(report.errors) > 1 else ""
        where = str(find_manifest(Path(path)) or path)
        if first.line is not None:
            where += f":{first.line}:{first.column}"
        if first.pointer:
            where += f" {first.pointer}"
        raise ManifestError(first.message + more, where=where)
    return report.manifest
