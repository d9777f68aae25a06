"""An extension's dependencies: resolved and locked at install, never by editing its files.

Deno (an extension whose entry module runs under Deno): what its ``deno.json`` (or
``deno.jsonc``) declares under ``imports``, what a ``package.json`` declares under
``dependencies``, and the ``npm:``, ``jsr:`` and ``https:`` modules its entry module
imports. Deno fetches them with ``DENO_DIR`` set to a folder of ours, writing the
lock file there too (``--lock``; never the author's ``deno.lock``). When the author
ships a ``deno.lock`` it is copied there first and the install is ``--frozen``: a
package whose checksum differs from the author's lock, or one the lock lacks,
refuses the install. A ``package.json`` with no ``deno.json`` beside it becomes a
config of ours holding its dependencies as an import map (``npm:name@range``). No
``node_modules`` folder is made (``--node-modules-dir=none``), so npm packages'
install scripts never run. Kept: ``npm/``, ``remote/``, ``deno.lock``, that config.

Python (an extension whose entry module is Python): the requirements in its
``requirements.txt``, or, when it has none, the ``[project].dependencies`` of its
``pyproject.toml``. The workbench's own pip installs them with ``--target`` into a
folder of ours, from wheels only (``--only-binary=:all:``: building a package from
source runs its code on this machine, outside any sandbox); when the author pins
hashes (``--hash=sha256:...``) every requirement must match (``--require-hashes``).
pip's report gives each installed distribution's name, version and sha256, which
are recorded. Lines that would make pip build, read other files or use local paths
(``-e``, ``-r``, ``-c``, ``--no-binary``, paths, VCS URLs) are refused.

Each folder holds ``dependencies.json``: what was resolved, from which files (with
their sha256), and, for Deno, a non-default npm registry (the npm cache is filed
under its host). Resolution happens while the extension is still staged, into
``<stage>/deps/deno`` and ``<stage>/deps/python``; :class:`CacheSwap` moves them to
``<home>/cache/deno/<name>`` and ``<home>/cache/python/<name>`` as part of the
commit and back on failure, and moves them out when the extension is removed. The
author's files are only read: the commands run in our folders, with every path
they write named on their command line.

Workers only read these folders: a Python worker has ``site`` first on its import
path; a Deno worker runs ``--cached-only`` and ``--frozen`` against the lock, with a
cache of its own tool linked to ``npm/`` and ``remote/`` (``workbench.sandbox.deno``).

This module imports nothing of ours but ``workbench.ext``, the manifest's entry
lookup and the sandbox's Deno helpers and folder names.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from workbench.ext.errors import ExtensionError
from workbench.ext.staging import read_journal, remove_tree
from workbench.manifest.paths import find_entry
from workbench.sandbox import deno as deno_runtime
from workbench.sandbox.policy import PYTHON_SITE

__all__ = [
    "DEFAULT_TIMEOUT_S", "KINDS", "STAGED", "CacheSwap", "Dependency", "DependencyError",
    "DependencyRecord", "cache_folder", "check_unchanged", "installed_dependencies",
    "read_record", "resolve_dependencies", "restore_interrupted", "sweep_orphans",
]

DEFAULT_TIMEOUT_S = 300.0
"""How long one resolver (Deno or pip) may run before the install is refused."""

KINDS: tuple[str, ...] = ("deno", "python")
"""The dependency folders an extension may have, named after their runtime."""

RECORD_NAME = deno_runtime.RECORD_NAME
"""What was resolved, in each dependency folder."""

STAGED = "deps"
"""The folder of a staging folder that dependencies are resolved into."""

SET_ASIDE = "old-deps"
"""The folder of a staging folder that replaced or removed dependency folders go to."""

DENO_INPUTS = ("deno.json", "deno.jsonc", "package.json", "deno.lock")
PYTHON_INPUTS = ("requirements.txt", "pyproject.toml")

MAX_MESSAGE_LINES = 12
MAX_MESSAGE_CHARS = 1500

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_STALE_HINT = re.compile(r" Run `deno install --frozen=false`.*? to update it\.")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
_VCS = ("git+", "hg+", "svn+", "bzr+")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_DIRECT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@\s*([^\s;]+)")
_ALLOWED_OPTIONS = {"-i", "--index-url", "--extra-index-url", "--pre", "--prefer-binary",
                    "--only-binary"}
_REFUSED_OPTIONS = {
    "-e": "an editable install builds the package from source",
    "--editable": "an editable install builds the package from source",
    "--no-binary": "it builds packages from source, which runs their code outside the sandbox",
    "-r": "it reads another file; list the requirements here",
    "--requirement": "it reads another file; list the requirements here",
    "-c": "it reads another file; pin the versions here",
    "--constraint": "it reads another file; pin the versions here",
    "-f": "it points pip at local folders; name packages from an index",
    "--find-links": "it points pip at local folders; name packages from an index",
}
_PIP_ENV_DROPPED = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER", "PIP_NO_BINARY",
                    "PIP_EDITABLE", "PIP_SRC", "PIP_NO_DEPS", "PIP_REQUIREMENT",
                    "PIP_CONSTRAINT", "PIP_REPORT", "PIP_DRY_RUN")


class DependencyError(ExtensionError):
    """An extension's dependencies cannot be resolved; nothing was installed."""


