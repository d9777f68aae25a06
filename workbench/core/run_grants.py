"""Grants a person gives a whole headless turn on its command line: ``workbench run
--grant KIND[:VALUE]`` (any tool of the turn that asks for that entry) or ``--grant
TOOL:KIND[:VALUE]`` (that tool alone).

They are read as ``workbench call --grant`` reads its own: ``KIND`` alone covers every
entry of that kind, a path may use the manifest's templates (``$home/notes``) and a
relative one starts in the folder the turn works in. A flag covers an entry of a
permission request only when kind and value are the same (a grant of ``/srv/app`` is
not one of ``/srv`` or of ``/srv/app/secret``): the responder answers such a request
``once`` when every required entry of it is covered (``covering``), and leaves the rest
to the approvals policy. Nothing here is stored: the grants last for the turn.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import ctx_spec
from workbench.errors import ExitCode, WorkbenchError

if TYPE_CHECKING:
    from workbench.core.host import Host

PATH_KINDS = ("read", "write")

ACT_KIND = "act"
"""What an action tool (``"action": true``) needs granted in an unattended call (the
gateway asks for it then)."""


@dataclass(frozen=True)
class RunGrant:
    """One ``--grant`` of a turn.

    Attributes:
        kind: The permission kind (``read``, ``net``, ``memories``…).
        value: The entry's value (a path expanded, ``host:port``…); None for every
            entry of the kind.
        tool: The qualified name of the one tool it is for; None for any tool.
        flag: The flag as given, for messages.
    """

    kind: str
    value: str | None
    tool: str | None
    flag: str

    def covers(self, tool: str, entry: dict[str, Any]) -> bool:
        """Whether this grant covers the request entry ``entry`` of ``tool`` (a grant key)."""
        if self.tool is not None and tool != self.tool:
            return False
        if entry.get("kind") != self.kind:
            return False
        return self.value is None or str(entry.get("value") or "") == self.value


def covering(grants: tuple[RunGrant, ...], tool: str,
             entries: list[dict[str, Any]]) -> tuple[str, ...] | None:
    """When ``grants`` cover every required entry of a request of ``tool``: the keys of
    the optional entries they leave out (declined for this call); else None."""
    if not grants or not entries:
        return None
    declined = []
    for entry in entries:
        if any(grant.covers(tool, entry) for grant in grants):
            continue
        if not entry.get("optional"):
            return None
        declined.append(str(entry.get("key") or entry.get("kind")))
    return tuple(declined)


def resolve_run_grants(host: Host, flags: list[str]) -> tuple[RunGrant, ...]:
    """Read ``--grant`` flags of a turn (see the module docstring).

    Raises:
        WorkbenchError: (usage) a flag names no permission kind and no tool, a kind the
            tool does not declare, or a path template that cannot be expanded here.
    """
    kinds = (*ctx_spec.permission_kinds(), ACT_KIND)  # act: an action tool's unattended call
    found: list[RunGrant] = []
    for flag in flags:
        first, sep, rest = flag.partition(":")
        if first in kinds:
            found.append(RunGrant(first, _value(host, first, rest, flag) if sep else None,
                                  None, flag))
            continue
        if not sep or not rest:
            raise WorkbenchError(f"--grant {flag}: {first!r} is not a permission kind "
                                 f"({', '.join(kinds)}) and names no TOOL:KIND", exit_code=ExitCode.USAGE)
        try:
            tool = host.tools.resolve_name(first)
        except WorkbenchError:
            raise WorkbenchError(f"--grant {flag}: {first!r} is not a permission kind "
                                 f"({', '.join(kinds)}) nor a tool here", exit_code=ExitCode.USAGE) from None
        key = host.registry.resolve(tool).grant_key
        has_value = ":" in rest
        for kind, value in host.grants.from_flags(tool, [rest]):
            found.append(RunGrant(kind, value if has_value else None, key, flag))
    return tuple(found)


def _value(host: Host, kind: str, value: str, flag: str) -> str:
    if kind not in PATH_KINDS:
        return value
    from workbench.permissions.requirements import expand_path

    if value.startswith("$extension"):
        raise WorkbenchError(f"--grant {flag}: $extension names one extension's folder; grant "
                             f"it to its tool with --grant TOOL:{kind}:PATH", exit_code=ExitCode.USAGE)
    try:
        expanded = expand_path(value, roots=host.gateway.roots, extension_dir=Path(os.devnull))
    except ValueError as exc:
        raise WorkbenchError(f"--grant {flag}: {exc}", exit_code=ExitCode.USAGE) from None
    return os.path.normpath(os.path.join(host.cwd, expanded))
