"""What a bundle is made of, checked before anything is written or run.

A bundle is ``{"manifest": {...}, "files": {PATH: TEXT}}``. The manifest's fields:

- ``schemaVersion``: 1;
- ``id``: lowercase letters, digits and ``-``, starting with a letter or digit, at most 64;
- ``kind``: ``tool``, ``skill`` or ``mcp``;
- ``description``: what it does, 1 to 1,000 characters;
- ``entrypoint``: one of the files: a ``.mjs`` (ES module), ``.js`` or ``.cjs`` (CommonJS)
  file for ``tool`` and ``mcp``, ``SKILL.md`` for ``skill``;
- ``inputSchema``: a JSON Schema of type ``object`` (required for ``tool``; a skill's and
  an MCP bundle's are optional: an MCP call's arguments are checked by its server);
- ``references`` (``skill`` only): text files handed back with ``SKILL.md``;
- ``timeoutMs`` (``tool`` and ``mcp``): how long a call may run, 100 to 120,000 (30,000).

Files are UTF-8 text, at most ``MAX_FILES`` of them, each at most ``MAX_FILE_BYTES``,
``MAX_TOTAL_BYTES`` together. A name is a relative path of ``/``-separated parts, none
empty, ``.`` or ``..``, no backslash, no control, format (bidi) or surrogate code point,
at most ``MAX_PATH`` characters; no ``package.json`` and no ``node_modules`` anywhere:
a bundle installs nothing and the runtime owns its package scope.
Every error is a ``BundleError`` naming the field (``manifest.entrypoint``,
``files["a/../b"]``) and what to do.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from workbench.bundles.digest import digest

SCHEMA_VERSION = 1
KINDS = ("tool", "skill", "mcp")
MAX_FILES = 64
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024
MAX_PATH = 200
MAX_DEPTH = 8
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 120_000
SCRIPT_SUFFIXES = (".mjs", ".js", ".cjs")
SKILL_ENTRY = "SKILL.md"
FORBIDDEN_NAMES = ("package.json", "node_modules", "package-lock.json")

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_FIELDS = {"schemaVersion", "id", "kind", "description", "entrypoint", "inputSchema",
           "references", "timeoutMs"}


class BundleError(ValueError):
    """A bundle, or a request about one, that cannot be taken: ``field`` says where."""

    def __init__(self, field: str, message: str, kind: str = "invalid_arguments") -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.kind = kind
        """The ``ToolError`` kind a tool answers with."""


@dataclass(frozen=True)
class Bundle:
    """A checked bundle: its manifest as given, its files, and its digest."""

    manifest: dict[str, Any]
    files: dict[str, str]
    digest: str

    @property
    def id(self) -> str:
        return str(self.manifest["id"])

    @property
    def kind(self) -> str:
        return str(self.manifest["kind"])

    @property
    def entrypoint(self) -> str:
        return str(self.manifest["entrypoint"])

    @property
    def timeout_ms(self) -> int:
        return int(self.manifest.get("timeoutMs", DEFAULT_TIMEOUT_MS))

    def metadata(self) -> dict[str, Any]:
        """What listing shows: never a file's text."""
        return {"id": self.id, "digest": self.digest, "kind": self.kind,
                "description": self.manifest["description"], "entrypoint": self.entrypoint,
                "files": sorted(self.files), "bytes": sum(len(t.encode()) for t in self.files.values())}


def check_id(value: Any, field: str = "id") -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise BundleError(field, f"{value!r} is not a bundle id: lowercase letters, digits and "
                          "'-', starting with a letter or digit, at most 64")
    return value


def check_digest(value: Any, field: str = "digest") -> str:
    if not isinstance(value, str) or not _DIGEST.match(value):
        raise BundleError(field, f"{value!r} is not a digest: give the 64 lowercase hex digits "
                          "create or list answered with")
    return value


def _bad_char(name: str) -> str | None:
    for char in name:
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            return f"U+{ord(char):04X}"
    return None


def check_path(name: Any) -> str:
    """A file name of a bundle, or the reason it is refused (``BundleError``)."""
    field = f"files[{name!r}]"
    if not isinstance(name, str) or not name:
        raise BundleError(field, "a file name must be a non-empty relative path")
    if len(name) > MAX_PATH:
        raise BundleError(field, f"the name is longer than {MAX_PATH} characters")
    bad = _bad_char(name)
    if bad:
        raise BundleError(field, f"the name holds the code point {bad} (a control, format or "
                          "bidi character)")
    if name.startswith("/") or "\\" in name or re.match(r"^[A-Za-z]:", name):
        raise BundleError(field, "the name must be relative, with '/' between folders "
                          "(no absolute path, no backslash)")
    parts = name.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise BundleError(field, "no part of the name may be empty, '.' or '..': every file "
                          "stays inside the bundle")
    if len(parts) > MAX_DEPTH:
        raise BundleError(field, f"the name is more than {MAX_DEPTH} folders deep")
    if any(part.lower() in FORBIDDEN_NAMES for part in parts):
        raise BundleError(field, "bundles ship no package.json and no dependencies "
                          "(node_modules, package-lock.json): the runtime owns the package scope")
    if parts[0] == ".wb":
        raise BundleError(field, "the folder .wb is the runtime's own")
    return name


