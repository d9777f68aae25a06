"""Which names an entry module exports, found without running it.

Validating an extension must not run its code, so a tool's `function` is looked up
statically: Python modules by compiling them (never running them) and reading the
names their top-level code stores, TypeScript and JavaScript modules through
regular expressions over the source with its comments blanked out. Relative
`export * from "./x.ts"` re-exports are followed inside the extension folder, to a
depth cap. When something cannot be followed (a remote module, a dynamic
`__getattr__`), the scan says it is incomplete, so a missing name becomes a warning
rather than an error. This module imports nothing of workbench but `manifest.paths`.
"""

from __future__ import annotations

import dis
import re
from dataclasses import dataclass, field
from pathlib import Path

from workbench.manifest.paths import runtime_for

MAX_DEPTH = 8
"""How many relative `export * from` hops are followed from the entry module."""

MAX_MODULE_BYTES = 4 * 1024 * 1024
"""Modules larger than this are not scanned."""

_IDENT = r"[A-Za-z_$][\w$]*"
_DECLARATION = re.compile(
    rf"^[ \t]*export\s+(?:(?:async\s+)?function\s*\*?\s*|(?:abstract\s+)?class\s+"
    rf"|(?:const|let|var|using)\s+)({_IDENT})", re.MULTILINE)
_DESTRUCTURED = re.compile(r"^[ \t]*export\s+(?:const|let|var)\s+[{\[]([^}\]]*)[}\]]", re.MULTILINE)
_LIST = re.compile(
    r"""^[ \t]*export\s*(type\s*)?\{([^}]*)\}(?:\s*from\s*(["'])([^"'\n]+)\3)?""", re.MULTILINE)
_STAR = re.compile(
    rf"""^[ \t]*export\s*\*\s*(?:as\s+({_IDENT})\s*)?from\s*(["'])([^"'\n]+)\2""", re.MULTILINE)


@dataclass
class ExportScan:
    """The names a module exports, as far as a static reading can tell.

    Attributes:
        names: The exported names found.
        unresolved: Why the list may be incomplete, one sentence per reason; empty
            when every re-export was followed.
        error: Why the module could not be read at all (a syntax error), or `None`.
    """

    names: set[str] = field(default_factory=set)
    unresolved: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def complete(self) -> bool:
        """True when a name missing from `names` is surely not exported."""
        return not self.unresolved and self.error is None


def blank_comments(source: str) -> str:
    """Return JavaScript source with its comments replaced by spaces, newlines kept.

    String and template literals are skipped so that `"https://…"` is not taken for a
    comment. Regular-expression literals are not recognised; a quote inside one can at
    worst leave a comment in place.
    """
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        char = source[i]
        pair = source[i:i + 2]
        if pair == "//":
            end = source.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif pair == "/*":
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", source[i:end]))
            i = end
        elif char in "\"'`":
            j = i + 1
            while j < n and source[j] != char and not (char != "`" and source[j] == "\n"):
                j += 2 if source[j] == "\\" else 1
            out.append(source[i:j + 1])
            i = j + 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _read(path: Path, scan: ExportScan, label: str) -> str | None:
    try:
        if path.stat().st_size > MAX_MODULE_BYTES:
            scan.unresolved.append(f"{label} is larger than {MAX_MODULE_BYTES} bytes")
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        scan.unresolved.append(f"{label} cannot be read ({exc.strerror or exc})")
        return None


def _scan_js(path: Path, root: Path, scan: ExportScan, depth: int, seen: set[Path]) -> None:
    label = path.relative_to(root).as_posix()
    if path in seen:
        return
    seen.add(path)
    source = _read(path, scan, label)
    if source is None:
        return
    code = blank_comments(source)
    scan.names.update(match.group(1) for match in _DECLARATION.finditer(code))
    for match in _DESTRUCTURED.finditer(code):
        for part in match.group(1).split(","):
            binding = part.split(":")[-1].split("=")[0].strip().lstrip(".")
            if re.fullmatch(_IDENT, binding):
                scan.names.add(binding)
    for match in _LIST.finditer(code):
        if match.group(1):
            continue  # `export type { … }` exports types only
        for part in match.group(2).split(","):
            words = part.split()
            if not words or words[0] == "type":
                continue
            scan.names.add(words[-1].strip("\"'"))
    for match in _STAR.finditer(code):
        if match.group(1):
            scan.names.add(match.group(1))
            continue
        _follow(path, match.group(3), root, scan, depth, seen)


def _follow(path: Path, specifier: str, root: Path, scan: ExportScan, depth: int,
            seen: set[Path]) -> None:
    """Scan the module an `export * from` names, when it is a file in the folder."""
    label = path.relative_to(root).as_posix()
    if not specifier.startswith(("./", "../")):
        scan.unresolved.append(f"{label} re-exports everything from {specifier!r}, "
                               "which is not a file in the extension")
        return
    target = (path.parent / specifier).resolve()
    if not target.is_relative_to(root):
        scan.unresolved.append(f"{label} re-exports from {specifier!r}, outside the extension")
    elif depth >= MAX_DEPTH:
        scan.unresolved.append(f"{label} re-exports from {specifier!r} beyond "
                               f"{MAX_DEPTH} levels of re-exports")
    elif not target.is_file():
        scan.unresolved.append(f"{label} re-exports from {specifier!r}, which does not exist")
    else:
        _scan_js(target, root, scan, depth + 1, seen)


def _bound_names(code: object, scan: ExportScan) -> None:
    """Add the names a module's top-level code binds: every name it stores (a `def`,
    a `class`, an assignment, an import, a loop or `with` target). A bare annotation
    binds nothing, and names bound inside functions or classes belong to their own
    code objects, which are not walked.

    The compiled code is read instead of an `ast` tree: converting trees to Python
    objects is not safe while another thread does the same on CPython 3.11 (its
    recursion counter is shared), and extensions are loaded on background threads.
    """
    for instruction in dis.get_instructions(code):
        if instruction.opname == "STORE_NAME":
            scan.names.add(instruction.argval)
        elif instruction.opname == "IMPORT_STAR" or "IMPORT_STAR" in (instruction.argrepr or ""):
            scan.unresolved.append("the entry module uses `import *`")
    if "__getattr__" in scan.names:
        scan.unresolved.append("the entry module defines a module-level __getattr__")


def _scan_python(path: Path, root: Path, scan: ExportScan) -> None:
    label = path.relative_to(root).as_posix()
    source = _read(path, scan, label)
    if source is None:
        return
    try:
        code = compile(source, label, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        where = f" at line {exc.lineno}" if getattr(exc, "lineno", None) else ""
        scan.error = f"{label} does not parse{where}: {getattr(exc, 'msg', exc)}"
        return
    _bound_names(code, scan)


def scan_exports(entry: Path, root: Path) -> ExportScan:
    """Return the names `entry` exports, without running it.

    Args:
        entry: The entry module, inside `root`.
        root: The extension folder; re-exports are followed only inside it.

    Returns:
        The scan; see :class:`ExportScan` for how to read an incomplete one.
    """
    scan = ExportScan()
    root = root.resolve()
    entry = entry.resolve()
    if runtime_for(entry) == "python":
        _scan_python(entry, root, scan)
    else:
        _scan_js(entry, root, scan, 0, set())
    scan.unresolved = list(dict.fromkeys(scan.unresolved))
    return scan