@dataclass(frozen=True)
class Dependency:
    """One resolved package.

    Attributes:
        name: The package's name (a URL for a remote module).
        version: Its version (empty for a remote module).
        source: Where it came from: ``npm``, ``jsr``, ``remote``, ``PyPI``, or the
            index's host (``file`` for a local folder).
        digest: Its checksum as recorded: ``sha512-...`` (npm), ``sha256:<hex>``.
        direct: Declared by the extension itself rather than needed by a dependency.
    """

    name: str
    version: str
    source: str
    digest: str = ""
    direct: bool = True

    def describe(self) -> str:
        return f"{self.name} {self.version} ({self.source})" if self.version else \
            f"{self.name} ({self.source})"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "source": self.source,
                "digest": self.digest, "direct": self.direct}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Dependency:
        return cls(name=str(data.get("name", "")), version=str(data.get("version", "")),
                   source=str(data.get("source", "")), digest=str(data.get("digest", "")),
                   direct=bool(data.get("direct", True)))


@dataclass(frozen=True)
class DependencyRecord:
    """What was resolved for one runtime (the content of ``dependencies.json``).

    Attributes:
        runtime: ``deno`` or ``python``.
        packages: Every package installed, the extension's own first.
        inputs: The files they were resolved from, with the sha256 of each.
        locked: Checked against what the author pinned (a shipped ``deno.lock``,
            hashes in ``requirements.txt``).
        registry: For Deno, the npm registry used when it is not the default.
        seconds: How long resolving took.
    """

    runtime: str
    packages: tuple[Dependency, ...] = ()
    inputs: dict[str, str] = field(default_factory=dict)
    locked: bool = False
    registry: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "packages": [p.to_json() for p in self.packages],
                "inputs": dict(self.inputs), "locked": self.locked,
                "registry": self.registry, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DependencyRecord:
        return cls(runtime=str(data.get("runtime", "")),
                   packages=tuple(Dependency.from_json(p) for p in data.get("packages", [])
                                  if isinstance(p, dict)),
                   inputs={str(k): str(v) for k, v in (data.get("inputs") or {}).items()},
                   locked=bool(data.get("locked", False)),
                   registry=data.get("registry") if isinstance(data.get("registry"), str)
                   else None,
                   seconds=float(data.get("seconds") or 0.0))


# -- helpers -------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _inputs(folder: Path, names: Iterable[str]) -> dict[str, str]:
    return {name: _sha256(folder / name) for name in names if (folder / name).is_file()}


