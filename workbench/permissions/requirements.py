"""A tool's declared permissions, flattened into requirements with templates expanded.

A requirement is one entry of the manifest's ``permissions``: its kind (``read``,
``net``, ``memories``…), the value it names (a path, ``host:port,port``, a binary, an
environment key, an access level), its reason and whether it is optional. Paths use
the templates ``$home``, ``$downloads``, ``$models``, ``$sessions``, ``$extension``
and ``$env.VAR``, expanded here on the host; ``$data``, a Workbench addition to the
format: the extension's own data folder, ``<workbench home>/data/<extension name>``
(made, mode 0700, when first expanded; a path beneath it never leaves it, so one
extension's ``$data`` never names another's); and ``$project``, a Workbench addition to
the format: the folder the chat belongs to (the one the host works in). ``$project`` is
never a folder that holds more than a project: the whole system (``/``), the person's
home folder or a folder that holds it, the workbench's own home or a folder that holds
it or lies inside it — there it is not expanded, and the tool is refused saying why
(``ProjectUnavailable``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench import ctx_spec
from workbench.sandbox.paths import Pin
from workbench.sandbox.policy import resolve_binary

OS_KINDS = ctx_spec.os_kinds()
PATH_KINDS = ("read", "write")
"""The kinds whose value is a path, pinned when granted (see ``sandbox/paths.py``)."""

_TEMPLATE = re.compile(
    r"^\$(home|downloads|models|sessions|extension|data|project|env\.([A-Za-z_][A-Za-z0-9_]*))(?=/|$)")

PROJECT = "$project"
DATA = "$data"
"""The template naming the extension's own data folder (a Workbench addition)."""
_EXTENSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
"""An extension's name as the manifest allows it: one folder of the data root, never `..`."""
"""The template naming the chat's folder (a Workbench addition to the Loca format)."""


class ProjectUnavailable(ValueError):
    """``$project`` names no folder a tool may be given: the chat's folder is the whole
    system, the home folder, or holds (or lies in) the workbench's own files."""


@dataclass(frozen=True)
class Requirement:
    """One permission a tool declares."""

    kind: str
    value: str
    reason: str
    optional: bool = False
    pin: Pin | None = field(default=None, compare=False)
    """For a granted path: what it was when it was granted (``Broker.granted`` sets it)."""
    standing: bool = field(default=False, compare=False)
    """For a granted entry: whether a session or lasting grant holds it (not one for
    this call alone), so that a worker may be started ahead with it."""
    own_data: bool = field(default=False, compare=False)
    """Whether the entry names the extension's own data folder (``$data``, or a path
    beneath it): its own storage, as the private database is, granted without a
    question (``Gateway._authorize``); it never names another extension's folder."""
    project: bool = field(default=False, compare=False)
    """Whether the entry names the chat's folder (``$project``, or a path beneath it):
    one answer grants it to every tool of the extension that declares it too."""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "reason": self.reason,
                "optional": self.optional}

    @property
    def key(self) -> str:
        """``kind:value`` (the kind alone when it names nothing): how a prompt's answer
        names the entries it declined."""
        return f"{self.kind}:{self.value}" if self.value else self.kind

    def describe(self) -> str:
        """``kind value``, or the kind alone when it names nothing; a ``$project`` entry
        as ``read this project (/path)``."""
        if self.project:
            return f"{self.kind} {project_words(self.value)}"
        return f"{self.kind} {self.value}".strip()


def project_words(folder: str) -> str:
    """How a prompt, a review or an error names the chat's folder: ``this project (/path)``."""
    return f"this project ({folder})"


