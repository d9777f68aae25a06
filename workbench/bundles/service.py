"""The one service both faces call: the agent's ``extension_manage`` and
``extension_call`` (``source.py``) and a person's ``workbench bundle …`` (``cli/bundle.py``).

- ``list``: every revision of the project with its metadata and whether it still
  matches its digest; no file's text, nothing run;
- ``validate``: a bundle checked and its digest computed; nothing written or run;
- ``create``: a bundle checked and stored as a revision (the caller holds the write
  grant on the project: the tool's ``write $project``, or the person at the command line);
- ``inspect``: a revision's metadata; an MCP bundle is started to list its tools;
- ``call``: an id and an exact digest: a skill's ``SKILL.md`` and references as data, a
  tool's ``run(input)``, an MCP bundle's tool ``tool_name``.

Every use of a revision reads it anew and checks it against its digest first
(``BundleStore.snapshot``); what runs is staged from that snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.bundles.manifest import Bundle, BundleError, check_bundle
from workbench.bundles.runtime import BundleRunner, check_input
from workbench.bundles.store import BundleStore
from workbench.errors import ToolError
from workbench.permissions.requirements import ProjectUnavailable, TemplateRoots


def tool_error(exc: BundleError) -> ToolError:
    return ToolError(exc.kind, str(exc), field=exc.field)


class BundleService:
    """Bundles of project folders (see the module docstring).

    Args:
        runner: Runs staged entrypoints in the sandbox.
        workbench_home: The workbench's own home, which a project never holds.
        network: The shell network level of a chat (``off``, ``registries``, ``all``).
    """

    def __init__(self, *, runner: BundleRunner, workbench_home: Callable[[], Path],
                 network: Callable[[str | None], str]) -> None:
        self.runner = runner
        self.workbench_home = workbench_home
        self.network = network

    def store(self, project: str | Path) -> BundleStore:
        """The store of ``project``, a folder a tool may be given as ``$project``.

        Raises:
            ToolError: ``permission`` when it is ``/``, the home folder or the workbench's own.
        """
        try:
            folder = TemplateRoots.for_host(self.workbench_home(), Path(project)).project_folder()
        except ProjectUnavailable as exc:
            raise ToolError("permission", str(exc)) from None
        return BundleStore(folder)

    def list(self, project: str | Path) -> list[dict[str, Any]]:
        """Every revision: metadata, ``state`` ``ok`` or ``refused`` with why."""
        store = self.store(project)
        rows = []
        for bundle_id, digest, _ in store.revisions():
            try:
                found = store.snapshot(bundle_id, digest)
            except BundleError as exc:
                rows.append({"id": bundle_id, "digest": digest, "state": "refused", "why": str(exc)})
                continue
            rows.append({**found.metadata(), "state": "ok"})
        return rows

    @staticmethod
    def validate(bundle: Any) -> dict[str, Any]:
        """``bundle`` checked, with its digest; nothing written."""
        found = _checked(bundle)
        return {"valid": True, **found.metadata(), "written": False}

    def create(self, project: str | Path, bundle: Any) -> dict[str, Any]:
        """Store ``bundle`` as a revision of ``project``."""
        found = _checked(bundle)
        try:
            stored = self.store(project).create(found)
        except BundleError as exc:
            raise tool_error(exc) from None
        return {**stored, "call_with": {"id": found.id, "digest": found.digest}}

    def snapshot(self, project: str | Path, bundle_id: Any, digest: Any) -> Bundle:
        try:
            return self.store(project).snapshot(bundle_id, digest)
        except BundleError as exc:
            raise tool_error(exc) from None

    async def inspect(self, project: str | Path, bundle_id: Any, digest: Any, *,
                      session_id: str | None = None) -> dict[str, Any]:
        """A revision's metadata and schema; an MCP bundle's tools, from the server itself."""
        found = self.snapshot(project, bundle_id, digest)
        answer = {**found.metadata(), "state": "ok",
                  "inputSchema": found.manifest.get("inputSchema")}
        if found.kind == "skill":
            answer["references"] = _references(found)
        if found.kind == "mcp":
            ran = await self._run(found, "inspect", {}, session_id=session_id)
            answer.update(tools=ran["result"]["tools"], server=ran["result"]["server"],
                          runtime=ran["runtime"])
        return answer

    async def call(self, project: str | Path, bundle_id: Any, digest: Any, input: Any = None, *,
                   tool_name: str | None = None, session_id: str | None = None) -> dict[str, Any]:
        """Use the revision ``bundle_id``/``digest`` (see the module docstring)."""
        found = self.snapshot(project, bundle_id, digest)
        base = {"id": found.id, "digest": found.digest, "kind": found.kind}
        if found.kind == "skill":
            return {**base, "skill": found.files[found.entrypoint], "references": [
                {"path": path, "text": found.files[path]} for path in _references(found)]}
        value = {} if input is None else input
        if found.kind == "mcp":
            if not tool_name:
                raise ToolError("invalid_arguments", "tool_name: an MCP bundle's call names one of "
                                "its tools (extension_manage inspect lists them)")
            if not isinstance(value, dict):
                raise ToolError("invalid_arguments", "input: an MCP tool's arguments are an object")
        elif tool_name:
            raise ToolError("invalid_arguments", "tool_name: only an MCP bundle's call names a tool")
        try:
            check_input(found, value)
        except BundleError as exc:
            raise tool_error(exc) from None
        ran = await self._run(found, "call" if found.kind == "mcp" else "tool", value,
                              tool_name=tool_name or "", session_id=session_id)
        answer = {**base, "runtime": ran["runtime"], "result": ran["result"]}
        if ran["log"]:
            answer["log"] = ran["log"]
        return answer

    async def _run(self, bundle: Bundle, mode: str, value: Any, *, tool_name: str = "",
                   session_id: str | None) -> dict[str, Any]:
        from workbench.shell import network

        level = self.network(session_id)
        endpoints = tuple((e.host, tuple(int(p) for p in e.ports)) for e in network.endpoints(level))
        ran = await self.runner.run(bundle, mode=mode, input=value, tool_name=tool_name,
                                    timeout_s=bundle.timeout_ms / 1000, net=endpoints,
                                    proxied=bool(endpoints))
        if not ran.ok:
            raise ToolError("tool", f"the bundle {bundle.id} failed: {ran.error}"
                            + (f" (it printed: {ran.log[-2000:]})" if ran.log else ""),
                            runtime=ran.runtime)
        return {"result": ran.result, "log": ran.log, "runtime": ran.runtime}


def _checked(bundle: Any) -> Bundle:
    try:
        return check_bundle(bundle)
    except BundleError as exc:
        raise tool_error(exc) from None


def _references(bundle: Bundle) -> list[str]:
    """A skill's references: those its manifest lists, else its other ``.md``/``.txt`` files."""
    listed = bundle.manifest.get("references")
    if listed is not None:
        return list(listed)
    return sorted(p for p in bundle.files if p != bundle.entrypoint and p.endswith((".md", ".txt")))