def _trim(text: str) -> str:
    """Deno's or pip's own words, without colours, backtraces and noise, cut short."""
    lines = []
    for raw in _ANSI.sub("", text).splitlines():
        line = raw.rstrip()
        if line.startswith("Stack backtrace"):
            break
        if line.strip() and not line.startswith("WARNING: Location "):
            lines.append(line)
    pip_errors = [line for line in lines if line.startswith("ERROR:")]
    if pip_errors:
        lines = pip_errors
    else:
        first = next((i for i, line in enumerate(lines) if line.startswith("error:")), 0)
        lines = lines[first:]
    if len(lines) > MAX_MESSAGE_LINES:
        lines = lines[:MAX_MESSAGE_LINES] + ["…"]
    message = "\n".join(lines)
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + "…"
    return message or "(it printed nothing)"


def _run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float, what: str,
         where: str) -> str:
    """Run a resolver; its stdout and stderr together, or DependencyError on failure."""
    try:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    except OSError as exc:
        raise DependencyError(f"{what} could not be started: {exc}", where=where) from exc
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise DependencyError(f"{what} took longer than {timeout_s:g} s and was stopped; "
                              "nothing was installed", where=where) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    text = output.decode("utf-8", "replace")
    if process.returncode != 0:
        raise DependencyError(f"{what} failed; nothing was installed:\n{_trim(text)}",
                              where=where)
    return text


# -- Deno ----------------------------------------------------------------------------


def _split_key(key: str) -> tuple[str, str]:
    """``@scope/name@1.2.3_peer@4`` -> (``@scope/name``, ``1.2.3``)."""
    at = key.find("@", 1)
    if at < 0:
        return key, ""
    return key[:at], key[at + 1:].split("_", 1)[0]


def _lock_packages(lock: dict[str, Any]) -> tuple[Dependency, ...]:
    """The packages a Deno lock file (version 4 or 5) pins, the declared ones first."""
    direct: set[tuple[str, str]] = set()
    for specifier, resolved in (lock.get("specifiers") or {}).items():
        kind, _, rest = str(specifier).partition(":")
        if kind in ("npm", "jsr") and isinstance(resolved, str):
            name, _ = _split_key(rest.lstrip("/"))
            direct.add((kind, f"{name}@{resolved.split('_', 1)[0]}"))
    packages: list[Dependency] = []
    for kind in ("npm", "jsr"):
        table = lock.get(kind) or (lock.get("packages") or {}).get(kind) or {}
        for key, info in table.items():
            name, version = _split_key(str(key))
            integrity = str(info.get("integrity", "")) if isinstance(info, dict) else ""
            if kind == "jsr" and integrity and not integrity.startswith("sha"):
                integrity = "sha256:" + integrity
            packages.append(Dependency(name, version, kind, integrity,
                                       (kind, f"{name}@{version}") in direct))
    for url, digest in (lock.get("remote") or {}).items():
        packages.append(Dependency(str(url), "", "remote", f"sha256:{digest}", True))
    packages.sort(key=lambda p: (not p.direct, p.source, p.name.lower(), p.version))
    return tuple(packages)


def _npm_specifier(name: str, spec: Any, where: str) -> str:
    value = str(spec).strip() if isinstance(spec, str) else ""
    if value.startswith("npm:"):
        return value
    refused = ("file:", "link:", "workspace:", "git", "github:", "http:", "https:", "portal:")
    if not isinstance(spec, str) or value.startswith(refused) or "/" in value:
        raise DependencyError(f"package.json: the dependency {name!r} is {spec!r}; only "
                              "versions and ranges from the npm registry are accepted",
                              where=where)
    if value in ("", "*", "latest"):
        return f"npm:{name}"
    return f"npm:{name}@{value}"


def _package_json_config(folder: Path, into: Path, where: str) -> Path | None:
    """For a package.json with dependencies and no deno.json: our config with them as
    an import map. None when there is nothing to write."""
    if (folder / "deno.json").is_file() or (folder / "deno.jsonc").is_file():
        return None
    path = folder / "package.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DependencyError(f"package.json cannot be read: {exc}", where=where) from exc
    declared = data.get("dependencies") if isinstance(data, dict) else None
    if not declared:
        return None
    if not isinstance(declared, dict):
        raise DependencyError("package.json: dependencies must be an object of names and "
                              "versions", where=where)
    imports: dict[str, str] = {}
    for name, spec in sorted(declared.items()):
        specifier = _npm_specifier(str(name), spec, where)
        imports[name] = specifier
        imports[f"{name}/"] = "npm:/" + specifier.removeprefix("npm:") + "/"
    config = into / deno_runtime.GENERATED_CONFIG
    config.write_text(json.dumps({"imports": imports}, indent=2) + "\n", encoding="utf-8")
    return config