@dataclass(frozen=True)
class TemplateRoots:
    """Where each path template points on this host."""

    home: Path
    downloads: Path
    models: Path
    sessions: Path
    project: Path | None = None
    """The chat's folder (``$project``); None where there is none."""
    data: Path | None = None
    """The folder that holds each extension's data folder (``$data``)."""
    workbench_home: Path | None = None
    """The workbench's own home, which ``$project`` never holds."""

    @classmethod
    def for_host(cls, workbench_home: Path, project: Path | None = None) -> TemplateRoots:
        user_home = Path.home()
        return cls(home=user_home, downloads=user_home / "Downloads",
                   models=workbench_home / "models", sessions=workbench_home / "sessions",
                   project=project, data=workbench_home / "data", workbench_home=workbench_home)

    def data_folder(self, extension: str | None) -> str:
        """The data folder of ``extension`` (``$data``), made (0700) if missing.

        Raises:
            ValueError: There is no data root here, or no extension (or a name that
                could not be one folder of it).
        """
        if self.data is None or extension is None or not _EXTENSION_NAME.match(extension):
            raise ValueError("$data names the data folder of one extension; there is none here")
        folder = os.path.join(os.path.abspath(self.data), extension)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if os.path.islink(folder) or os.path.islink(os.path.abspath(self.data)):
            raise ValueError(f"the data folder {folder} is a symbolic link, which is never followed")
        return folder

    def with_project(self, folder: Path) -> TemplateRoots:
        """These roots with ``$project`` naming ``folder`` (the chat's folder)."""
        return replace(self, project=Path(folder))

    def project_folder(self) -> str:
        """The folder ``$project`` names, absolute and resolved.

        Raises:
            ProjectUnavailable: There is none, or it holds more than a project (see the
                module docstring); the message says what it is and what to do.
        """
        if self.project is None:
            raise ProjectUnavailable("this call belongs to no project folder ($project); "
                                     "start workbench in the project's folder")
        folder = os.path.realpath(self.project)
        why = _not_a_project(folder, os.path.realpath(self.home),
                             os.path.realpath(self.workbench_home) if self.workbench_home else None)
        if why is not None:
            raise ProjectUnavailable(
                f"the chat's folder, {folder}, is {why}, so it is not given to tools as "
                "a project ($project): start workbench in the project's own folder "
                "(cd PROJECT && workbench), or run `workbench call`/`run` from there")
        return folder


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _not_a_project(folder: str, home: str, workbench_home: str | None) -> str | None:
    """Why ``folder`` (resolved) cannot be a project's folder, or None when it can."""
    if folder == "/":
        return "the whole system (/)"
    if _within(home, folder):
        return "your home folder" if folder == home else f"a folder that holds your home folder ({home})"
    if workbench_home is not None:
        if _within(workbench_home, folder):
            return f"a folder that holds the workbench's own files ({workbench_home})"
        if _within(folder, workbench_home):
            return f"inside the workbench's own files ({workbench_home})"
    return None


def expand_path(path: str, *, roots: TemplateRoots, extension_dir: Path,
                env: Mapping[str, str] | None = None, extension: str | None = None) -> str:
    """Expand a manifest path template into an absolute path (``extension`` names the
    extension whose ``$data`` it is).

    Raises:
        ValueError: The template is unknown, ``$env.VAR`` names an unset variable, or
            a ``$data`` path names no extension or leaves its folder.
        ProjectUnavailable: ``$project`` names no folder a tool may be given.
    """
    match = _TEMPLATE.match(path)
    if not match:
        if path.startswith("$"):
            raise ValueError(f"unknown path template in {path!r}")
        return os.path.normpath(path)
    name, var = match.group(1), match.group(2)
    if var is not None:
        env = os.environ if env is None else env
        if var not in env:
            raise ValueError(f"{path!r} names ${'env.' + var}, which is not set")
        base = env[var]
    elif name == "project":
        base = roots.project_folder()
    elif name == "data":
        base = roots.data_folder(extension)
        rest = path[match.end():].lstrip("/")
        joined = os.path.normpath(os.path.join(base, rest)) if rest else base
        if joined != base and not joined.startswith(base + os.sep):
            raise ValueError(f"{path!r} leaves the extension's own data folder ($data)")
        return joined
    else:
        base = str(extension_dir if name == "extension" else getattr(roots, name))
    rest = path[match.end():].lstrip("/")
    return os.path.normpath(os.path.join(base, rest)) if rest else os.path.normpath(base)


def on_this_system(req: Requirement, env_path: str | None = None) -> bool:
    """False for a ``run`` entry whose binary is not on this system (on ``env_path``, the
    host's ``PATH`` by default): an alternative for another system (``open`` on macOS,
    ``rundll32`` on Windows), not applicable here — never asked for, never required."""
    return req.kind != "run" or resolve_binary(req.value, env_path) is not None


def _entries(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    return [value] if isinstance(value, dict) else []


def requirements_of(permissions: Mapping[str, Any], *, roots: TemplateRoots,
                    extension_dir: Path, env: Mapping[str, str] | None = None,
                    extension: str | None = None) -> list[Requirement]:
    """Flatten a tool's ``permissions`` object (manifest JSON shape) into requirements."""
    found: list[Requirement] = []
    for kind in ctx_spec.permission_kinds():
        for entry in _entries(permissions.get(kind)):
            reason = str(entry.get("reason", ""))
            optional = bool(entry.get("optional", False))
            project = own_data = False
            if kind in ("read", "write"):
                raw = str(entry["path"])
                value = expand_path(raw, roots=roots, extension_dir=extension_dir, env=env,
                                    extension=extension)
                project = _TEMPLATE.match(raw) is not None and raw.startswith(PROJECT)
                own_data = _TEMPLATE.match(raw) is not None and raw.startswith(DATA)
            elif kind == "net":
                ports = entry.get("ports") or []
                ports = "*" if ports == "*" else ",".join(str(p) for p in ports)
                value = f"{entry['host']}:{ports}" if ports else str(entry["host"])
            elif kind == "run":
                value = str(entry["binary"])
            elif kind == "env":
                value = str(entry["key"])
            else:  # sys names its flag, a capability its access level or nothing
                spec = ctx_spec.permission(kind)
                value = spec.value_of(entry) if spec is not None else ""
            found.append(Requirement(kind, value, reason, optional, project=project,
                                     own_data=own_data))
    return found