def _check_numbers(value: Any, field: str) -> Any:
    """``value`` with integral floats made integers; other numbers the digest cannot
    write alike in every language refused (see ``digest.py``)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if abs(value) >= 10**21:
            raise BundleError(field, "numbers must be smaller than 1e21")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BundleError(field, "numbers must be finite")
        if value.is_integer():
            return _check_numbers(int(value), field)
        if "e" in repr(value):
            raise BundleError(field, f"write {value!r} as a plain decimal fraction between "
                              "0.0001 and 1e16")
        return value
    if isinstance(value, list):
        return [_check_numbers(v, f"{field}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise BundleError(field, "object keys must be strings")
        return {k: _check_numbers(v, f"{field}.{k}") for k, v in value.items()}
    raise BundleError(field, f"{type(value).__name__} is not a JSON value")


def _check_schema(schema: Any, field: str) -> None:
    import jsonschema

    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise BundleError(field, 'must be a JSON Schema of an object ({"type": "object", ...})')
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise BundleError(field + (f"/{where}" if where else ""),
                          f"not a valid JSON Schema: {exc.message}") from None


def check_manifest(manifest: Any, files: dict[str, str]) -> dict[str, Any]:
    """The manifest, checked against ``files`` (see the module docstring)."""
    if not isinstance(manifest, dict):
        raise BundleError("manifest", "must be an object")
    unknown = sorted(set(manifest) - _FIELDS)
    if unknown:
        raise BundleError(f"manifest.{unknown[0]}", "is not a manifest field (known: "
                          + ", ".join(sorted(_FIELDS)) + ")")
    manifest = _check_numbers(manifest, "manifest")
    if manifest.get("schemaVersion") != SCHEMA_VERSION:
        raise BundleError("manifest.schemaVersion", f"must be {SCHEMA_VERSION}")
    check_id(manifest.get("id"), "manifest.id")
    kind = manifest.get("kind")
    if kind not in KINDS:
        raise BundleError("manifest.kind", f"must be one of {', '.join(KINDS)}, not {kind!r}")
    description = manifest.get("description")
    if not isinstance(description, str) or not description.strip() or len(description) > 1000:
        raise BundleError("manifest.description", "must say what the bundle does, 1 to 1,000 characters")
    entry = manifest.get("entrypoint")
    if not isinstance(entry, str) or entry not in files:
        raise BundleError("manifest.entrypoint", f"{entry!r} is not one of the files "
                          f"({', '.join(sorted(files)) or 'none given'})")
    if kind == "skill":
        if entry.rsplit("/", 1)[-1] != SKILL_ENTRY:
            raise BundleError("manifest.entrypoint", f"a skill's entrypoint is its {SKILL_ENTRY}")
        references = manifest.get("references", [])
        if not isinstance(references, list) or any(r not in files for r in references):
            raise BundleError("manifest.references", "must list files of the bundle")
        if "timeoutMs" in manifest:
            raise BundleError("manifest.timeoutMs", "a skill runs nothing, so it has no time limit")
    else:
        if not entry.endswith(SCRIPT_SUFFIXES):
            raise BundleError("manifest.entrypoint", "must be a .mjs (ES module), .js or .cjs "
                              "(CommonJS) file")
        if "references" in manifest:
            raise BundleError("manifest.references", "only a skill has references")
        timeout = manifest.get("timeoutMs", DEFAULT_TIMEOUT_MS)
        if isinstance(timeout, bool) or not isinstance(timeout, int) or not 100 <= timeout <= MAX_TIMEOUT_MS:
            raise BundleError("manifest.timeoutMs", f"must be an integer from 100 to {MAX_TIMEOUT_MS}")
    if kind == "tool" and "inputSchema" not in manifest:
        raise BundleError("manifest.inputSchema", "a tool needs one (at least {\"type\": \"object\"})")
    if "inputSchema" in manifest:
        _check_schema(manifest["inputSchema"], "manifest.inputSchema")
    return manifest


def check_files(files: Any) -> dict[str, str]:
    if not isinstance(files, dict) or not files:
        raise BundleError("files", "must be an object of file names to their text, at least one")
    if len(files) > MAX_FILES:
        raise BundleError("files", f"{len(files)} files; a bundle holds at most {MAX_FILES}")
    total = 0
    for name, content in files.items():
        check_path(name)
        if not isinstance(content, str):
            raise BundleError(f"files[{name!r}]", "must be the file's text (a string)")
        try:
            size = len(content.encode("utf-8"))
        except UnicodeEncodeError:
            raise BundleError(f"files[{name!r}]", "holds a lone surrogate; files are UTF-8 text") from None
        if size > MAX_FILE_BYTES:
            raise BundleError(f"files[{name!r}]", f"{size} bytes; a file holds at most {MAX_FILE_BYTES}")
        total += size
    if total > MAX_TOTAL_BYTES:
        raise BundleError("files", f"{total} bytes together; a bundle holds at most {MAX_TOTAL_BYTES}")
    for name in files:
        for cut in range(1, name.count("/") + 1):
            folder = name.rsplit("/", cut)[0]
            if folder in files:
                raise BundleError(f"files[{name!r}]", f"{folder!r} is both a file and a folder")
    return dict(files)


def check_bundle(value: Any) -> Bundle:
    """A bundle given as ``{"manifest": ..., "files": ...}``, checked, with its digest."""
    if not isinstance(value, dict):
        raise BundleError("bundle", 'must be an object: {"manifest": {...}, "files": {...}}')
    extra = sorted(set(value) - {"manifest", "files"})
    if extra:
        raise BundleError(extra[0], 'is not part of a bundle (only "manifest" and "files")')
    files = check_files(value.get("files"))
    manifest = check_manifest(value.get("manifest"), files)
    return Bundle(manifest, files, digest(manifest, files))