def _resolve_deno(folder: Path, entry: Path, into: Path, *, timeout_s: float,
                  where: str) -> DependencyRecord | None:
    binary = deno_runtime.deno_binary()
    if binary is None:
        raise DependencyError("Deno is not installed (the `deno` package provides it)",
                              where=where)
    into.mkdir(parents=True, exist_ok=True)
    lock = into / deno_runtime.LOCK_NAME
    shipped = folder / "deno.lock"
    locked = shipped.is_file()
    if locked:
        shutil.copyfile(shipped, lock)
    config = deno_runtime.config_file(folder, into) or _package_json_config(folder, into, where)
    common = [f"--lock={lock}", "--node-modules-dir=none", "--vendor=false", "--quiet"]
    if locked:
        common.append("--frozen")
    common.append(f"--config={config}" if config else "--no-config")
    env = dict(os.environ)
    env.update(DENO_DIR=str(into), DENO_NO_UPDATE_CHECK="1", NO_COLOR="1", DENO_NO_PROMPT="1",
               RUST_BACKTRACE="0")
    what = "Deno, caching its dependencies,"
    started = time.monotonic()
    deadline = started + timeout_s
    try:
        if config is not None:  # everything the config declares, imported statically or not
            _run([binary, "install", *common], cwd=into, env=env, what=what, where=where,
                 timeout_s=timeout_s)
        _run([binary, "install", "--entrypoint", "--no-check", *common, str(entry)], cwd=into,
             env=env, what=what, where=where, timeout_s=max(1.0, deadline - time.monotonic()))
    except DependencyError as exc:
        if locked and "lockfile is out of date" in exc.message:
            raise DependencyError(
                "the deno.lock shipped with it does not pin what it imports (a shipped lock "
                "is checked, never updated; its author must update it):\n"
                + _STALE_HINT.sub("", exc.message.split("\n", 1)[1]), where=where) from None
        raise
    seconds = time.monotonic() - started
    for entry_name in list(into.iterdir()):
        if entry_name.name not in (*deno_runtime.CACHED_DIRS, deno_runtime.LOCK_NAME,
                                   deno_runtime.GENERATED_CONFIG):
            remove_tree(entry_name)
    try:
        data = json.loads(lock.read_text(encoding="utf-8")) if lock.is_file() else {}
    except ValueError as exc:
        raise DependencyError(f"Deno wrote a lock file that cannot be read: {exc}",
                              where=where) from exc
    packages = _lock_packages(data if isinstance(data, dict) else {})
    if not packages:
        remove_tree(into)
        return None
    registry = os.environ.get("NPM_CONFIG_REGISTRY") or None
    return DependencyRecord("deno", packages, _inputs(folder, DENO_INPUTS), locked,
                            registry, seconds)


# -- Python --------------------------------------------------------------------------


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Requirement lines with continuations joined and comments dropped, numbered."""
    found: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined = (pending + line).strip()
        pending = ""
        if joined:
            found.append((start, joined))
    if pending.strip():
        found.append((start, pending.strip()))
    return found


def _check_requirement(text: str, label: str, where: str) -> bool:
    """Refuse a requirement that would build, read files or use a local path; True
    when it pins a hash."""
    hashed = False
    words: list[str] = []
    parts = text.split()
    index = 0
    while index < len(parts):
        part = parts[index]
        if part.startswith("--hash"):
            hashed = True
            index += 2 if part == "--hash" else 1
            continue
        if part.startswith("-"):
            raise DependencyError(f"{label}: the option {part.split('=')[0]} is not accepted "
                                  "on a requirement", where=where)
        words.append(part)
        index += 1
    spec = " ".join(words)
    if spec.startswith((".", "/", "~", "file:", *_VCS)) or _URL.match(spec):
        raise DependencyError(f"{label}: {spec!r} is a local path or a URL; name a package "
                              "from the index (or a wheel: `name @ https://…/name.whl`)",
                              where=where)
    if not _NAME.match(spec):
        raise DependencyError(f"{label}: {spec!r} does not start with a package name",
                              where=where)
    direct = _DIRECT.match(spec)
    if direct:
        url = urlsplit(direct.group(1))
        if url.scheme != "https" or not url.path.endswith(".whl"):
            raise DependencyError(f"{label}: {spec!r} points at something other than a wheel "
                                  "over https; only wheels are installed", where=where)
    return hashed


def _requirements(folder: Path, where: str) -> tuple[str, str, bool] | None:
    """The requirements to install as a file's text, the file named, and whether they
    pin hashes; None when the extension declares none."""
    path = folder / "requirements.txt"
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DependencyError(f"requirements.txt cannot be read: {exc}",
                                  where=where) from exc
        lines, hashed = [], False
        for number, line in _logical_lines(text):
            label = f"requirements.txt line {number}"
            if line.startswith("-"):
                option = re.split(r"[=\s]", line, maxsplit=1)[0]
                if option in _REFUSED_OPTIONS:
                    raise DependencyError(f"{label}: {option} is not accepted: "
                                          f"{_REFUSED_OPTIONS[option]}", where=where)
                if option not in _ALLOWED_OPTIONS:
                    raise DependencyError(f"{label}: the option {option} is not accepted",
                                          where=where)
            else:
                hashed = _check_requirement(line, label, where) or hashed
            lines.append(line)
        has_requirement = any(not line.startswith("-") for line in lines)
        return ("\n".join(lines) + "\n", "requirements.txt", hashed) if has_requirement \
            else None
    path = folder / "pyproject.toml"
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DependencyError(f"pyproject.toml cannot be read: {exc}", where=where) from exc
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    if "dependencies" in (project.get("dynamic") or []):
        raise DependencyError("pyproject.toml: dynamic dependencies need the package to be "
                              "built; list them in [project].dependencies or "
                              "requirements.txt", where=where)
    declared = project.get("dependencies") or []
    if not isinstance(declared, list) or not all(isinstance(d, str) for d in declared):
        raise DependencyError("pyproject.toml: [project].dependencies must be a list of "
                              "requirement strings", where=where)
    if not declared:
        return None
    for number, requirement in enumerate(declared, 1):
        _check_requirement(requirement, f"pyproject.toml dependency {number}", where)
    return "\n".join(declared) + "\n", "pyproject.toml", False


def _source_of(url: str) -> str:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "file":
        return "file"
    if host in ("files.pythonhosted.org", "pypi.org", "pypi.python.org"):
        return "PyPI"
    return host or "pip"


def _report_packages(report: dict[str, Any]) -> tuple[Dependency, ...]:
    packages = []
    for item in report.get("install") or []:
        if not isinstance(item, dict):
            continue
        metadata = item.get("metadata") or {}
        info = item.get("download_info") or {}
        archive = info.get("archive_info") or {}
        sha = (archive.get("hashes") or {}).get("sha256")
        if not sha and str(archive.get("hash", "")).startswith("sha256="):
            sha = str(archive["hash"]).split("=", 1)[1]
        packages.append(Dependency(str(metadata.get("name", "")),
                                   str(metadata.get("version", "")),
                                   _source_of(str(info.get("url", ""))),
                                   f"sha256:{sha}" if sha else "",
                                   bool(item.get("requested", False))))
    packages.sort(key=lambda p: (not p.direct, p.name.lower()))
    return tuple(packages)


def _resolve_python(folder: Path, into: Path, *, timeout_s: float,
                    where: str) -> DependencyRecord | None:
    found = _requirements(folder, where)
    if found is None:
        return None
    text, origin, hashed = found
    into.mkdir(parents=True, exist_ok=True)
    requirements = into / "requirements.txt"
    requirements.write_text(text, encoding="utf-8")
    report = into / "report.json"
    argv = [sys.executable, "-m", "pip", "install", "--target", str(into / PYTHON_SITE),
            "--report", str(report), "--no-input", "--disable-pip-version-check",
            "--only-binary=:all:", "--progress-bar=off", "--no-warn-script-location",
            "-r", str(requirements)]
    if hashed:
        argv.append("--require-hashes")
    env = {key: value for key, value in os.environ.items() if key not in _PIP_ENV_DROPPED}
    env["PIP_NO_INPUT"] = "1"
    started = time.monotonic()
    try:
        _run(argv, cwd=into, env=env, timeout_s=timeout_s, where=where,
             what=f"pip, installing the requirements of its {origin},")
    except DependencyError as exc:
        if "No matching distribution" in exc.message:
            raise DependencyError(exc.message + "\n(only wheels are installed: building from "
                                  "source would run the package's code outside the "
                                  "sandbox)", where=where) from None
        raise
    seconds = time.monotonic() - started
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DependencyError(f"pip's report cannot be read: {exc}", where=where) from exc
    report.unlink()
    requirements.unlink()
    return DependencyRecord("python", _report_packages(data), _inputs(folder, PYTHON_INPUTS),
                            hashed, None, seconds)


# -- the resolver --------------------------------------------------------------------


def resolve_dependencies(folder: Path, name: str, into: Path, *, entry: str | None = None,
                         where: str | None = None,
                         timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[DependencyRecord, ...]:
    """Resolve, fetch and lock an extension's dependencies into ``into``.

    Only the resolver of the extension's runtime runs. ``folder`` is read, never
    written. What was resolved for a runtime is in ``into/<runtime>`` with its
    ``dependencies.json``; a runtime with nothing to install leaves no folder.

    Args:
        folder: The (staged) extension folder.
        name: The extension's name, for messages.
        into: An empty folder of ours (``<stage>/deps``).
        entry: The manifest's ``entry`` field.
        where: Where errors say they are (the source the person named).
        timeout_s: How long each resolver may take.

    Returns:
        One record per runtime that has dependencies (none, or one).

    Raises:
        DependencyError: A dependency cannot be resolved, fetched or checked, or a
            declaration is refused; Deno's or pip's own message is in it.
    """
    where = where or str(folder)
    found = find_entry(folder, entry)
    if found is None:
        return ()  # knowledge and skills only
    entry_path, runtime = found
    try:
        if runtime == "deno":
            record = _resolve_deno(folder, entry_path, into / "deno", timeout_s=timeout_s,
                                   where=where)
        elif runtime == "python":
            record = _resolve_python(folder, into / "python", timeout_s=timeout_s,
                                     where=where)
        else:
            return ()
    except DependencyError as exc:
        remove_tree(into)
        raise DependencyError(f"the dependencies of {name} cannot be installed: "
                              f"{exc.message}", where=exc.where) from None
    except BaseException:
        remove_tree(into)
        raise
    if record is None:
        with contextlib.suppress(OSError):
            into.rmdir()
        return ()
    (into / runtime / RECORD_NAME).write_text(json.dumps(record.to_json(), indent=2) + "\n",
                                              encoding="utf-8")
    return (record,)


# -- the caches in the home ----------------------------------------------------------


def cache_folder(cache_dir: Path, kind: str, name: str) -> Path:
    """Where an extension's dependency folder of one kind lives.

    Raises:
        ExtensionError: ``name`` is not a plain folder name.
    """
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ExtensionError(f"{name!r} is not an extension name")
    return cache_dir / kind / name


def read_record(folder: Path) -> DependencyRecord | None:
    """The record in a dependency folder, or None."""
    try:
        data = json.loads((folder / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return DependencyRecord.from_json(data) if isinstance(data, dict) else None


def installed_dependencies(cache_dir: Path, name: str) -> tuple[Dependency, ...]:
    """What is installed for an extension, from its dependency folders' records."""
    found: list[Dependency] = []
    for kind in KINDS:
        record = read_record(cache_folder(cache_dir, kind, name))
        if record is not None:
            found.extend(record.packages)
    return tuple(found)


def _prune_empty(cache_dir: Path) -> None:
    for kind in KINDS:
        with contextlib.suppress(OSError):
            (cache_dir / kind).rmdir()


class CacheSwap:
    """Moves an extension's dependency folders: the live ones into the staging folder
    (``old-deps``), the staged ones (``deps``) into place; :meth:`undo` reverses it.

    With nothing staged it only moves the live folders out (a removal): they are
    deleted with the staging folder.

    Args:
        cache_dir: ``<home>/cache``.
        name: The extension.
        stage: Its staging folder.
    """

    def __init__(self, cache_dir: Path, name: str, stage: Path) -> None:
        self.cache_dir = cache_dir
        self.name = name
        self.stage = stage
        self.moved_out: list[str] = []
        self.moved_in: list[str] = []

    def staged(self) -> list[str]:
        """The kinds with a staged folder."""
        return [kind for kind in KINDS if (self.stage / STAGED / kind).is_dir()]

    def apply(self) -> CacheSwap:
        try:
            for kind in KINDS:
                live = cache_folder(self.cache_dir, kind, self.name)
                if live.exists() or live.is_symlink():
                    (self.stage / SET_ASIDE).mkdir(exist_ok=True)
                    os.rename(live, self.stage / SET_ASIDE / kind)
                    self.moved_out.append(kind)
                new = self.stage / STAGED / kind
                if new.is_dir():
                    live.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(new, live)
                    self.moved_in.append(kind)
        except BaseException:
            self.undo()
            raise
        return self

    def undo(self) -> None:
        for kind in reversed(self.moved_in):
            os.rename(cache_folder(self.cache_dir, kind, self.name), self.stage / STAGED / kind)
        for kind in reversed(self.moved_out):
            os.rename(self.stage / SET_ASIDE / kind, cache_folder(self.cache_dir, kind, self.name))
        self.moved_in, self.moved_out = [], []
        _prune_empty(self.cache_dir)

    def finish(self) -> None:
        """Forget the folders moved out (the staging folder's deletion removes them)."""
        _prune_empty(self.cache_dir)


def restore_interrupted(cache_dir: Path, extensions_dir: Path,
                        leftovers: Iterable[Path]) -> list[str]:
    """Put back the dependency folders of an install or update a kill interrupted
    before its extension folder was in place; call before recovery reads the same
    staging folders. The caller holds the extensions lock.

    Returns:
        The extensions whose folders were put back.
    """
    restored = []
    for stage in leftovers:
        journal = read_journal(stage)
        if not journal or journal.get("action") not in ("install", "update"):
            continue
        name = journal.get("name")
        moved = journal.get("deps")
        if not isinstance(name, str) or not isinstance(moved, list) or "/" in name:
            continue
        target = extensions_dir / name
        committed = target.is_dir() and not (stage / "pkg").is_dir()
        if committed:
            continue
        changed = False
        for kind in KINDS:
            live = cache_folder(cache_dir, kind, name)
            if kind in moved and not (stage / STAGED / kind).exists() and live.exists():
                remove_tree(live)  # the new version's, moved in before the kill
                changed = True
            aside = stage / SET_ASIDE / kind
            if aside.exists() and not live.exists():
                live.parent.mkdir(parents=True, exist_ok=True)
                os.rename(aside, live)
                changed = True
        if changed:
            restored.append(name)
    _prune_empty(cache_dir)
    return restored


def sweep_orphans(cache_dir: Path, installed: Callable[[str], bool]) -> list[str]:
    """Delete dependency folders (those with a record) of extensions not installed.

    Returns:
        The names whose folders were deleted.
    """
    swept = []
    for kind in KINDS:
        root = cache_dir / kind
        if not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            if folder.is_dir() and (folder / RECORD_NAME).is_file() and not installed(folder.name):
                remove_tree(folder)
                swept.append(folder.name)
    _prune_empty(cache_dir)
    return sorted(set(swept))


def check_unchanged(before: str, after: str, where: str) -> None:
    """Refuse when resolving changed the extension's files (it must only read them)."""
    if before != after:
        raise DependencyError("installing its dependencies changed the extension's own "
                              "files; nothing was installed", where=where)
